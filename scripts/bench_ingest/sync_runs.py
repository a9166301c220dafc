"""One timed sync: the embedder wrapper that splits it into model time and the rest, and the
record of what the sync did."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from enricher.index.embedding import Embedder, SparseVector
from enricher.settings import Settings
from ingest.sync import Syncer, SyncOptions, SyncReport
from scripts.benchlib import cpu_seconds, note, peak_rss_mb


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


def sync_dict(run: SyncRun) -> dict[str, Any]:
    """A sync as it appears in the JSON result."""
    out = asdict(run)
    out.pop("label")
    out["docs_per_s"] = round(run.docs_per_s, 2)
    out["chunks_per_s"] = round(run.chunks_per_s, 1)
    out["cores_used"] = round(run.cpu_s / run.seconds, 2) if run.seconds else 0.0
    return out
