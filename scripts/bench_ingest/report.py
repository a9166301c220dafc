"""The ingest benchmark's table on stdout, read from the JSON result."""

from __future__ import annotations

from typing import Any

from scripts.benchlib import print_table


def report(result: dict[str, Any]) -> None:
    corpus, full, raw = result["corpus"], result["full_sync"], result["raw_fastembed"]
    m = result["machine"]
    print_table(
        f"Ingest benchmark ({m['date']}, {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
        f"load avg {result['load_avg_start'][0]} at start, {result['load_avg_end'][0]} at end)",
        [
            ("corpus", f"{corpus['docs']} runbooks, {corpus['words_min']}-{corpus['words_max']} "
                       f"words (mean {corpus['words_mean']}), {corpus['chunks']} chunks "
                       f"({corpus['chunks_per_doc']}/doc, {corpus['mean_embed_text_chars']} "
                       "chars each)"),
            ("model load", f"{result['model_load_s']} s"),
            ("full sync (empty cache)", f"{full['seconds']} s: {full['docs_per_s']} docs/s, "
                                        f"{full['chunks_per_s']} chunks/s "
                                        f"({full['cores_used']} cores busy)"),
            ("raw fastembed, same texts", f"{raw['total_s']} s: {raw['chunks_per_s']} chunks/s "
                                          f"(dense {raw['dense_chunks_per_s']}/s, sparse "
                                          f"{raw['sparse_chunks_per_s']}/s; "
                                          f"{raw['cores_used']} cores busy)"),
            ("full sync / raw", f"{result['full_sync_vs_raw']} overall, "
                                f"{result['full_sync_vs_raw_median_slice']} median of "
                                f"{result['parts']} alternating slices (sync overhead "
                                f"{result['sync_overhead_s']} s)"),
            *[
                (f"  slice {n}", f"sync {x['sync_s']} s on {x['sync_cores']} cores, raw "
                                 f"{x['raw_s']} s on {x['raw_cores']} cores: {x['sync_vs_raw']}")
                for n, x in enumerate(result["slices"], start=1)
            ],
            ("  full sync, split", f"dense model {full['dense_s']} s, BM25 {full['sparse_s']} s, "
                                   f"everything else {full['other_s']} s"),
            *[
                (label, f"{r['seconds']} s: {r['docs']} docs upserted, embedded {r['embedded']} "
                        f"({r['from_cache']} from cache, {r['model_embedded']} by the model), "
                        f"{r['skipped']} skipped")
                for label, r in (
                    ("unchanged re-sync", result["unchanged_resync"]),
                    ("re-sync, 5% docs edited", result["edited_resync"]),
                    ("fresh collection, warm cache", result["warm_cache_fresh_collection"]),
                    ("re-sync after Redis flush", result["flushed_redis_resync"]),
                )
            ],
            ("int8 full sync", "skipped" if result["int8_full_sync"] is None else
             f"{result['int8_full_sync']['docs']} docs in {result['int8_full_sync']['seconds']} "
             f"s: {result['int8_full_sync']['docs_per_s']} docs/s, "
             f"{result['int8_full_sync']['chunks_per_s']} chunks/s "
             f"({result['int8_full_sync']['cores_used']} cores busy)"),
            ("peak RSS (MiB)", f"{result['peak_rss_mb_after_full_sync']} after the full sync "
                               f"and raw passes, {result['peak_rss_mb_end']} at the end "
                               "(int8 model loaded too)"),
            ("failures", "; ".join(result["failures"]) or "none"),
        ],
    )
