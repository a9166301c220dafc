"""The index seam: what `ingest` and `enricher.search` ask of a Qdrant engine.

Two engines implement `Index`, and one contract suite (tests/enricher/index/test_contract.py)
runs the same cases against both:

- `enricher.index.edge.EdgeIndex`: qdrant-edge, Qdrant's Rust engine inside the process, at
  QDRANT_PATH. The default.
- `enricher.index.server.ServerIndex`: qdrant-client against a Qdrant server or cluster
  (QDRANT_URL). Its local mode (`QdrantClient(path=...)`) stands in for the server in tests.

The seam speaks plain data (the filters, points and hits below) so neither engine's model
classes leak into search or ingest. Only what the product uses is here: must / must_not
filters on keyword and integer fields, one hybrid query (dense + BM25 prefetch fused by RRF
with an explicit k), one BM25 query, scroll, retrieve, points with their vectors, count,
upsert, delete and set_payload by filter, and a small metadata document kept with the index
(model identity, corpus stats).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from enricher.index.embedding import SparseVector


@dataclass(frozen=True)
class Equals:
    """The field equals `value` (for a list field: holds it)."""

    key: str
    value: str | int


@dataclass(frozen=True)
class AnyOf:
    """The field equals (or, for a list field, holds) one of `values`."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class AtLeast:
    """The numeric field is >= `value`."""

    key: str
    value: int


Condition = Equals | AnyOf | AtLeast


@dataclass(frozen=True)
class Filter:
    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()


EVERYTHING = Filter()


@dataclass(frozen=True)
class IndexPoint:
    id: str
    dense: Sequence[float]
    sparse: SparseVector
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class Record:
    id: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Hit:
    id: str
    score: float
    payload: dict[str, Any]
    #: The dense vector of the chunk, when the query asked for it.
    dense: Sequence[float] = field(default=())


#: How many more hits than asked for a query reads before cutting to the limit: enough to
#: hold every chunk the fused query ranks (two prefetches of `limit` each).
OVERFETCH = 2


def best_first(hits: Iterable[Hit], limit: int) -> list[Hit]:
    """The `limit` best hits, equal scores ordered by point id.

    Engines order equal scores each their own way; qdrant-edge even differently from one
    call to the next (segments are searched in parallel). RRF scores tie often (rank 3 in
    one retriever only equals rank 3 in the other), so without this the last candidates
    of a pool, and the leads a page names, would depend on the engine and on chance.
    """
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


@dataclass(frozen=True)
class Shape:
    """What the stored vectors are, as the engine reports it."""

    dense_size: int | None
    has_sparse: bool
    indexed_fields: frozenset[str]


class Index(Protocol):
    """One collection (a server collection, or one edge shard)."""

    @property
    def name(self) -> str: ...

    @property
    def engine(self) -> str: ...

    def exists(self) -> bool: ...

    def create(self, dense_size: int) -> None:
        """Create the collection: the cosine dense vector and the IDF-modified sparse one
        named in enricher.index.schema."""

    def shape(self) -> Shape: ...

    def create_keyword_index(self, field_name: str) -> None: ...

    def metadata(self) -> dict[str, Any]: ...

    def update_metadata(self, values: Mapping[str, Any]) -> None:
        """Merge `values` into the stored metadata, durably."""

    def upsert(self, points: Sequence[IndexPoint]) -> None: ...

    def delete(self, flt: Filter) -> None: ...

    def set_payload(self, payload: Mapping[str, Any], flt: Filter) -> None: ...

    def scroll(
        self,
        flt: Filter,
        limit: int,
        *,
        fields: Sequence[str] | None = None,
        offset: str | None = None,
    ) -> tuple[list[Record], str | None]:
        """Up to `limit` records (payload `fields` only, all when None) and the next offset."""

    def retrieve(self, ids: Sequence[str]) -> list[Record]: ...

    def points(self, flt: Filter) -> list[IndexPoint]:
        """Every point `flt` selects, with its vectors: what a document's chunks are copied
        from when its id changes (ingest.migrate), so that nothing is embedded again."""

    def count(self, flt: Filter = EVERYTHING) -> int: ...

    def hybrid(
        self,
        dense: Sequence[float],
        sparse: SparseVector,
        flt: Filter,
        *,
        limit: int,
        rrf_k: int,
    ) -> list[Hit]:
        """Dense and sparse prefetch (each `limit` wide, both filtered) fused by RRF(k): the
        `limit` best (`best_first`), with payloads and dense vectors (fused scores are
        ranks, not similarities)."""

    def sparse_search(self, sparse: SparseVector, flt: Filter, *, limit: int) -> list[Hit]:
        """The `limit` best chunks by BM25 (`best_first`)."""

    def optimize(self) -> None:
        """Build the engine's search indexes now (edge: HNSW; a server does it itself)."""

    def close(self) -> None: ...
