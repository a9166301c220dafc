"""Which engine the settings name, opened: a Qdrant server when QDRANT_URL is set, else the
qdrant-edge shard at QDRANT_PATH/edge/<collection>.

Upgrade path: releases before qdrant-edge kept the embedded index in qdrant-client's local
mode (QDRANT_PATH/collection/<name>). When that folder exists and the shard does not, its
points (vectors included) are copied into a new shard once, so nothing is embedded again.
The old folder is left as it was; the log line says it can be deleted.

qdrant-client is imported only when it is used (a server, or that copy): on the default
engine it would cost about 44 MB resident and seconds of start-up for nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.edge import EdgeIndex
from enricher.index.embedding import SparseVector
from enricher.index.engine import EVERYTHING, Index, IndexPoint
from enricher.settings import Settings

if TYPE_CHECKING:
    from enricher.index.server import ServerIndex

log = structlog.get_logger(__name__)

_MIGRATE_BATCH = 256


def shard_path(settings: Settings) -> Path:
    return settings.qdrant_path / "edge" / settings.qdrant_collection


def open_index(settings: Settings) -> Index:
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        from enricher.index.server import ServerIndex

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        client = QdrantClient(
            url=settings.qdrant_url, api_key=api_key, timeout=int(settings.qdrant_timeout_s)
        )
        return ServerIndex(client, settings.qdrant_collection)
    index = EdgeIndex(shard_path(settings), settings.qdrant_collection)
    if not index.exists() and _local_mode_collection(settings).is_dir():
        _migrate_local_mode(settings, index)
    return index


def open_local_mode(path: Path, collection: str) -> ServerIndex:
    """qdrant-client's local mode at `path` (tests, and the benchmarks' comparison)."""
    from qdrant_client import QdrantClient

    from enricher.index.server import ServerIndex

    path.mkdir(parents=True, exist_ok=True)
    try:
        return ServerIndex(QdrantClient(path=str(path)), collection)
    except RuntimeError as exc:  # portalocker: another process holds the folder
        raise ConfigError(
            f"qdrant-client local mode at {path} is locked by another process (only one "
            "process may open it)"
        ) from exc


def _local_mode_collection(settings: Settings) -> Path:
    return settings.qdrant_path / "collection" / settings.qdrant_collection


def _migrate_local_mode(settings: Settings, target: EdgeIndex) -> None:
    started = time.monotonic()
    try:
        source = open_local_mode(settings.qdrant_path, settings.qdrant_collection)
    except ConfigError as exc:
        raise ConfigError(
            f"{settings.qdrant_path} holds an index written by an older release (qdrant-client "
            "local mode) and another process has it open: stop that process and start again, "
            "and it is copied into qdrant-edge once, without re-embedding"
        ) from exc
    try:
        shape = source.shape()
        if shape.dense_size is None:
            raise ConfigError(
                f"the old local-mode collection at {_local_mode_collection(settings)} has no "
                f"'{schema.DENSE}' vector: delete it and run `make ingest`"
            )
        target.create(shape.dense_size)
        for field in schema.KEYWORD_INDEXES:
            target.create_keyword_index(field)
        copied = 0
        offset = None
        while True:
            points, offset = source.client.scroll(
                source.name, limit=_MIGRATE_BATCH, offset=offset, with_vectors=True
            )
            batch = []
            for p in points:
                vectors = p.vector if isinstance(p.vector, dict) else {}
                sparse = vectors[schema.SPARSE]
                batch.append(
                    IndexPoint(
                        id=str(p.id),
                        dense=vectors[schema.DENSE],  # type: ignore[arg-type]
                        sparse=SparseVector(list(sparse.indices), list(sparse.values)),  # type: ignore[union-attr]
                        payload=dict(p.payload or {}),
                    )
                )
            target.upsert(batch)
            copied += len(batch)
            if offset is None:
                break
        target.update_metadata(source.metadata())
    finally:
        source.close()
    log.warning(
        "index.migrated_from_local_mode",
        points=copied,
        count=target.count(EVERYTHING),
        shard=str(target.path),
        old=str(_local_mode_collection(settings)),
        ms=round((time.monotonic() - started) * 1000),
        fix="the old local-mode folder is no longer read: delete it once this works",
    )
