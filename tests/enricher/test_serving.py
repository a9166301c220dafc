"""The server's read deadlines and connection cap (enricher.serving), on real sockets: uvicorn
with `DeadlineProtocol` in a thread, serving a small ASGI app that reads the whole body."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from starlette.types import Message, Receive, Scope, Send

from enricher import serving
from enricher.settings import Settings
from tests.conftest import wait_for
from tests.helpers import tcp_sockets

#: Short deadlines so the tests are quick; the socket timeout only bounds a hang.
DEADLINE_S = 0.5
HANG_S = 20.0


async def read_all(scope: Scope, receive: Receive, send: Send) -> None:
    """Answers 200 with the body's length once the whole body is in."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    size = 0
    message: Message = {"more_body": True}
    while message.get("more_body"):
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        size += len(message.get("body", b""))
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def served(
    max_connections: int = 100, deadline_s: float = DEADLINE_S, header_read: int = 1024 * 1024
) -> Iterator[int]:
    settings = Settings(
        header_timeout_s=deadline_s,
        body_timeout_s=deadline_s,
        max_connections=max_connections,
        max_body_bytes=header_read,
        log_level="WARNING",
    )
    sock = serving.bind("127.0.0.1", 0)
    port = int(sock.getsockname()[1])
    server = serving.server(read_all, settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_S
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=HANG_S)


def connect(port: int, data: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_S)
    if data:
        sock.sendall(data)
    return sock


def answer_then_close(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    with sock:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def open_connections(port: int) -> int:
    """Server-side connections on `port` that a socket of this process still holds (from
    /proc/net/tcp: a socket the server closed is orphaned, with inode 0, until TCP is done)."""
    return sum(state != "0A" and inode != "0" for state, inode in tcp_sockets(port))


def test_open_connections_counts_what_a_process_holds() -> None:
    """The count the linger test waits on: a listener is not a connection, an accepted one
    is, and a closed one is not (it may linger in TIME_WAIT with inode 0)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert open_connections(port) == 0
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        assert open_connections(port) == 1
        accepted.close()
        client.close()
        assert open_connections(port) == 0


def response(sock: socket.socket) -> bytes:
    """One response on a kept-alive connection, read up to its declared length."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def request(body: bytes = b"hello") -> bytes:
    return (b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body)) + body


@pytest.fixture()
def port() -> Iterator[int]:
    with served() as port:
        yield port


class TestHeaderDeadline:
    def test_half_sent_headers_get_408_and_close(self, port: int) -> None:
        """Headers that stop coming are answered 408 and the connection is closed."""
        sock = connect(port, b"POST /x HTTP/1.1\r\nHost: t\r\n")
        assert answer_then_close(sock).startswith(b"HTTP/1.1 408 ")

    def test_a_silent_connection_is_closed(self, port: int) -> None:
        """A connection that never sends a byte does not stay open either."""
        assert answer_then_close(connect(port)).startswith(b"HTTP/1.1 408 ")

    def test_a_trickle_is_a_deadline_not_an_idle_timer(self, port: int) -> None:
        """A byte at a time, each well inside the deadline, is still cut off at it."""
        sock = connect(port)
        line = b"GET /x HTTP/1.1\r\nHost: " + b"h" * 200 + b"\r\n"
        sent = 0
        for byte in line:
            if select.select([sock], [], [], DEADLINE_S / 5)[0]:
                break  # the server answered: stop sending
            sent += sock.send(bytes([byte]))
        assert sent < len(line)
        assert answer_then_close(sock).startswith(b"HTTP/1.1 408 ")

    def test_bytes_sent_after_the_408_do_not_cost_the_client_its_answer(self, port: int) -> None:
        """A client still sending when the 408 goes out reads it whole, then the close: the
        server drops those bytes instead of answering them with a reset."""
        sock = connect(port, b"POST /x HTTP/1.1\r\nHost: t\r\n")
        assert select.select([sock], [], [], HANG_S)[0], "no answer within the hang bound"
        for _ in range(20):
            sock.sendall(b"X-Late: " + b"v" * 1000 + b"\r\n")
        assert answer_then_close(sock).startswith(b"HTTP/1.1 408 ")

    def test_a_client_that_never_closes_is_closed_after_the_linger(self) -> None:
        """After the 408 the server waits for the client's close only LINGER_S."""
        with served() as port:
            sock = connect(port, b"POST /x HTTP/1.1\r\nHost: t\r\n")
            assert select.select([sock], [], [], HANG_S)[0], "no answer within the hang bound"
            assert sock.recv(65536).startswith(b"HTTP/1.1 408 ")
            wait_for(lambda: not open_connections(port), timeout_s=HANG_S,
                     what="the server to close the lingering connection")
            sock.close()

    def test_kept_alive_connection_outlives_the_deadline(self, port: int) -> None:
        """Time between requests is keep-alive's, not the header deadline's."""
        with connect(port, request()) as sock:
            assert response(sock).startswith(b"HTTP/1.1 200 ")
            time.sleep(DEADLINE_S * 3)
            sock.sendall(request(b"again"))
            assert response(sock).endswith(b"\r\n\r\n5")


