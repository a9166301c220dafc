"""The index reads a search makes, each one turning any backend fault into SearchUnavailable.

A search is several reads (hybrid queries, a BM25 query, first chunks, scrolls); any
transport or engine fault in one of them means "search is down" for the whole search, and
the page says so (status "unavailable") instead of failing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog

from enricher.errors import SearchUnavailable
from enricher.index import schema
from enricher.index.embedding import SparseVector
from enricher.index.engine import Filter, Hit, Index, Record

log = structlog.get_logger(__name__)

#: Doc id -> (best chunk score, that chunk's payload).
Best = dict[str, tuple[float, dict[str, Any]]]


def hybrid(
    index: Index, dense: list[float], sparse: SparseVector, flt: Filter, *, limit: int, rrf_k: int
) -> list[Hit]:
    try:
        return index.hybrid(dense, sparse, flt, limit=limit, rrf_k=rrf_k)
    except Exception as exc:  # any transport or engine fault means "search is down"
        raise unavailable(exc) from exc


def lexical(index: Index, sparse: SparseVector, flt: Filter, *, limit: int) -> Best:
    """Doc id -> (best chunk BM25 score, that chunk's payload)."""
    if not sparse.indices:
        return {}
    try:
        hits = index.sparse_search(sparse, flt, limit=limit)
    except Exception as exc:  # any transport or engine fault means "search is down"
        raise unavailable(exc) from exc
    best: Best = {}
    for point in hits:
        payload = point.payload
        doc = str(payload[schema.F_DOC_ID])
        if doc not in best or point.score > best[doc][0]:
            best[doc] = (point.score, payload)
    return best


def first_chunks(index: Index, docs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Doc id -> payload of its first chunk (the document's term sets live there)."""
    ids = [schema.point_id(doc, 0) for doc in docs]
    try:
        points = index.retrieve(ids)
    except Exception as exc:  # any transport or engine fault means "search is down"
        raise unavailable(exc) from exc
    out: dict[str, dict[str, Any]] = {}
    for point in points:
        out[str(point.payload[schema.F_DOC_ID])] = point.payload
    return out


def scroll(index: Index, flt: Filter, limit: int) -> list[Record]:
    try:
        points, _ = index.scroll(flt, limit)
    except Exception as exc:  # any transport or engine fault means "search is down"
        raise unavailable(exc) from exc
    return points


def best_by_doc(points: Sequence[Hit], dense: Sequence[float]) -> Best:
    """Doc id -> (best chunk cosine to `dense`, that chunk's payload), from the returned
    vectors (fused scores are ranks, not similarities)."""
    q = np.asarray(dense, dtype=np.float32)
    q_norm = float(np.linalg.norm(q)) or 1.0
    best: Best = {}
    for point in points:
        payload = point.payload
        vec = np.asarray(point.dense, dtype=np.float32)
        cos = float(vec @ q) / ((float(np.linalg.norm(vec)) or 1.0) * q_norm) if vec.size else 0.0
        doc = str(payload[schema.F_DOC_ID])
        if doc not in best or cos > best[doc][0]:
            best[doc] = (cos, payload)
    return best


def unavailable(exc: Exception) -> SearchUnavailable:
    log.warning("search.unavailable", error=type(exc).__name__, detail=str(exc)[:200])
    return SearchUnavailable(f"Qdrant query failed: {type(exc).__name__}")
