"""How the service listens: its socket, bound before anything starts, and uvicorn set up with
the read deadlines and the connection cap uvicorn does not have.

uvicorn times out an idle keep-alive connection, but nothing while a request is arriving: a
client that opens a connection and stalls, or sends half its headers, or headers and part of
a body, holds that connection and a file descriptor for ever (321 such clients held 341 open
files for 151 s, issue 18). Its `limit_concurrency` counts connections only once a request's
headers are complete, so it never sees those clients either. `DeadlineProtocol` adds, per
connection:

- headers complete within HEADER_TIMEOUT_S of the request's first byte (of the connection
  opening, for the first request), else 408 and close;
- the body complete within BODY_TIMEOUT_S of the headers, else 408 (or, when the app has
  already answered, just the close); the app sees a client disconnect;
- at most MAX_CONNECTIONS open: past it a new connection is answered 503 (Alertmanager and
  PagerDuty retry a 5xx) and closed before anything is read;
- headers read up to MAX_BODY_BYTES, so that the app can answer a large one with its 431
  (enricher.app); past that, 431 and close without reading more (llhttp sets no bound).

Both are deadlines, not idle timers, so a client trickling a byte a second is cut off too.
The time between requests on a kept-alive connection stays uvicorn's (KEEP_ALIVE_S).

The 408 and the 431 close by lingering: the answer, then a FIN, then whatever the client
still sends read and dropped until it closes or LINGER_S pass. Closed outright, a socket
that receives one more byte (a trickler's next one, the rest of large headers) answers with
a reset, and the reset makes the client's kernel drop the answer it had not read yet: the
sender saw "connection reset" instead of the 408 (a CI run, 2026-12-05; RFC 9112 §9.6).

The protocol is uvicorn's httptools one, on uvloop: against h11, `GET /healthz` went from
1.4 to 1.0-1.1 ms p50 on the 2-core machine, and a webhook's ack with the workers held
from 4.0 to 3.3 ms (docs/PERFORMANCE.md, issue 23).
"""

from __future__ import annotations

import asyncio
import resource
import socket
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import httptools
import structlog
import uvicorn
from starlette.types import ASGIApp
from uvicorn.config import Config
from uvicorn.lifespan.on import LifespanOn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from enricher.errors import ConfigError
from enricher.settings import Settings

log = structlog.get_logger(__name__)

Phase = Literal["headers", "body"]
#: Open files the process needs besides its connections: Redis pools, the shard's files,
#: the models, the log streams, with room to spare.
SPARE_FILES = 256
#: Graceful shutdown waits this long for requests in flight.
SHUTDOWN_GRACE_S = 15
#: A refused connection is closed this long after its answer at the latest (module docstring).
LINGER_S = 2.0


@dataclass(frozen=True)
class Limits:
    header_timeout_s: float
    body_timeout_s: float
    max_connections: int
    #: Bytes of request line and headers read before the connection is refused (431).
    max_header_read: int

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            settings.header_timeout_s,
            settings.body_timeout_s,
            settings.max_connections,
            settings.max_body_bytes,
        )


