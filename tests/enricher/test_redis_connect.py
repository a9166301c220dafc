"""The Redis client built from the settings (enricher.redis_connect) against a real Sentinel
deployment: a primary, one replica and three Sentinels of Debian's redis-server on 127.0.0.1.
down-after-milliseconds is 1000 here, only to keep the failover short."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import uvloop
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.exceptions import ConnectionError as RedisConnectionError

from enricher import redis_connect
from enricher.settings import Settings
from ingest.cache import connect
from scripts.local_redis import free_port
from scripts.local_sentinel import MASTER_NAME, SentinelCluster

#: Bounds a hung failover; asserts no speed.
FAILOVER_WAIT_S = 60


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[SentinelCluster]:
    made = SentinelCluster(tmp_path, replicas=1, down_after_ms=1000)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def sentinel_settings(sentinels: str) -> Settings:
    return Settings(
        redis_url="redis://127.0.0.1/0",
        redis_sentinels=tuple(sentinels.split(",")),
        redis_sentinel_master=MASTER_NAME,
    )


def on_port(port: int, key: str) -> bytes | None:
    with redis.Redis(port=port) as client:
        value = client.get(key)
    assert value is None or isinstance(value, bytes)
    return value


class TestSentinelClient:
    def test_the_same_client_follows_a_failover(self, cluster: SentinelCluster) -> None:
        """Writes go to the primary the Sentinels name; after a kill -9 of it and a
        promotion, the same client object writes to the new primary, which kept what was
        written before."""

        async def scenario() -> int:
            client = redis_connect.async_client(sentinel_settings(cluster.sentinels))
            try:
                await client.set("before", "1")
                await client.wait(1, 1000)
                old = cluster.kill_primary()
                new = await asyncio.to_thread(cluster.wait_for_failover, old)
                deadline = time.monotonic() + FAILOVER_WAIT_S
                while True:
                    try:
                        await client.set("after", "2")
                        return new
                    except RedisConnectionError:
                        if time.monotonic() > deadline:
                            raise
                        await asyncio.sleep(0.1)
            finally:
                await redis_connect.aclose(client)

        new = asyncio.run(scenario())
        assert (on_port(new, "before"), on_port(new, "after")) == (b"1", b"2")

    def test_ingest_cache_writes_to_the_primary(self, cluster: SentinelCluster) -> None:
        """The embedding cache of `python -m ingest` and the service's sync follows the
        Sentinels too, not REDIS_URL's host."""
        client = connect(sentinel_settings(cluster.sentinels))
        assert client is not None
        client.set("cached", "1")
        port = cluster.primary_port()
        assert port is not None and on_port(port, "cached") == b"1"
        client.close()


def test_no_sentinel_answering_is_a_connection_error() -> None:
    """What the pool treats as "Redis is down" (503 with Sentinel configured)."""

    async def ping() -> None:
        client = redis_connect.async_client(sentinel_settings(f"127.0.0.1:{free_port()}"))
        try:
            await client.ping()
        finally:
            await redis_connect.aclose(client)

    with pytest.raises(RedisConnectionError, match=f"No master found for '{MASTER_NAME}'"):
        asyncio.run(ping())


class TestClosedTransport:
    def test_a_write_on_a_closed_transport_is_a_dropped_connection(self, redis_url: str) -> None:
        """uvloop refuses a write on a transport the server reset with a RuntimeError; the
        client reads it as a dropped connection (ConnectionError, which the intake answers
        503), and the next command goes out on a fresh connection."""

        async def scenario() -> bytes | str | None:
            client = redis_connect.async_client(Settings(redis_url=redis_url))
            try:
                await client.set("kept", "1")
                (pooled,) = client.connection_pool._available_connections
                writer = pooled._writer
                assert writer is not None
                writer.transport.abort()
                await asyncio.sleep(0)
                with pytest.raises(RedisConnectionError, match="closed under a write"):
                    await pooled.send_packed_command(b"*1\r\n$4\r\nPING\r\n")
                value: bytes | str | None = await client.get("kept")
                return value
            finally:
                await redis_connect.aclose(client)

        assert uvloop.run(scenario()) == b"1"

    @pytest.mark.parametrize(
        ("url", "base"),
        [
            ("redis://127.0.0.1:6379/0", Connection),
            ("rediss://127.0.0.1:6380/0", SSLConnection),
            ("unix:///run/redis.sock", UnixDomainSocketConnection),
        ],
    )
    def test_the_url_still_chooses_the_connection(
        self, url: str, base: type[AbstractConnection]
    ) -> None:
        client = redis_connect.async_client(Settings(redis_url=url))
        made = client.connection_pool.connection_class
        assert issubclass(made, base)
        assert made.send_packed_command is not base.send_packed_command
