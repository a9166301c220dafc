"""A Redis connection reset while it idles in the pool answers 503, never 500 (issue 33, item 3).

In a failover run 1 answer in 628 was a 500: `RuntimeError … handler is closed` from the
intake's write. A primary that dies with bytes of ours unread resets the connection (RST,
not FIN). uvloop then closes the transport at once; redis-py's check at checkout reads only
"at EOF", which a reset does not set, so it hands the connection out, and uvloop refuses the
write with a RuntimeError that no Redis error handler catches.

Real redis-server processes (a primary and a replica, for REDIS_MIN_REPLICAS_ACK), the real
service in process on uvloop (as it serves), and a TCP proxy between the service and the
primary that resets every connection and refuses new ones: no primary answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvloop

from enricher.index.embedding import Embedder
from enricher.pipeline.queue import Job, new_job
from enricher.service import Services
from enricher.sources import Ignored, parse_body
from scripts.local_redis import RedisServer
from tests.helpers import am_alert, am_body, attach_replica, dumps, service_settings


def _reset(sock: socket.socket) -> None:
    """Close with an RST, as a peer that died with unread bytes does."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()


class ResettingProxy:
    """127.0.0.1 -> a Redis port, byte for byte, until `reset` resets every connection and
    refuses (resets) new ones; `restore` accepts again."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._refusing = False
        self._pairs: dict[socket.socket, socket.socket] = {}
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def reset(self) -> int:
        """Reset every open connection, refuse new ones; how many were reset."""
        with self._lock:
            self._refusing = True
            sockets = list(self._pairs)
            for sock in sockets:
                self._drop(sock)
                _reset(sock)
        return len(sockets) // 2

    def restore(self) -> None:
        with self._lock:
            self._refusing = False

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            for sock in list(self._pairs):
                self._drop(sock)
                sock.close()
        self._listener.close()
        self._selector.close()

    def _drop(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        self._pairs.pop(sock, None)

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._selector.select(timeout=0.05):
                with self._lock:
                    if key.fileobj is self._listener:
                        self._accept()
                    else:
                        self._forward(key.fileobj)  # type: ignore[arg-type]

    def _accept(self) -> None:
        client, _ = self._listener.accept()
        if self._refusing:
            _reset(client)
            return
        upstream = socket.create_connection(("127.0.0.1", self.upstream))
        for sock, peer in ((client, upstream), (upstream, client)):
            self._pairs[sock] = peer
            self._selector.register(sock, selectors.EVENT_READ)

    def _forward(self, sock: socket.socket) -> None:
        peer = self._pairs.get(sock)
        if peer is None:
            return
        try:
            data = sock.recv(65536)
            if data:
                peer.sendall(data)
                return
        except OSError:
            pass
        for one in (sock, peer):
            self._drop(one)
            one.close()


@pytest.fixture()
def primary(tmp_path: Path) -> Iterator[RedisServer]:
    (tmp_path / "primary").mkdir()
    server = RedisServer(tmp_path / "primary")
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture()
def proxy(primary: RedisServer) -> Iterator[ResettingProxy]:
    running = ResettingProxy(primary.port)
    try:
        yield running
    finally:
        running.close()


class TestConnectionResetInThePool:
    def test_the_intake_meets_a_reset_pooled_connection_as_redis_down(
        self,
        tmp_path: Path,
        golden_index: Path,
        embedder: Embedder,
        primary: RedisServer,
        proxy: ResettingProxy,
    ) -> None:
        """A webhook accepted leaves its connection in the pool. The proxy resets it and
        refuses new ones (no primary): the next webhook finds the closed transport and is
        "unavailable" (the app's 503 with Retry-After), not a RuntimeError (a 500). Once
        Redis answers again the sender's retry is queued."""
        replica = attach_replica(tmp_path, primary)
        settings = service_settings(
            tmp_path, golden_index, proxy.url, None,
            redis_min_replicas_ack=1, redis_min_replicas_ack_timeout_ms=1000,
        )
        services = Services.build(settings, embedder=embedder)

        def job(fingerprint: str) -> Job:
            body = am_body(am_alert("PostgresReplicationLag", "postgres", fingerprint=fingerprint))
            parsed = parse_body(dumps(body))
            assert not isinstance(parsed, Ignored)
            return new_job(parsed)

        async def scenario() -> list[str]:
            outcomes: list[str] = [await services.accept(job("r1"))]
            assert proxy.reset() > 0
            # The loop reads the resets (uvloop closes the transports) before the next write.
            for _ in range(10):
                await asyncio.sleep(0)
            outcomes.append(await services.accept(job("r2")))
            proxy.restore()
            outcomes.append(await services.accept(job("r2")))
            await services.stop()
            return outcomes

        try:
            assert uvloop.run(scenario()) == ["queued", "unavailable", "queued"]
        finally:
            replica.kill()
