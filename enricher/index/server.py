"""`Index` on qdrant-client: a Qdrant server, cluster or Cloud (QDRANT_URL), or, in tests and
for comparison, qdrant-client's local mode standing in for the server's API."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

from qdrant_client import QdrantClient, models

from enricher.index.embedding import SparseVector
from enricher.index.engine import (
    EVERYTHING,
    OVERFETCH,
    AnyOf,
    Condition,
    Equals,
    Filter,
    Hit,
    IndexPoint,
    Record,
    Shape,
    best_first,
)
from enricher.index.schema import DENSE, SPARSE


def _condition(c: Condition) -> models.FieldCondition:
    if isinstance(c, Equals):
        return models.FieldCondition(key=c.key, match=models.MatchValue(value=c.value))
    if isinstance(c, AnyOf):
        return models.FieldCondition(key=c.key, match=models.MatchAny(any=list(c.values)))
    return models.FieldCondition(key=c.key, range=models.Range(gte=c.value))


def _filter(flt: Filter) -> models.Filter | None:
    if not flt.must and not flt.must_not:
        return None
    return models.Filter(
        must=[_condition(c) for c in flt.must] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


def _sparse(vector: SparseVector) -> models.SparseVector:
    return models.SparseVector(indices=vector.indices, values=vector.values)


def _hit(point: models.ScoredPoint) -> Hit:
    vectors = point.vector if isinstance(point.vector, dict) else {}
    dense = vectors.get(DENSE)
    return Hit(
        id=str(point.id),
        score=point.score,
        payload=dict(point.payload or {}),
        dense=[float(x) for x in dense] if isinstance(dense, list) else (),  # type: ignore[arg-type]
    )


class ServerIndex:
    engine = "qdrant-client"

    def __init__(self, client: QdrantClient, name: str) -> None:
        self.client = client
        self.name = name

    def exists(self) -> bool:
        return self.client.collection_exists(self.name)

    def create(self, dense_size: int) -> None:
        self.client.create_collection(
            collection_name=self.name,
            vectors_config={
                DENSE: models.VectorParams(size=dense_size, distance=models.Distance.COSINE)
            },
            # IDF is computed by Qdrant; without the modifier the scores are not BM25.
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )

    def shape(self) -> Shape:
        info = self.client.get_collection(self.name)
        vectors = info.config.params.vectors
        dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
        sparse = info.config.params.sparse_vectors or {}
        return Shape(
            dense_size=dense.size if dense is not None else None,
            has_sparse=SPARSE in sparse,
            indexed_fields=frozenset(info.payload_schema),
        )

    def create_keyword_index(self, field_name: str) -> None:
        with warnings.catch_warnings():
            # Local mode ignores payload indexes and says so; the server needs them.
            warnings.filterwarnings("ignore", message="Payload indexes have no effect")
            self.client.create_payload_index(
                self.name, field_name, models.PayloadSchemaType.KEYWORD
            )

    def metadata(self) -> dict[str, Any]:
        return dict(self.client.get_collection(self.name).config.metadata or {})

    def update_metadata(self, values: Mapping[str, Any]) -> None:
        # The server merges metadata keys.
        self.client.update_collection(self.name, metadata=dict(values))

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        structs = [
            models.PointStruct(
                id=p.id,
                vector={DENSE: list(p.dense), SPARSE: _sparse(p.sparse)},
                payload=dict(p.payload),
            )
            for p in points
        ]
        self.client.upsert(self.name, points=structs, wait=True)

    def delete(self, flt: Filter) -> None:
        selector = _filter(flt) or models.Filter()
        self.client.delete(self.name, points_selector=selector, wait=True)

    def set_payload(self, payload: Mapping[str, Any], flt: Filter) -> None:
        selector = _filter(flt) or models.Filter()
        self.client.set_payload(self.name, payload=dict(payload), points=selector, wait=True)

    def scroll(
        self,
        flt: Filter,
        limit: int,
        *,
        fields: Sequence[str] | None = None,
        offset: str | None = None,
    ) -> tuple[list[Record], str | None]:
        points, after = self.client.scroll(
            self.name,
            scroll_filter=_filter(flt),
            limit=limit,
            offset=offset,
            with_payload=list(fields) if fields is not None else True,
            with_vectors=False,
        )
        records = [Record(str(p.id), dict(p.payload or {})) for p in points]
        return records, str(after) if after is not None else None

    def retrieve(self, ids: Sequence[str]) -> list[Record]:
        points = self.client.retrieve(self.name, ids=list(ids), with_payload=True)
        return [Record(str(p.id), dict(p.payload or {})) for p in points]

    def points(self, flt: Filter) -> list[IndexPoint]:
        found: list[IndexPoint] = []
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.name, scroll_filter=_filter(flt), limit=256, offset=offset,
                with_payload=True, with_vectors=True,
            )
            for p in points:
                vectors = p.vector if isinstance(p.vector, dict) else {}
                dense, sparse = vectors[DENSE], vectors[SPARSE]
                assert isinstance(dense, list) and isinstance(sparse, models.SparseVector)
                found.append(
                    IndexPoint(
                        id=str(p.id),
                        dense=cast(list[float], dense),
                        sparse=SparseVector(list(sparse.indices), list(sparse.values)),
                        payload=dict(p.payload or {}),
                    )
                )
            if offset is None:
                return found

    def count(self, flt: Filter = EVERYTHING) -> int:
        return self.client.count(self.name, count_filter=_filter(flt), exact=True).count

    def hybrid(
        self,
        dense: Sequence[float],
        sparse: SparseVector,
        flt: Filter,
        *,
        limit: int,
        rrf_k: int,
    ) -> list[Hit]:
        condition = _filter(flt)
        response = self.client.query_points(
            self.name,
            prefetch=[
                models.Prefetch(query=list(dense), using=DENSE, limit=limit, filter=condition),
                models.Prefetch(query=_sparse(sparse), using=SPARSE, limit=limit, filter=condition),
            ],
            query=models.RrfQuery(rrf=models.Rrf(k=rrf_k)),
            limit=OVERFETCH * limit,
            with_payload=True,
            with_vectors=[DENSE],
        )
        return best_first(map(_hit, response.points), limit)

    def sparse_search(self, sparse: SparseVector, flt: Filter, *, limit: int) -> list[Hit]:
        response = self.client.query_points(
            self.name,
            query=_sparse(sparse),
            using=SPARSE,
            query_filter=_filter(flt),
            limit=OVERFETCH * limit,
            with_payload=True,
        )
        return best_first(map(_hit, response.points), limit)

    def optimize(self) -> None:
        """A server builds its indexes in the background; nothing to do here."""

    def close(self) -> None:
        self.client.close()
