"""150 slow clients against the real `python -m enricher`: while they hold their connections,
/healthz answers and a real page is accepted and posted; then the server closes every one of
them at its read deadline (set short here), with a 408."""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis

from scripts.chaos.harness import AM_TOKEN, CHANNEL, Enricher, enricher_env
from scripts.chaos.workload import am_body, runbook_alerts
from scripts.index_copy import copy_index
from scripts.local_redis import RedisServer
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack, running_fake_slack
from tests.helpers import tcp_sockets

SLOW_CLIENTS = 150
#: Long enough to open the slow clients and send one page while none has timed out.
DEADLINE_S = 6
#: Only bounds a hang.
HANG_S = 60


@dataclass
class Served:
    enricher: Enricher
    fake: FakeSlack


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, golden_index: Path, redis_server: RedisServer
) -> Iterator[Served]:
    if redis_server.proc is None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    tmp = tmp_path_factory.mktemp("slow-clients")
    copy_index(golden_index, tmp / "qdrant")
    with running_fake_slack(token="xoxb-test") as fake:
        env = enricher_env(
            qdrant_path=tmp / "qdrant", redis_url=redis_server.url, slack_url=fake.url,
            worker_id="slow-1", WORKERS="2",
            HEADER_TIMEOUT_S=str(DEADLINE_S), BODY_TIMEOUT_S=str(DEADLINE_S),
        )
        enricher = Enricher(env, tmp / "enricher.log")
        enricher.start()
        try:
            yield Served(enricher, fake)
        finally:
            enricher.stop()


def slow_clients(port: int) -> list[socket.socket]:
    """A third open and say nothing, a third stop mid-headers, a third mid-body."""
    starts = [
        b"",
        b"POST /webhook/alertmanager HTTP/1.1\r\nHost: enricher\r\nAuthorization: Bea",
        b"POST /webhook/alertmanager HTTP/1.1\r\nHost: enricher\r\n"
        b"Authorization: Bearer " + AM_TOKEN.encode() + b"\r\n"
        b"Content-Length: 5000\r\n\r\n{\"version\": \"4\", \"alerts\": [",
    ]
    clients = []
    for number in range(SLOW_CLIENTS):
        sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
        if starts[number % 3]:
            sock.sendall(starts[number % 3])
        clients.append(sock)
    return clients


def still_open(clients: list[socket.socket]) -> bool:
    """No client has heard anything yet (an answer or a close would make it readable)."""
    readable, _, _ = select.select(clients, [], [], 0)
    return not readable


def until_closed(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


class TestSlowClients:
    def test_pages_flow_while_slow_clients_hold_connections(self, served: Served) -> None:
        """With 150 stalled clients connected, /healthz answers and a page is accepted and
        posted; then each stalled client is answered 408 and closed by the server."""
        enricher, fake = served.enricher, served.fake
        clients = slow_clients(enricher.port)
        try:
            health = httpx.get(f"{enricher.url}/healthz", timeout=HANG_S)
            service, name = runbook_alerts()[0]
            page = httpx.post(
                f"{enricher.url}/webhook/alertmanager",
                content=am_body(f'{{}}:{{alertname="{name}"}}', name, service, 0, ["s0"], "firing"),
                headers={"Authorization": f"Bearer {AM_TOKEN}"},
                timeout=HANG_S,
            )
            assert still_open(clients), "a slow client was closed before the page was sent"
            assert health.status_code == 200
            assert page.json() == {"status": "queued"}
            answers = [until_closed(sock) for sock in clients]
        finally:
            for sock in clients:
                sock.close()
        assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
        wait_for(lambda: len(fake.messages(CHANNEL)) == 1, timeout_s=HANG_S, what="the page")

    def test_the_server_holds_no_connection_after(self, served: Served) -> None:
        """Once the deadlines have passed, the process holds no client connection: its open
        files are back to what a connected-to-nobody server holds."""
        enricher = served.enricher
        clients = slow_clients(enricher.port)
        for sock in clients:
            until_closed(sock)
            sock.close()
        wait_for(lambda: client_sockets(enricher) == 0, timeout_s=HANG_S,
                 what="the server to close every client connection")


def client_sockets(enricher: Enricher) -> int:
    """Established TCP connections of the enricher on its own port (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{enricher.pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except FileNotFoundError:  # closed while we looked
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return sum(state == "01" and inode in inodes for state, inode in tcp_sockets(enricher.port))
