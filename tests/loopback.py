"""What the fake Slack and the fake PagerDuty share: an HTTP server on 127.0.0.1 served
from a thread, and one way to write an answer."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer:
    """A `ThreadingHTTPServer` on its own daemon thread, started and stopped on demand."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 name: str) -> None:
        self._address = address
        self._handler = handler
        self._name = name
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        server = ThreadingHTTPServer(self._address, self._handler)
        server.daemon_threads = True
        self._server = server
        # A short poll interval keeps stop() (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.02,), name=self._name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def port(self) -> int | None:
        """The bound port; None while stopped."""
        return None if self._server is None else int(self._server.server_address[1])


def answer(
    handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str,
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    """Write one answer; a client that timed out (a fake's latency) has gone: nothing to do."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers:
        handler.send_header(name, value)
    with suppress(BrokenPipeError, ConnectionResetError):
        handler.end_headers()
        handler.wfile.write(data)
