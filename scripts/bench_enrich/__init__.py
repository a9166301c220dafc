"""The enrichment benchmark (`python -m scripts.bench_enrich`): ack, search and end-to-end
latency of the real service at several index sizes, and the ack under a burst."""
