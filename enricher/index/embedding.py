"""The embedders: dense (all-MiniLM-L6-v2 via fastembed/ONNX) and sparse (fastembed BM25).

Both are loaded from disk only. `HF_HUB_OFFLINE=1` is set before fastembed is imported so a
missing model fails at once instead of retrying the hub for ~40 s. A missing or incomplete
model directory is a startup error that names the command which builds it.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from enricher.errors import ConfigError
from enricher.settings import Settings

DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DENSE_DIM = 384
SPARSE_MODEL = "Qdrant/bm25"
STOPWORDS_DIR = Path(__file__).with_name("bm25")
_REQUIRED_DENSE_FILES = ("model.onnx", "tokenizer.json", "config.json", "tokenizer_config.json")
#: mallopt's parameter for the mmap threshold (glibc malloc.h), and glibc's starting value.
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD_BYTES = 128 * 1024


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class ModelIdentity:
    """What produced the vectors. Stored with the collection; two identities never mix."""

    dense: str
    dense_dim: int
    sparse: str

    @property
    def key(self) -> str:
        return f"{self.dense}|{self.dense_dim}|{self.sparse}"


def dense_model_dir(settings: Settings) -> Path:
    name = "all-MiniLM-L6-v2-int8" if settings.embed_int8 else "all-MiniLM-L6-v2"
    return settings.models_dir / name


def _stopwords_fingerprint(directory: Path) -> str:
    path = directory / "english.txt"
    words = [w.strip() for w in path.read_text().splitlines() if w.strip()] if path.exists() else []
    if not words:
        raise ConfigError(
            f"BM25 stopword file {path} is missing or empty; without it BM25 silently "
            "indexes every 'the' and 'and'. Restore it from git: "
            "`git checkout -- enricher/index/bm25`."
        )
    return hashlib.sha256("\n".join(sorted(words)).encode()).hexdigest()[:12]


def model_identity(settings: Settings) -> ModelIdentity:
    variant = "int8" if settings.embed_int8 else "fp32"
    dense = f"{DENSE_MODEL}@hub" if settings.embed_from_hub else f"{DENSE_MODEL}@{variant}"
    sparse = f"{SPARSE_MODEL}@stopwords:{_stopwords_fingerprint(STOPWORDS_DIR)}"
    return ModelIdentity(dense=dense, dense_dim=DENSE_DIM, sparse=sparse)


def check_dense_dir(directory: Path) -> None:
    missing = [name for name in _REQUIRED_DENSE_FILES if not (directory / name).is_file()]
    if missing:
        raise ConfigError(
            f"dense model directory {directory} is missing {', '.join(missing)}. "
            "Build the offline models with `make models` (or set MODELS_DIR to where they are)."
        )


def give_back_large_buffers() -> None:
    """Have glibc return each large freed block to the system at once.

    A batch of 32 chunks runs on activations of 10-100 MB. glibc serves a block that large
    with mmap and unmaps it when freed, but each such free raises its threshold (up to
    32 MiB), so the next blocks of that size come from the heap and stay resident once
    freed: after one sync the idle service kept about 380 MB of them. Setting the threshold
    pins it at glibc's own starting value. Process-wide, and a no-op where malloc is not
    glibc's (musl, macOS).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES)


class Embedder:
    """Dense + sparse embedding with the project's offline models. Load once, reuse."""

    def __init__(self, settings: Settings) -> None:
        self.identity = model_identity(settings)
        if not settings.embed_from_hub:
            os.environ["HF_HUB_OFFLINE"] = "1"
        # Imported late so HF_HUB_OFFLINE is in place before huggingface_hub reads it.
        from fastembed import SparseTextEmbedding, TextEmbedding

        # Without onnxruntime's CPU arena, which keeps the high-water mark of every batch
        # it has run (about 500 MB more for good after the first sync), and with glibc told
        # to give large blocks back, the idle service goes from 850 MB to 260 MB; queries are
        # as fast, batches about 10 % slower (docs/PERFORMANCE.md).
        give_back_large_buffers()
        if settings.embed_from_hub:
            self._dense = TextEmbedding(DENSE_MODEL, enable_cpu_mem_arena=False)
        else:
            directory = dense_model_dir(settings)
            check_dense_dir(directory)
            self._dense = TextEmbedding(
                DENSE_MODEL, specific_model_path=str(directory), enable_cpu_mem_arena=False
            )
        self._sparse = SparseTextEmbedding(SPARSE_MODEL, specific_model_path=str(STOPWORDS_DIR))

    def dense(self, texts: Sequence[str], batch_size: int = 32) -> list[list[float]]:
        return [v.tolist() for v in self._dense.embed(list(texts), batch_size=batch_size)]

    def sparse(self, texts: Sequence[str]) -> list[SparseVector]:
        return [
            SparseVector(indices=v.indices.tolist(), values=[float(x) for x in v.values])
            for v in self._sparse.embed(list(texts))
        ]

    def sparse_query(self, text: str) -> SparseVector:
        # query_embed returns int64 weights (all 1s); Qdrant wants floats.
        vec = next(iter(self._sparse.query_embed(text)))
        return SparseVector(indices=vec.indices.tolist(), values=[float(x) for x in vec.values])

    def dense_query(self, text: str) -> list[float]:
        return [float(x) for x in next(iter(self._dense.query_embed(text)))]
