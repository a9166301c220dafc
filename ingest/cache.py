"""Redis cache of dense embeddings, keyed by model identity and the sha256 of the embedded text.

The key carries the model, so a model change can never reuse stale vectors. The cache is an
optimisation only: when Redis is unreachable the sync warns once and embeds everything.
Sparse (BM25) vectors are not cached: they cost ~0.1 ms a chunk, less than a Redis round trip.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import redis
import structlog

from enricher.redis_connect import describe, sync_client
from enricher.settings import Settings

log = structlog.get_logger(__name__)

TTL_S = 90 * 24 * 3600  # refreshed on every hit, so live chunks never expire


def text_key(model: str, text: str) -> str:
    model_tag = hashlib.sha256(model.encode()).hexdigest()[:12]
    return f"rbe:emb:{model_tag}:{hashlib.sha256(text.encode()).hexdigest()}"


class EmbeddingCache:
    def __init__(self, client: redis.Redis | None, model: str) -> None:
        self._client = client
        self._model = model
        self._warned = False

    @property
    def available(self) -> bool:
        return self._client is not None

    def _disable(self, exc: Exception) -> None:
        if not self._warned:
            log.warning("cache.unavailable", error=str(exc), effect="embedding without cache")
            self._warned = True
        self._client = None

    def get_many(self, texts: Sequence[str]) -> list[list[float] | None]:
        if self._client is None or not texts:
            return [None] * len(texts)
        keys = [text_key(self._model, t) for t in texts]
        try:
            raw = self._client.mget(keys)
            pipe = self._client.pipeline(transaction=False)
            for key, blob in zip(keys, raw, strict=True):
                if blob is not None:
                    pipe.expire(key, TTL_S)
            pipe.execute()
        except redis.RedisError as exc:
            self._disable(exc)
            return [None] * len(texts)
        return [
            np.frombuffer(blob, dtype=np.float32).tolist() if isinstance(blob, bytes) else None
            for blob in raw
        ]

    def put_many(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        if self._client is None or not texts:
            return
        try:
            pipe = self._client.pipeline(transaction=False)
            for text, vector in zip(texts, vectors, strict=True):
                blob = np.asarray(vector, dtype=np.float32).tobytes()
                pipe.set(text_key(self._model, text), blob, ex=TTL_S)
            pipe.execute()
        except redis.RedisError as exc:
            self._disable(exc)


def connect(where: Settings | str) -> redis.Redis | None:
    """A client of the service's Redis (the settings' REDIS_URL or Sentinels' primary, or a
    bare Redis URL), or None (with one warning) when it cannot be reached."""
    if isinstance(where, str):
        client = redis.Redis.from_url(where, socket_timeout=2, socket_connect_timeout=2)
    else:
        client = sync_client(where)
    try:
        client.ping()
    except redis.RedisError as exc:
        log.warning(
            "cache.unavailable",
            url=_where(where),
            error=str(exc),
            effect="embedding without cache",
        )
        return None
    return client


def _where(where: Settings | str) -> str:
    """Where the cache's Redis is, without a password."""
    if not isinstance(where, str):
        return describe(where)
    scheme, sep, rest = where.partition("://")
    if "@" in rest:
        rest = "***@" + rest.split("@", 1)[1]
    return scheme + sep + rest
