"""The ingest benchmark (`python -m scripts.bench_ingest`): full and incremental syncs of a
synthetic corpus, set against the raw fastembed pass over the same texts."""