def _plain(status: str, text: str, *extra: str) -> bytes:
    """A whole HTTP/1.1 response that closes the connection, written by hand: at these points
    no request may have been read, so uvicorn's response cycle cannot send one."""
    body = text.encode()
    head = [f"HTTP/1.1 {status}", "content-type: text/plain; charset=utf-8",
            f"content-length: {len(body)}", "connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _HeadersTooLarge(Exception):
    """Raised from a parser callback to stop parsing a request whose headers are too large."""


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the deadlines and caps of the module docstring."""

    limits: ClassVar[Limits]

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._deadline: asyncio.TimerHandle | None = None
        self._phase: Phase | None = None
        self._header_bytes = 0
        self._lingering = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            log.warning(
                "http.connection_refused",
                limit=self.limits.max_connections,
                client=self.client[0] if self.client else None,
                fix="raise MAX_CONNECTIONS if these are real senders",
            )
            self.transport.write(
                _plain("503 Service Unavailable", "too many connections", "retry-after: 1")
            )
            self.transport.close()
            return
        self._arm("headers")

    def data_received(self, data: bytes) -> None:
        """uvicorn's, except that headers over the cap get a 431 where it would send a 400, and
        that what arrives after a refusal is dropped unread."""
        if self._lingering:
            return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError as exc:
            if isinstance(exc.__context__, _HeadersTooLarge):
                self._refuse_headers()
                return
            log.warning("http.bad_request", error=str(exc)[:200],
                        client=self.client[0] if self.client else None)
            self.send_400_response("Invalid HTTP request received.")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    # Parser callbacks: they move the deadline along with the request, headers then body.

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_bytes = 0
        if self._phase is None:
            self._arm("headers")  # the first byte of the next request on a kept-alive connection

    def on_url(self, url: bytes) -> None:
        self._count_header_bytes(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_header_bytes(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._arm("body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def _count_header_bytes(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > self.limits.max_header_read:
            raise _HeadersTooLarge

    def _refuse_headers(self) -> None:
        """431 and close, before the app sees the request (see `data_received`)."""
        self._disarm()
        log.warning(
            "http.headers_too_large",
            limit=self.limits.max_header_read,
            client=self.client[0] if self.client else None,
        )
        self._refuse(_plain(
            "431 Request Header Fields Too Large",
            f"request headers over {self.limits.max_header_read} bytes",
        ))

    def _arm(self, phase: Phase) -> None:
        self._disarm()
        limit = self.limits.header_timeout_s if phase == "headers" else self.limits.body_timeout_s
        self._phase = phase
        self._deadline = self.loop.call_later(limit, self._expire, phase, limit)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._phase = None, None

    def _expire(self, phase: Phase, limit: float) -> None:
        self._deadline, self._phase = None, None
        if self.transport.is_closing():
            return
        where = {"path": self.scope["path"]} if phase == "body" else {}
        log.warning(
            "http.read_timeout",
            phase=phase,
            timeout_s=limit,
            client=self.client[0] if self.client else None,
            **where,
        )
        answered = phase == "body" and self.cycle is not None and self.cycle.response_started
        if answered:
            self.transport.close()
            return
        self._refuse(
            _plain("408 Request Timeout", f"request {phase} not received within {limit:g} s")
        )

    def _refuse(self, answer: bytes) -> None:
        """Sends `answer` and a FIN, then drops what the client still sends until it closes
        or LINGER_S pass (module docstring). An app still waiting for the body sees the
        client disconnect now, not at the close."""
        self._lingering = True
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.write(answer)
        self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


def protocol_for(limits: Limits) -> type[DeadlineProtocol]:
    """A `DeadlineProtocol` class bound to `limits` (uvicorn builds one per connection)."""
    return type("BoundDeadlineProtocol", (DeadlineProtocol,), {"limits": limits})


def fit_open_files(max_connections: int) -> None:
    """Raise the soft open-files limit to fit MAX_CONNECTIONS and SPARE_FILES (ConfigError
    when the hard limit is lower): a cap the process cannot reach protects nothing, and
    running out of descriptors would fail Redis calls, not only new connections."""
    need = max_connections + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise ConfigError(
                f"MAX_CONNECTIONS={max_connections} needs about {need} open files but the "
                f"process may open {hard} (ulimit -Hn): lower MAX_CONNECTIONS to at most "
                f"{max(1, hard - SPARE_FILES)} or raise the limit"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def bind(host: str, port: int) -> socket.socket:
    """The listening address, bound now (not yet listening: until the server is up, a
    client is refused rather than left waiting), so a bad HOST or PORT, or a port in use,
    is a ConfigError before any model is loaded or worker started."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise ConfigError(
            f"HOST={host!r} is not an address of this machine ({exc.strerror}): set HOST to "
            "an IP address or host name to listen on, such as 0.0.0.0 or 127.0.0.1"
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on HOST={host!r} PORT={port} ({exc.strerror}): stop what holds "
            "the port or set PORT to a free one, and HOST to an address of this machine"
        ) from None
    return sock


class _Server(uvicorn.Server):
    """uvicorn's server, except that a second Ctrl-C, which stops its wait for open
    connections, does not also skip the app's shutdown: the workers still stop in order,
    and the process ends without a traceback of the lifespan cancelled under it."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets)
        if isinstance(self.lifespan, LifespanOn) and not self.lifespan.shutdown_event.is_set():
            await self.lifespan.shutdown()


def server(app: ASGIApp, settings: Settings) -> uvicorn.Server:
    """uvicorn serving `app` with the service's limits; run it with `.run(sockets=[bind(...)])`."""
    return _Server(
        uvicorn.Config(
            app,
            log_level=settings.log_level.lower(),
            log_config=None,  # uvicorn's lines go through enricher.logs
            access_log=False,
            # Outlast the senders' idle connections (settings.keep_alive_s).
            timeout_keep_alive=int(settings.keep_alive_s),
            http=protocol_for(Limits.from_settings(settings)),
            loop="uvloop",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
    )


__all__ = ["DeadlineProtocol", "Limits", "bind", "fit_open_files", "protocol_for", "server"]
