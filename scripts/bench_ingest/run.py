"""The ingest benchmark's run: the corpus in slices, the full sync alternating with the raw
pass, the re-syncs over unchanged, edited and flushed input, and the int8 model; it collects
the JSON result and the correctness failures."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from enricher.index.connect import open_index
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.sync import Syncer, SyncOptions
from scripts.bench_ingest.raw import RawRun, embed_texts, raw_fastembed
from scripts.bench_ingest.sync_runs import (
    CountingEmbedder,
    SyncRun,
    combined,
    sync_dict,
    timed_sync,
)
from scripts.benchlib import MODELS_DIR, machine, note, peak_rss_mb
from scripts.corpus_gen import runbooks, write_corpus
from scripts.local_redis import running_redis

SEED = 7
#: Every 20th document gets one paragraph edited for the "changed" re-sync.
EDIT_EVERY = 20
#: The full sync and the raw fastembed pass alternate over this many slices of the corpus.
PARTS = 4


def edit_documents(root: Path) -> int:
    """Change one paragraph (the Impact section) of every EDIT_EVERY-th document."""
    paths = sorted(root.rglob("*.md"))
    edited = 0
    for path in paths[::EDIT_EVERY]:
        text = path.read_text(encoding="utf-8")
        marker = "## Impact\n\n"
        if marker in text:
            text = text.replace(marker, marker + "Reviewed after the last game day. ", 1)
            path.write_text(text, encoding="utf-8")
            edited += 1
    return edited


def run(docs: int, int8_docs: int) -> tuple[dict[str, Any], list[str]]:
    failures: list[str] = []
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        books = runbooks(docs, seed=SEED)
        roots = [work / f"runbooks-{k + 1}" for k in range(PARTS)]
        for n, book in enumerate(books):
            path = roots[n * PARTS // docs] / book.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(book.text, encoding="utf-8")
        words = [b.words for b in books]
        note(f"generated {docs} runbooks in {time.perf_counter() - started:.1f} s")
        with running_redis(work) as redis_server:
            settings = Settings(
                models_dir=MODELS_DIR,
                qdrant_path=work / "qdrant",
                redis_url=redis_server.url,
                qdrant_collection="bench",
            )
            started = time.perf_counter()
            embedder = CountingEmbedder(settings)
            load_s = time.perf_counter() - started
            # Warm up ONNX (first-call allocations) so no measurement pays for it.
            embedder.dense(["warm up the dense model"] * 32)
            embedder.sparse(["warm up the sparse model"] * 32)
            embedder.dense_texts = 0
            index = open_index(settings)
            cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
            syncer = Syncer(index, embedder, cache)

            # The full sync and the raw pass alternate over PARTS slices of the corpus (one
            # root each), so both see the same machine: on a shared host the load drifts.
            parts: list[SyncRun] = []
            raw = RawRun()
            slices: list[dict[str, float]] = []
            texts: list[str] = []
            for k, root in enumerate(roots):
                part, _ = timed_sync(f"full sync {k + 1}/{PARTS}", syncer, embedder, [root])
                parts.append(part)
                part_texts = embed_texts(root, SyncOptions.from_settings(Settings(), roots=[root]))
                if len(part_texts) != part.chunks:
                    failures.append(
                        f"rebuilt {len(part_texts)} embed texts for {root.name} but its sync "
                        f"embedded {part.chunks}"
                    )
                part_raw = raw_fastembed(embedder, part_texts)
                raw.add(part_raw)
                texts += part_texts
                part_raw_s = part_raw.dense_s + part_raw.sparse_s
                slices.append({
                    "sync_s": part.seconds,
                    "sync_cores": round(part.cpu_s / part.seconds, 2),
                    "raw_s": round(part_raw_s, 2),
                    "raw_cores": round(part_raw.cpu_s / part_raw_s, 2),
                    "sync_vs_raw": round(part_raw_s / part.seconds, 3),
                })
            full = combined("full sync", parts)
            raw_s = raw.dense_s + raw.sparse_s
            note(f"full sync {full.seconds:.1f} s, raw fastembed {raw_s:.1f} s")
            rss_after_sync = peak_rss_mb()
            points = index.count()
            if points != full.chunks:
                failures.append(
                    f"collection holds {points} points but the sync indexed {full.chunks} chunks"
                )
            unchanged, _ = timed_sync("unchanged re-sync", syncer, embedder, roots)
            if unchanged.embedded or unchanged.model_embedded:
                failures.append(
                    f"unchanged re-sync embedded {unchanged.embedded} chunk(s) "
                    f"({unchanged.model_embedded} by the model); it must embed 0"
                )
            edited_docs = sum(edit_documents(root) for root in roots)
            edited, _ = timed_sync(f"re-sync, {edited_docs} docs edited", syncer, embedder, roots)
            warm_index = open_index(settings.model_copy(
                update={"qdrant_collection": "bench_warm_cache"}))
            warm = Syncer(warm_index, embedder, cache)
            warm_run, _ = timed_sync("fresh collection, warm cache", warm, embedder, roots)
            warm_index.close()
            redis_server.flush()
            flushed, _ = timed_sync("unchanged re-sync, Redis flushed", syncer, embedder, roots)
            if flushed.embedded or flushed.model_embedded:
                failures.append(
                    f"re-sync after a Redis flush embedded {flushed.embedded} chunk(s); "
                    "ingest/sync.py documents that unchanged documents are skipped"
                )
            index.close()
            int8 = _int8_sync(work, int8_docs, redis_server.url) if int8_docs else None

    full_dict = sync_dict(full)
    result: dict[str, Any] = {
        "benchmark": "ingest",
        "machine": machine(),
        "load_avg_start": [round(x, 2) for x in load_start],
        "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "corpus": {
            "docs": docs,
            "seed": SEED,
            "words_min": min(words),
            "words_mean": round(sum(words) / len(words)),
            "words_max": max(words),
            "chunks": full.chunks,
            "chunks_per_doc": round(full.chunks / docs, 2),
            "mean_embed_text_chars": round(sum(map(len, texts)) / len(texts)),
        },
        "model_load_s": round(load_s, 2),
        "full_sync": full_dict,
        "parts": PARTS,
        "slices": slices,
        "full_sync_vs_raw_median_slice": round(
            statistics.median(x["sync_vs_raw"] for x in slices), 3
        ),
        "raw_fastembed": raw.to_dict(),
        "full_sync_vs_raw": round(full.chunks_per_s / (raw.chunks / raw_s), 3),
        "sync_overhead_s": round(full.seconds - raw_s, 1),
        "unchanged_resync": sync_dict(unchanged),
        "edited_resync": sync_dict(edited),
        "warm_cache_fresh_collection": sync_dict(warm_run),
        "flushed_redis_resync": sync_dict(flushed),
        "int8_full_sync": int8,
        "peak_rss_mb_after_full_sync": rss_after_sync,
        "peak_rss_mb_end": peak_rss_mb(),
        "failures": failures,
    }
    return result, failures


def _int8_sync(work: Path, docs: int, redis_url: str) -> dict[str, Any]:
    """Full sync of the corpus's first `docs` documents with the int8 model, no cache."""
    root = work / "int8-runbooks"
    write_corpus(root, docs, seed=SEED)
    settings = Settings(
        models_dir=MODELS_DIR, qdrant_path=work / "qdrant-int8", embed_int8=True,
        redis_url=redis_url, qdrant_collection="bench_int8",
    )
    embedder = CountingEmbedder(settings)
    embedder.dense(["warm up the dense model"] * 32)
    index = open_index(settings)
    syncer = Syncer(index, embedder, EmbeddingCache(None, "none"))
    result, _ = timed_sync(f"int8 full sync, {docs} docs", syncer, embedder, [root])
    index.close()
    return sync_dict(result)
