"""A fake PagerDuty REST API on 127.0.0.1, incident notes only: the transport-layer double
for the service's note client in end-to-end and crash tests (respx covers the unit tests).

    with running_fake_pagerduty() as fake:
        settings = Settings(pagerduty_api_url=fake.url, pagerduty_api_token=fake.token, ...)
        ...
        assert [n["content"] for n in fake.notes("Q1ABC")] == [...]

Implemented as PagerDuty documents it: `POST /incidents/{id}/notes` with `{"note":
{"content"}}` answers 201 `{"note": {"id", "user", "content", "created_at"}}`;
`GET /incidents/{id}/notes` answers `{"notes": [...]}`. Faithful where a test could pass
against the fake and fail against PagerDuty: `Authorization: Token token=<key>` is checked
(401 without one, 403 for another key), the `Accept` header must name version 2 (406),
`From:` must be a known user's email when the fake has `users` (400 "Requester User Not
Found"), and an incident not in `incidents` (when given) is 404. Error bodies have
PagerDuty's shape `{"error": {"message", "code", "errors"}}`.

Faults: `fail_next(n, status=429, retry_after=…, reset=…)` (`Retry-After` and/or
`ratelimit-reset`), `fail_next(n, status=500)`; `set_fault_rates(rate_429, rate_500,
seed=…)` for chaos, where half the 500s come after the note was stored (PagerDuty kept it
but answered an error); `set_latency(s)`: a note is stored when its
request arrives and answered `s` later (so a client killed meanwhile has added it). Every
request is recorded (`calls`), also those answered with an error.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.loopback import LoopbackServer, answer

__all__ = ["FakePagerDuty", "NoteCall", "running_fake_pagerduty"]

ACCEPT = "application/vnd.pagerduty+json;version=2"
TOKEN = "u+fakePagerDutyKey"


@dataclass(frozen=True)
class NoteCall:
    method: str
    incident: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int


@dataclass(frozen=True)
class _Fault:
    status: int
    retry_after: float | None
    reset: float | None


Reply = tuple[int, Any, list[tuple[str, str]]]


def _error(status: int, message: str, code: int, *errors: str) -> Reply:
    return status, {"error": {"message": message, "code": code, "errors": list(errors)}}, []


class FakePagerDuty:
    def __init__(
        self,
        *,
        token: str = TOKEN,
        users: tuple[str, ...] = ("oncall-bot@example.com",),
        incidents: tuple[str, ...] | None = None,
    ) -> None:
        self.token = token
        self.users = users
        self.incidents = incidents
        self._lock = threading.Lock()
        self._calls: list[NoteCall] = []
        self._notes: dict[str, list[dict[str, Any]]] = {}
        self._faults: deque[_Fault] = deque()
        self._latency = 0.0
        self._rates = (0.0, 0.0)
        self._rng = random.Random()
        self._server = LoopbackServer(("127.0.0.1", 0), _handler_for(self), "fake-pd")

    def start(self) -> FakePagerDuty:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        port = self._server.port
        if port is None:
            raise RuntimeError("FakePagerDuty is not running: call start()")
        return f"http://127.0.0.1:{port}"

    # --- inspection and faults -----------------------------------------------------

    @property
    def calls(self) -> list[NoteCall]:
        with self._lock:
            return list(self._calls)

    def posts(self) -> list[NoteCall]:
        return [c for c in self.calls if c.method == "POST"]

    def notes(self, incident: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._notes.get(incident, []))

    def all_notes(self) -> dict[str, list[dict[str, Any]]]:
        with self._lock:
            return {k: list(v) for k, v in self._notes.items()}

    def fail_next(
        self, n: int = 1, *, status: int = 429, retry_after: float | None = None,
        reset: float | None = None,
    ) -> None:
        with self._lock:
            self._faults.extend(_Fault(status, retry_after, reset) for _ in range(n))

    def set_fault_rates(self, rate_429: float, rate_500: float, *, seed: int = 1) -> None:
        with self._lock:
            self._rates = (rate_429, rate_500)
            self._rng = random.Random(seed)

    def _random_fault(self) -> tuple[_Fault | None, bool]:
        """A chaos fault for this request, and whether it comes after storing the note."""
        with self._lock:
            draw = self._rng.random()
            after = self._rng.random() < 0.5
            rate_429, rate_500 = self._rates
        if draw < rate_429:
            return _Fault(429, 1.0, None), False
        if draw < rate_429 + rate_500:
            return _Fault(500, None, None), after
        return None, False

    def set_latency(self, seconds: float) -> None:
        with self._lock:
            self._latency = seconds

    # --- the API -----------------------------------------------------------------------

    def _handle(
        self, method: str, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Reply:
        parts = path.strip("/").split("/")
        if len(parts) != 3 or parts[0] != "incidents" or parts[2] != "notes":
            return _error(404, "Not Found", 2100)
        incident = unquote(parts[1])
        reply = self._reply(method, incident, body, headers)
        with self._lock:
            self._calls.append(NoteCall(method, incident, body, headers, reply[0]))
        return reply

    def _reply(
        self, method: str, incident: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Reply:
        auth = headers.get("authorization", "")
        if not auth.startswith("Token token="):
            return _error(401, "Unauthorized", 2006)
        if auth != f"Token token={self.token}":
            return _error(403, "Forbidden", 2010, "Access Denied")
        if headers.get("accept") != ACCEPT:
            return _error(406, "Not Acceptable", 2001)
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        stored_first = False
        if fault is None:
            fault, stored_first = self._random_fault()
        if fault is None:
            return self._serve(method, incident, body, headers)
        if stored_first and method == "POST":
            self._serve(method, incident, body, headers)  # kept, then answered an error
        status, payload, extra = _error(fault.status, "fault", 2020)
        if fault.retry_after is not None:
            extra.append(("Retry-After", str(fault.retry_after)))
        if fault.reset is not None:
            extra.append(("ratelimit-reset", str(fault.reset)))
        return status, payload, extra

    def _serve(
        self, method: str, incident: str, body: dict[str, Any], headers: dict[str, str]
    ) -> Reply:
        if self.incidents is not None and incident not in self.incidents:
            return _error(404, "Not Found", 2100, "Incident Not Found")
        if method == "GET":
            return 200, {"notes": self.notes(incident)}, []
        if self.users and headers.get("from") not in self.users:
            return _error(400, "Invalid Input Provided", 2001, "Requester User Not Found")
        content = (body.get("note") or {}).get("content")
        if not isinstance(content, str) or not content:
            return _error(400, "Invalid Input Provided", 2001, "Note content can't be blank")
        with self._lock:
            stored = self._notes.setdefault(incident, [])
            note = {
                "id": f"PNOTE{sum(map(len, self._notes.values())) + 1:04d}",
                "user": {"id": "PUSER01", "type": "user_reference",
                         "summary": headers.get("from", "")},
                "content": content,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            stored.append(note)
        return 201, {"note": note}, []


def _handler_for(fake: FakePagerDuty) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Tests read `fake.calls`."""

        def do_GET(self) -> None:
            self._dispatch()

        def do_POST(self) -> None:
            self._dispatch()

        def _dispatch(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            if not isinstance(body, dict):
                status, payload, extra = _error(400, "Invalid Input Provided", 2001)
            else:
                status, payload, extra = fake._handle(
                    self.command, urlsplit(self.path).path, body, headers
                )
            with fake._lock:
                latency = fake._latency
            if latency:
                time.sleep(latency)
            answer(self, status, json.dumps(payload).encode(), "application/json", extra)

    return Handler


@contextmanager
def running_fake_pagerduty(**kwargs: Any) -> Iterator[FakePagerDuty]:
    fake = FakePagerDuty(**kwargs).start()
    try:
        yield fake
    finally:
        fake.stop()
