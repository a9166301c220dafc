"""The baseline a sync is measured against: fastembed alone over the texts the sync embeds,
in the sync's batches."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from enricher.index.embedding import Embedder
from ingest.chunking import chunk_markdown, embed_text
from ingest.sources import scan_root
from ingest.sync import UPSERT_BATCH, SyncOptions
from scripts.benchlib import cpu_seconds


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
