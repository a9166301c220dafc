"""Ingest benchmark: `make bench-ingest` (`python -m scripts.bench_ingest [--docs N] [--out F]`).

Generates a synthetic corpus (scripts/corpus_gen.py), starts a private redis-server and
syncs into embedded Qdrant in a temp dir, with the real offline models. It reports; it never
asserts a speed. It exits non-zero only on correctness failures: a re-sync over unchanged
input that embeds anything, or an index that does not hold what the sync says it wrote.

The full sync and the raw fastembed pass over the same texts alternate slice by slice, so
both see the same machine (on a shared host the load drifts within minutes); the embedder
is wrapped to time its calls, which splits the sync into model time and everything else.

Every measurement runs in this one process, so peak RSS (ru_maxrss, a high-water mark)
is reported after the full sync and raw passes, and again at the end, once the int8 model
has also run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from enricher import logs
from enricher.index import schema
from enricher.index.embedding import Embedder, SparseVector
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.chunking import chunk_markdown, embed_text
from ingest.sources import scan_root
from ingest.sync import UPSERT_BATCH, Syncer, SyncOptions, SyncReport
from scripts.corpus_gen import runbooks, write_corpus
from scripts.local_redis import running_redis

REPO = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(os.environ.get("MODELS_DIR", REPO / "models"))
SEED = 7
#: Every 20th document gets one paragraph edited for the "changed" re-sync.
EDIT_EVERY = 20
#: The full sync and the raw fastembed pass alternate over this many slices of the corpus.
PARTS = 4


# --- shared with bench_enrich --------------------------------------------------------------


def emit(result: dict[str, Any], out: Path | None, failures: Sequence[str]) -> int:
    """The JSON line on stdout (and in `out`), failures on stderr; the exit status."""
    line = json.dumps(result, sort_keys=True)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(line + "\n")
    print(line)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


def peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def cpu_seconds() -> float:
    """CPU time of this process, all threads: divided by wall time it shows how much of
    the machine the benchmark actually got (2.0 = both cores of a quiet 2-core machine)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as info:
        mem_kib = int(next(line for line in info if line.startswith("MemTotal")).split()[1])
    versions = {
        name: importlib.metadata.version(name)
        for name in ("qdrant-client", "fastembed", "onnxruntime", "numpy", "redis", "uvicorn")
    }
    return {
        "date": datetime.now(UTC).date().isoformat(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(mem_kib / 1024**2, 1),
        "python": platform.python_version(),
        "redis_server": _redis_version(),
        **versions,
    }


def _redis_version() -> str:
    out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    return next((p.split("=", 1)[1] for p in out.split() if p.startswith("v=")), "unknown")


def print_table(title: str, rows: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}")
    print("-" * len(title))
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


def note(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


class CountingEmbedder(Embedder):
    """The real embedder, counting the texts that actually reach the dense model and the
    time spent in each model.

    SyncReport.embedded counts cached chunks too; `dense_texts` is the ground truth for
    "the re-sync computed no embeddings". The times split a sync into model and the rest.
    """

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.dense_texts = 0
        self.dense_s = 0.0
        self.sparse_s = 0.0

    def dense(self, texts: Sequence[str], batch_size: int = 32) -> list[list[float]]:
        self.dense_texts += len(texts)
        started = time.perf_counter()
        vectors = super().dense(texts, batch_size)
        self.dense_s += time.perf_counter() - started
        return vectors

    def sparse(self, texts: Sequence[str]) -> list[SparseVector]:
        started = time.perf_counter()
        vectors = super().sparse(texts)
        self.sparse_s += time.perf_counter() - started
        return vectors


# --- the benchmark --------------------------------------------------------------------------


@dataclass
class SyncRun:
    label: str
    seconds: float
    docs: int
    chunks: int
    embedded: int
    from_cache: int
    model_embedded: int
    skipped: int
    cpu_s: float
    #: Inside the sync: seconds in the dense model, in BM25, and in everything else.
    dense_s: float
    sparse_s: float
    other_s: float
    #: Peak RSS of the process (MiB) once this step is done.
    peak_rss_mb: float

    @property
    def docs_per_s(self) -> float:
        return self.docs / self.seconds if self.seconds else 0.0

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


def timed_sync(
    label: str, syncer: Syncer, embedder: CountingEmbedder, roots: list[Path]
) -> tuple[SyncRun, SyncReport]:
    before = embedder.dense_texts
    dense_before, sparse_before = embedder.dense_s, embedder.sparse_s
    cpu = cpu_seconds()
    started = time.perf_counter()
    report = syncer.run(SyncOptions.from_settings(Settings(), roots=roots, use_git=False))
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu
    if report.errors:
        raise SystemExit(f"{label}: the sync reported source errors: {report.errors[:3]}")
    run = SyncRun(
        label=label,
        seconds=round(seconds, 3),
        docs=report.indexed_docs,
        chunks=report.indexed_chunks,
        embedded=report.embedded,
        from_cache=report.from_cache,
        model_embedded=embedder.dense_texts - before,
        skipped=report.skipped,
        cpu_s=round(cpu, 1),
        dense_s=round(embedder.dense_s - dense_before, 2),
        sparse_s=round(embedder.sparse_s - sparse_before, 2),
        other_s=round(
            seconds - (embedder.dense_s - dense_before) - (embedder.sparse_s - sparse_before), 2
        ),
        peak_rss_mb=peak_rss_mb(),
    )
    note(f"{label}: {seconds:.1f} s ({cpu / seconds:.2f} cores); {report.summary()}")
    return run, report


def embed_texts(root: Path, options: SyncOptions) -> list[str]:
    """The texts the sync embeds, built the way ingest/sync.py builds them."""
    texts: list[str] = []
    for doc in scan_root(root, use_git=False).documents:
        chunks = chunk_markdown(
            doc.body, max_chars=options.chunk_max_chars, min_chars=options.chunk_min_chars
        )
        texts.extend(embed_text(doc.title, doc.alert_names, chunk) for chunk in chunks)
    return texts


@dataclass
class RawRun:
    chunks: int = 0
    dense_s: float = 0.0
    sparse_s: float = 0.0
    cpu_s: float = 0.0

    def add(self, other: RawRun) -> None:
        self.chunks += other.chunks
        self.dense_s += other.dense_s
        self.sparse_s += other.sparse_s
        self.cpu_s += other.cpu_s

    def to_dict(self) -> dict[str, float]:
        total = self.dense_s + self.sparse_s
        return {
            "chunks": self.chunks,
            "dense_s": round(self.dense_s, 3),
            "sparse_s": round(self.sparse_s, 3),
            "total_s": round(total, 3),
            "dense_chunks_per_s": round(self.chunks / self.dense_s, 1),
            "sparse_chunks_per_s": round(self.chunks / self.sparse_s, 1),
            "chunks_per_s": round(self.chunks / total, 1),
            "cores_used": round(self.cpu_s / total, 2),
        }


def raw_fastembed(embedder: Embedder, texts: list[str]) -> RawRun:
    """Dense + sparse over the same texts, in the sync's batches (UPSERT_BATCH, dense 32)."""
    run = RawRun(chunks=len(texts))
    cpu = cpu_seconds()
    for start in range(0, len(texts), UPSERT_BATCH):
        batch = texts[start : start + UPSERT_BATCH]
        t0 = time.perf_counter()
        embedder.dense(batch)
        t1 = time.perf_counter()
        embedder.sparse(batch)
        t2 = time.perf_counter()
        run.dense_s += t1 - t0
        run.sparse_s += t2 - t1
    run.cpu_s = cpu_seconds() - cpu
    return run


def combined(label: str, runs: list[SyncRun]) -> SyncRun:
    """Several syncs reported as one."""
    return SyncRun(
        label=label,
        **{
            name: round(sum(getattr(r, name) for r in runs), 3)
            for name in ("seconds", "docs", "chunks", "embedded", "from_cache", "model_embedded",
                         "skipped", "cpu_s", "dense_s", "sparse_s", "other_s")
        },
        peak_rss_mb=max(r.peak_rss_mb for r in runs),
    )


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
            client = schema.open_client(settings)
            cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
            syncer = Syncer(client, settings.qdrant_collection, embedder, cache)

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
            points = client.count(settings.qdrant_collection, exact=True).count
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
            warm = Syncer(client, "bench_warm_cache", embedder, cache)
            warm_run, _ = timed_sync("fresh collection, warm cache", warm, embedder, roots)
            redis_server.flush()
            flushed, _ = timed_sync("unchanged re-sync, Redis flushed", syncer, embedder, roots)
            if flushed.embedded or flushed.model_embedded:
                failures.append(
                    f"re-sync after a Redis flush embedded {flushed.embedded} chunk(s); "
                    "ingest/sync.py documents that unchanged documents are skipped"
                )
            client.close()
            int8 = _int8_sync(work, int8_docs, redis_server.url) if int8_docs else None

    full_dict = _sync_dict(full)
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
        "unchanged_resync": _sync_dict(unchanged),
        "edited_resync": _sync_dict(edited),
        "warm_cache_fresh_collection": _sync_dict(warm_run),
        "flushed_redis_resync": _sync_dict(flushed),
        "int8_full_sync": int8,
        "peak_rss_mb_after_full_sync": rss_after_sync,
        "peak_rss_mb_end": peak_rss_mb(),
        "failures": failures,
    }
    return result, failures


def _sync_dict(run: SyncRun) -> dict[str, Any]:
    out = asdict(run)
    out.pop("label")
    out["docs_per_s"] = round(run.docs_per_s, 2)
    out["chunks_per_s"] = round(run.chunks_per_s, 1)
    out["cores_used"] = round(run.cpu_s / run.seconds, 2) if run.seconds else 0.0
    return out


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
    client = schema.open_client(settings)
    syncer = Syncer(client, settings.qdrant_collection, embedder, EmbeddingCache(None, "none"))
    result, _ = timed_sync(f"int8 full sync, {docs} docs", syncer, embedder, [root])
    client.close()
    return _sync_dict(result)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_ingest", description=__doc__)
    parser.add_argument("--docs", type=int, default=1000, help="runbooks to generate")
    parser.add_argument(
        "--int8-docs", type=int, default=200,
        help="documents for the int8 full sync (0 skips it)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logs.configure(json=False, level="WARNING")
    result, failures = run(args.docs, min(args.int8_docs, args.docs))
    report(result)
    return emit(result, args.out, failures)


if __name__ == "__main__":
    sys.exit(main())
