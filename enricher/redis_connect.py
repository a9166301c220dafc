"""The one place a Redis client is built from the settings: one server (REDIS_URL), or the
primary that Redis Sentinel names (REDIS_SENTINELS, REDIS_SENTINEL_MASTER).

With Sentinel the client is redis-py's own `Sentinel(...).master_for(name)`: every new
connection asks the Sentinels for the current primary, and a connection to a server that
was demoted is dropped on its first READONLY answer. So a failover needs no restart: the
commands that meet the dead primary fail (`ConnectionError`, which callers already handle as
"Redis is down"), and the next connection goes to the promoted replica. REDIS_URL then gives
the database number and the data nodes' credentials; its host and port are not used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis
import redis.asyncio as aioredis
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry as AsyncRetry
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.asyncio.sentinel import SentinelConnectionPool as AsyncSentinelPool
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry
from redis.sentinel import Sentinel

from enricher.settings import Settings

#: Connection options taken from REDIS_URL when the Sentinels name the host and port.
_FROM_URL = ("db", "username", "password")


def sentinel_addresses(settings: Settings) -> list[tuple[str, int]]:
    """REDIS_SENTINELS as (host, port) pairs (the settings checked their form)."""
    pairs = (address.rpartition(":") for address in settings.redis_sentinels)
    return [(host, int(port)) for host, _, port in pairs]


def _data_node_options(settings: Settings) -> dict[str, Any]:
    options: dict[str, Any] = dict(parse_url(settings.redis_url))
    return {k: options[k] for k in _FROM_URL if options.get(k) is not None}


def _sentinel_options(
    settings: Settings, socket_timeout: float, retry: Retry | AsyncRetry
) -> dict[str, Any]:
    # No retries with backoff per Sentinel (redis-py's default): one that does not answer
    # is skipped for the next, so a discovery never waits seconds on a dead Sentinel.
    options: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
        "retry": retry,
    }
    if settings.redis_sentinel_password is not None:
        options["password"] = settings.redis_sentinel_password.get_secret_value()
    return options


def async_client(settings: Settings, *, socket_timeout: float = 2.0) -> aioredis.Redis:
    """The service's client. One retry on a fresh connection: a pooled connection that went
    stale (a restarted server, a failover) reconnects instead of failing its first command;
    the retry of a connection asks the Sentinels again."""
    common: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
        # The asyncio Retry: the blocking one does not await the command, so it retries
        # nothing on an asyncio client.
        "retry": AsyncRetry(NoBackoff(), 1),
    }
    if not settings.redis_sentinels:
        return _closed_writes_drop(aioredis.Redis.from_url(settings.redis_url, **common))
    assert settings.redis_sentinel_master is not None  # the settings require it
    # redis-py ships the Sentinel classes without annotations.
    sentinel = AsyncSentinel(  # type: ignore[no-untyped-call]
        sentinel_addresses(settings),
        sentinel_kwargs=_sentinel_options(settings, socket_timeout, AsyncRetry(NoBackoff(), 0)),
        **_data_node_options(settings),
        **common,
    )
    client: aioredis.Redis = sentinel.master_for(settings.redis_sentinel_master)
    return _closed_writes_drop(client)


class _ClosedWriteIsDrop:
    """A write on a transport the server already reset is a dropped connection.

    A connection the server reset while it idled in the pool passes redis-py's checkout (a
    reset does not read as EOF), and a fresh connection can be reset between its connect
    and its `HELLO`. uvloop refuses either write with `RuntimeError … the handler is
    closed`, not an OSError, so redis-py neither retried it nor read it as a dropped
    connection: the webhook answered 500. As a ConnectionError it is retried once on a
    fresh connection, like any drop, and otherwise ends as "Redis is down" (a 503)."""

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        try:
            await super().send_packed_command(command, check_health)  # type: ignore[misc]
        except RuntimeError as exc:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            raise RedisConnectionError(f"the connection was closed under a write ({exc})") from exc


def _closed_writes_drop(client: aioredis.Redis) -> aioredis.Redis:
    """`client` with its pool's connections (plain, TLS, socket or Sentinel-managed, as
    the URL chose) reading a write on a closed transport as a drop (_ClosedWriteIsDrop).
    The pool makes its connections lazily, so the class is swapped before the first."""
    pool = client.connection_pool
    base = pool.connection_class
    pool.connection_class = type(
        f"ClosedWriteIsDrop{base.__name__}", (_ClosedWriteIsDrop, base), {}
    )
    return client


def sync_client(settings: Settings, *, socket_timeout: float = 2.0) -> redis.Redis:
    """The same, blocking (the embedding cache, the ledger's output notes). The same single
    retry without backoff: redis-py's default for a blocking client retries three times
    with backoff, seconds in which a caller on the event loop (the notes) would hold it."""
    common: dict[str, Any] = {
        "socket_timeout": socket_timeout,
        "socket_connect_timeout": socket_timeout,
        "retry": Retry(NoBackoff(), 1),
    }
    if not settings.redis_sentinels:
        return redis.Redis.from_url(settings.redis_url, **common)
    assert settings.redis_sentinel_master is not None
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        sentinel_addresses(settings),
        sentinel_kwargs=_sentinel_options(settings, socket_timeout, Retry(NoBackoff(), 0)),
        **_data_node_options(settings),
        **common,
    )
    client: redis.Redis = sentinel.master_for(  # type: ignore[no-untyped-call]
        settings.redis_sentinel_master
    )
    return client


async def aclose(client: aioredis.Redis) -> None:
    """Close the client and, for a Sentinel client, its connections to the Sentinels
    (redis-py leaves those to the caller)."""
    pool = client.connection_pool
    await client.aclose()
    if isinstance(pool, AsyncSentinelPool):
        await pool.sentinel_manager.aclose()


def describe(settings: Settings) -> str:
    """Where the service's Redis is, for a log line or an error (no password)."""
    if settings.redis_sentinels:
        return f"primary {settings.redis_sentinel_master!r} of Sentinels " + ",".join(
            settings.redis_sentinels
        )
    options = parse_url(settings.redis_url)
    return f"{options.get('host', 'localhost')}:{options.get('port', 6379)}"


__all__ = ["aclose", "async_client", "describe", "sentinel_addresses", "sync_client"]
