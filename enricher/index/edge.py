"""`Index` on qdrant-edge: Qdrant's Rust engine in the process, one shard folder per collection.

Facts this module is built around (measured with qdrant-edge-py 0.9.0, docs/PERFORMANCE.md):

- One open handle per shard folder, even within one process: a second `load` fails on the
  WAL lock. The WAL stays on (without it two handles silently diverge), so a folder has one
  owner, and the error says who that is likely to be.
- Calls hold the GIL. Queries take well under a millisecond to a few; upserts of a batch a
  few ms; `optimize()` (HNSW) seconds, so only offline tools call it (`python -m ingest`),
  never the serving process. Without HNSW the shard searches its plain segments exactly,
  which at the sizes measured here is still ~2 ms.
- The engine has no collection metadata, so the model identity and corpus statistics live
  in a JSON file beside the segments, replaced atomically, written after a flush of the
  points it describes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from enricher.errors import ConfigError
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

#: Written by the engine when a shard is created; its presence means "a shard lives here".
_ENGINE_CONFIG = "edge_config.json"
METADATA_FILE = "enricher-metadata.json"


def _condition(c: Condition) -> qe.FieldCondition:
    if isinstance(c, Equals):
        return qe.FieldCondition(key=c.key, match=qe.MatchValue(c.value))
    if isinstance(c, AnyOf):
        return qe.FieldCondition(key=c.key, match=qe.MatchAny(list(c.values)))
    return qe.FieldCondition(key=c.key, range=qe.RangeFloat(gte=float(c.value)))


def _filter(flt: Filter) -> qe.Filter | None:
    if not flt.must and not flt.must_not:
        return None
    return qe.Filter(
        must=[_condition(c) for c in flt.must] or None,
        must_not=[_condition(c) for c in flt.must_not] or None,
    )


def _sparse(vector: SparseVector) -> qe.SparseVector:
    return qe.SparseVector(vector.indices, vector.values)


def _hit(point: qe.ScoredPoint) -> Hit:
    vectors = point.vector if isinstance(point.vector, dict) else {}
    dense = vectors.get(DENSE, ())
    return Hit(
        id=str(point.id),
        score=point.score,
        payload=dict(point.payload or {}),
        dense=dense if isinstance(dense, list) else (),  # type: ignore[arg-type]
    )


def _point(point_id: object, vector: object, payload: object) -> IndexPoint:
    vectors = vector if isinstance(vector, dict) else {}
    sparse = vectors[SPARSE]
    return IndexPoint(
        id=str(point_id),
        dense=list(vectors[DENSE]),
        sparse=SparseVector(list(sparse.indices), list(sparse.values)),
        payload=dict(payload) if isinstance(payload, dict) else {},
    )


def is_shard(path: Path) -> bool:
    return (path / _ENGINE_CONFIG).is_file()


class EdgeIndex:
    engine = "qdrant-edge"

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        self._shard: qe.EdgeShard | None = _load(path) if is_shard(path) else None

    @property
    def shard(self) -> qe.EdgeShard:
        if self._shard is None:
            raise ConfigError(
                f"no qdrant-edge shard at {self.path}: index the runbooks first with "
                "`make ingest` (python -m ingest --root DIR), or set RUNBOOK_ROOTS so the "
                "service syncs them itself"
            )
        return self._shard

    def exists(self) -> bool:
        return self._shard is not None

    def create(self, dense_size: int) -> None:
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dense_size, distance=qe.Distance.Cosine)},
            # IDF is computed by the engine; without the modifier the scores are not BM25.
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        self.path.mkdir(parents=True, exist_ok=True)
        self._shard = qe.EdgeShard.create(str(self.path), config)

    def shape(self) -> Shape:
        config = json.loads((self.path / _ENGINE_CONFIG).read_text())
        dense = config.get("vectors", {}).get(DENSE)
        sparse = config.get("sparse_vectors", {}).get(SPARSE)
        return Shape(
            dense_size=int(dense["size"]) if dense else None,
            has_sparse=bool(sparse) and sparse.get("modifier") == "idf",
            indexed_fields=frozenset(self.shard.info().payload_schema),
        )

    def create_keyword_index(self, field_name: str) -> None:
        self.shard.update(
            qe.UpdateOperation.create_field_index(field_name, qe.PayloadSchemaType.Keyword)
        )

    def metadata(self) -> dict[str, Any]:
        path = self.path / METADATA_FILE
        if not path.is_file():
            return {}
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}

    def update_metadata(self, values: Mapping[str, Any]) -> None:
        self.shard.flush()
        merged = {**self.metadata(), **values}
        tmp = self.path / f".{METADATA_FILE}.tmp"
        with tmp.open("w") as out:
            json.dump(merged, out)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(self.path / METADATA_FILE)

    def upsert(self, points: Sequence[IndexPoint]) -> None:
        self.shard.update(
            qe.UpdateOperation.upsert_points(
                [
                    qe.Point(
                        p.id,
                        {DENSE: [float(x) for x in p.dense], SPARSE: _sparse(p.sparse)},
                        dict(p.payload),
                    )
                    for p in points
                ]
            )
        )

    def delete(self, flt: Filter) -> None:
        self.shard.update(qe.UpdateOperation.delete_points_by_filter(_filter(flt) or qe.Filter()))

    def set_payload(self, payload: Mapping[str, Any], flt: Filter) -> None:
        self.shard.update(
            qe.UpdateOperation.set_payload_by_filter(_filter(flt) or qe.Filter(), dict(payload))
        )

    def scroll(
        self,
        flt: Filter,
        limit: int,
        *,
        fields: Sequence[str] | None = None,
        offset: str | None = None,
    ) -> tuple[list[Record], str | None]:
        records, after = self.shard.scroll(
            qe.ScrollRequest(
                offset=offset,
                limit=limit,
                filter=_filter(flt),
                with_payload=list(fields) if fields is not None else True,
                with_vector=False,
            )
        )
        out = [Record(str(r.id), dict(r.payload or {})) for r in records]
        return out, str(after) if after is not None else None

    def retrieve(self, ids: Sequence[str]) -> list[Record]:
        records = self.shard.retrieve(list(ids), with_payload=True, with_vector=False)
        return [Record(str(r.id), dict(r.payload or {})) for r in records]

    def points(self, flt: Filter) -> list[IndexPoint]:
        found: list[IndexPoint] = []
        offset: Any = None
        while True:
            records, offset = self.shard.scroll(
                qe.ScrollRequest(
                    offset=offset, limit=256, filter=_filter(flt), with_payload=True,
                    with_vector=True,
                )
            )
            found.extend(_point(r.id, r.vector, r.payload) for r in records)
            if offset is None:
                return found

    def count(self, flt: Filter = EVERYTHING) -> int:
        return self.shard.count(qe.CountRequest(exact=True, filter=_filter(flt)))

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
        request = qe.QueryRequest(
            limit=OVERFETCH * limit,
            prefetches=[
                qe.Prefetch(
                    limit=limit,
                    query=qe.Query.Nearest([float(x) for x in dense], using=DENSE),
                    filter=condition,
                ),
                qe.Prefetch(
                    limit=limit,
                    query=qe.Query.Nearest(_sparse(sparse), using=SPARSE),
                    filter=condition,
                ),
            ],
            # The stubs type the query as Fusion, of which Rrf is a nested class.
            query=qe.Fusion.Rrf(k=rrf_k),  # type: ignore[arg-type]
            with_payload=True,
            with_vector=[DENSE],
        )
        return best_first(map(_hit, self.shard.query(request)), limit)

    def sparse_search(self, sparse: SparseVector, flt: Filter, *, limit: int) -> list[Hit]:
        request = qe.QueryRequest(
            limit=OVERFETCH * limit,
            query=qe.Query.Nearest(_sparse(sparse), using=SPARSE),
            filter=_filter(flt),
            with_payload=True,
            with_vector=False,
        )
        return best_first(map(_hit, self.shard.query(request)), limit)

    def optimize(self) -> None:
        self.shard.optimize()
        self.shard.flush()

    def close(self) -> None:
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None


def _load(path: Path) -> qe.EdgeShard:
    try:
        return qe.EdgeShard.load(str(path))
    except Exception as exc:  # the bindings raise a bare Exception with the engine's message
        if "WAL" in str(exc):
            raise ConfigError(
                f"the qdrant-edge shard {path} is open in another process (one process may "
                "hold a shard: usually the running service, which syncs RUNBOOK_ROOTS itself "
                "every SYNC_INTERVAL_S). Stop that process first, or let it sync, or set "
                "QDRANT_URL to use a Qdrant server"
            ) from exc
        raise ConfigError(
            f"cannot load the qdrant-edge shard {path}: {exc}. Move the folder aside and "
            "re-index with `make ingest` (the Redis embedding cache spares the model)"
        ) from exc