class TestBodyDeadline:
    def test_stalled_body_gets_408_and_close(self, port: int) -> None:
        """Headers and part of a body, then nothing: 408, and the app sees a disconnect."""
        sock = connect(port, b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc")
        assert answer_then_close(sock).startswith(b"HTTP/1.1 408 ")

    def test_a_whole_request_is_answered(self, port: int) -> None:
        with connect(port, request(b"x" * 100_000)) as sock:
            assert response(sock).endswith(b"\r\n\r\n100000")


def padded(size: int) -> bytes:
    """A whole request whose request line and headers take about `size` bytes."""
    head = b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
    return head + b"X-Pad: " + b"p" * (size - len(head) - 11) + b"\r\n\r\nok"


class TestHeaderSize:
    """llhttp reads headers of any size: the protocol stops at MAX_BODY_BYTES."""

    def test_headers_past_the_read_cap_get_431_and_close(self) -> None:
        with served(header_read=2048) as port:
            answer = answer_then_close(connect(port, padded(4096)))
        assert answer.startswith(b"HTTP/1.1 431 ")
        assert b"over 2048 bytes" in answer

    def test_headers_past_the_cap_sent_in_pieces_get_431(self) -> None:
        with served(header_read=2048) as port:
            sock = connect(port, b"POST /x HTTP/1.1\r\nHost: t\r\n")
            for n in range(40):
                try:
                    sock.sendall(b"X-%d: %s\r\n" % (n, b"v" * 100))
                except OSError:
                    break  # the server answered and closed
            assert answer_then_close(sock).startswith(b"HTTP/1.1 431 ")

    def test_the_cap_counts_each_request_on_a_connection_afresh(self) -> None:
        """Three requests of 1.5 kB of headers each on one connection: none is refused."""
        with served(header_read=2048) as port, connect(port) as sock:
            for _ in range(3):
                sock.sendall(padded(1500))
                assert response(sock).startswith(b"HTTP/1.1 200 ")

    def test_a_malformed_request_gets_400(self, port: int) -> None:
        assert answer_then_close(connect(port, b"NOT HTTP AT ALL\r\n\r\n")).startswith(
            b"HTTP/1.1 400 "
        )


class TestConnectionCap:
    def test_past_the_cap_a_connection_gets_503(self) -> None:
        """With the cap reached a new connection is answered 503 (senders retry 5xx) and
        closed; once one closes, requests are served again."""
        with served(max_connections=2, deadline_s=HANG_S) as port:
            held = [connect(port), connect(port)]
            assert answer_then_close(connect(port)).startswith(b"HTTP/1.1 503 ")
            held.pop().close()
            # The server sees the close on a later turn of its event loop.
            deadline = time.monotonic() + HANG_S
            answer = b""
            while not answer.startswith(b"HTTP/1.1 200 ") and time.monotonic() < deadline:
                time.sleep(0.01)
                with connect(port, request()) as sock:
                    answer = response(sock)
            assert answer.startswith(b"HTTP/1.1 200 ")
            held.pop().close()
