"""A fake Slack Web API on 127.0.0.1: the transport-layer test double for Slack.

respx cannot intercept slack_sdk (urllib and aiohttp), so tests point a real
client at a real HTTP server: `WebClient(token=..., base_url=fake.url)`.

    with running_fake_slack() as fake:
        WebClient(token="xoxb-test", base_url=fake.url).chat_postMessage(channel="C1", text="hi")
        assert fake.calls_to("chat.postMessage")[0].body["text"] == "hi"

Implemented: chat.postMessage, chat.update, conversations.history,
conversations.replies, auth.test, and an incoming webhook at `/webhook/incoming`.
Bodies may be JSON or form-encoded (JSON-valued fields such as `blocks` and
`metadata` are decoded); query-string parameters are merged in.

Interactivity, the other direction: `click(channel, ts, user=..., action_id=..., value_has=...)`
builds the `block_actions` request Slack would post to the app's Interactivity URL when that
user clicks a button of a stored message (form-encoded `payload=`, signed with
`signing_secret` as Slack signs: `X-Slack-Signature`, `X-Slack-Request-Timestamp`).

Faithful where tests could otherwise pass against the fake and fail against Slack:
- a missing token is `not_authed`; a wrong one (when `token=` is set) `invalid_auth`;
- 429 carries `Retry-After` and `{"ok": false, "error": "ratelimited"}`;
- blocks are checked against Block Kit limits (`invalid_blocks`, `msg_blocks_too_long`),
  those inside attachments too, counted with the top-level ones; attachments must be a
  list of at most 20 objects (`invalid_attachments`, `too_many_attachments`);
- history omits thread replies and returns `metadata` only with `include_all_metadata`;
- channels are echoed as given (real Slack answers with the channel id).

Faults: `fail_next(n, status=429, retry_after=1)`, `fail_next(n, status=500)`,
`fail_next(n, error="channel_not_found")` (HTTP 200, ok:false), optionally for
one `method` only; `set_fault_rates(rate_429=…, rate_500=…, seed=…)` for chaos;
`set_latency(seconds)`. Failed calls are recorded too (`Call.status`, `Call.ok`).

Rate limits: a call of a method to a channel while a Retry-After the fake gave for that
method and channel is still running is marked `Call.early`; with
`set_fault_rates(..., windows=True)` it is also refused with 429 and the time left, as
Slack refuses it (each refused call counts against the app).

Standalone (benchmarks, chaos scripts): `python -m tests.fakeslack --port 0`
prints the base URL; `GET /_fake/calls` (`?since=N`: those after the first N),
`POST /_fake/fail_next`, `POST /_fake/fault_rates` and `POST /_fake/reset` drive it from
outside.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import math
import random
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.loopback import LoopbackServer, answer

__all__ = ["Call", "FakeSlack", "running_fake_slack", "signed_headers"]

JSON_FIELDS = ("blocks", "attachments", "metadata")
BOT_USER = "U0FAKEBOT"
BOT_ID = "B0FAKEBOT"


@dataclass(frozen=True)
class Call:
    """One request as the fake saw it; `headers` keys are lower-case."""

    method: str
    body: dict[str, Any]
    headers: dict[str, str]
    status: int
    ok: bool
    #: It came while a Retry-After this fake gave for its method and channel still ran.
    early: bool = False


@dataclass(frozen=True)
class _Fault:
    status: int
    error: str | None
    retry_after: int
    method: str | None
    processed: bool = False


@dataclass(frozen=True)
class _Reply:
    status: int
    payload: dict[str, Any] | str
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        if isinstance(self.payload, str):
            return self.status == 200
        return self.status == 200 and bool(self.payload.get("ok"))


def _error(error: str, status: int = 200, **extra: Any) -> _Reply:
    return _Reply(status, {"ok": False, "error": error, **extra})


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _blocks_error(blocks: Any) -> str | None:
    """Block Kit limits (DESIGN §2); Slack's exact total-length rule is approximated."""
    if not isinstance(blocks, list):
        return "invalid_blocks_format"
    if len(blocks) > 50:
        return "invalid_blocks"
    for block in blocks:
        if not isinstance(block, dict) or "type" not in block:
            return "invalid_blocks_format"
        text = block.get("text")
        text_len = len(text.get("text", "")) if isinstance(text, dict) else 0
        if block["type"] == "header" and (text_len > 150 or text_len == 0):
            return "invalid_blocks"
        if block["type"] == "section" and text_len > 3000:
            return "invalid_blocks"
        if block["type"] == "context" and not 0 < len(block.get("elements", [])) <= 10:
            return "invalid_blocks"
    if len(json.dumps(blocks, ensure_ascii=False)) > 13_000:
        return "msg_blocks_too_long"
    return None


def _attachments_error(body: dict[str, Any]) -> str | None:
    """Attachments as Slack takes them: objects with a `blocks` list (or legacy text), their
    blocks within the same limits as the message's, counted together with them."""
    attachments = body.get("attachments")
    if attachments is None:
        return None
    if not isinstance(attachments, list) or not all(isinstance(a, dict) for a in attachments):
        return "invalid_attachments"
    if len(attachments) > 20:
        return "too_many_attachments"
    inner = [b for a in attachments for b in a.get("blocks") or []]
    if not all(isinstance(a.get("blocks", []), list) for a in attachments):
        return "invalid_attachments"
    top = body.get("blocks") or []
    return _blocks_error(list(top) + inner) if isinstance(top, list) else None


class FakeSlack:
    """The server and its recorded state; all state is guarded by one lock."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        validate_blocks: bool = True,
    ) -> None:
        self._address = (host, port)
        self.token = token
        self.validate_blocks = validate_blocks
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._faults: deque[_Fault] = deque()
        self._rates = (0.0, 0.0, 1)
        self._windows = False
        #: (method, channel) -> when the last Retry-After given for it ends (monotonic);
        #: a refusal inside it does not extend it.
        self._limited: dict[tuple[str, str], float] = {}
        self._rng = random.Random()
        self._latency = 0.0
        self._last_ts_us = 0
        self._server = LoopbackServer(self._address, _handler_for(self), "fake-slack")
        self._connections = 0

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> FakeSlack:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (HTTP/1.1: a client may keep one open)."""
        with self._lock:
            return self._connections

    def _connected(self) -> None:
        with self._lock:
            self._connections += 1

    @property
    def port(self) -> int:
        port = self._server.port
        if port is None:
            raise RuntimeError(
                "FakeSlack is not running: call start() or use it as a context manager"
            )
        return port

    @property
    def origin(self) -> str:
        host = self._address[0]
        return f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{self.port}"

    @property
    def url(self) -> str:
        """The `base_url` for WebClient / AsyncWebClient."""
        return f"{self.origin}/api/"

    @property
    def webhook_url(self) -> str:
        return f"{self.origin}/webhook/incoming"

    # --- inspection --------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def click(
        self,
        channel: str,
        ts: str,
        *,
        user: str,
        action_id: str,
        value_has: str = "",
        signing_secret: str,
        timestamp: int | None = None,
    ) -> tuple[bytes, dict[str, str]]:
        """Body and headers of Slack's request for a click on the first button `action_id`
        of message `ts` whose value contains `value_has` (KeyError: no such button)."""
        with self._lock:
            message = self._find(channel, ts)
            if message is None:
                raise KeyError(f"no message {ts} in {channel}")
            message = json.loads(json.dumps(message))
        blocks = [*message.get("blocks", [])]
        for card in message.get("attachments", []):
            blocks += card.get("blocks", [])
        for block in blocks:
            for element in block.get("elements", []) if block.get("type") == "actions" else []:
                if element.get("action_id") == action_id and value_has in element.get("value", ""):
                    action = {
                        "type": "button",
                        "block_id": block.get("block_id", ""),
                        "action_id": action_id,
                        "value": element.get("value", ""),
                        "action_ts": f"{time.time():.6f}",
                    }
                    break
            else:
                continue
            break
        else:
            raise KeyError(f"no {action_id} button with {value_has!r} on message {ts}")
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "team_id": "T0FAKE"},
            "api_app_id": "A0FAKE",
            "container": {"type": "message", "message_ts": ts, "channel_id": channel},
            "channel": {"id": channel, "name": "oncall"},
            "message": message,
            "response_url": f"{self.origin}/actions/T0FAKE/1/x",
            "actions": [action],
        }
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return body, signed_headers(body, signing_secret, timestamp)

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """Stored messages of a channel, thread replies included, newest first."""
        with self._lock:
            return [dict(m) for m in reversed(self._messages.get(channel, []))]

    # --- faults ------------------------------------------------------------------------

    def fail_next(
        self,
        n: int = 1,
        status: int = 429,
        retry_after: int = 1,
        error: str | None = None,
        *,
        method: str | None = None,
        processed: bool = False,
    ) -> None:
        """Fail the next `n` requests (to `method` only, if given).

        With `error`, Slack's logical failure: HTTP 200 and `{"ok": false, "error": error}`.
        Otherwise HTTP `status`; a 429 carries `Retry-After: retry_after`.
        With `processed=True` the request still takes effect (the message is stored)
        and only the answer fails: Slack posted, but the client never learned the ts.
        """
        fault = _Fault(200 if error else status, error, retry_after, method, processed)
        with self._lock:
            self._faults.extend([fault] * n)

    def set_fault_rates(
        self,
        rate_429: float = 0.0,
        rate_500: float = 0.0,
        *,
        seed: int | None = None,
        retry_after: int = 1,
        windows: bool = False,
    ) -> None:
        """Fail each request at random with these probabilities (after any `fail_next`);
        with `windows`, also refuse every call inside a Retry-After given before."""
        if rate_429 < 0 or rate_500 < 0 or rate_429 + rate_500 > 1:
            raise ValueError("fault rates must be >= 0 and sum to at most 1")
        with self._lock:
            self._rates = (rate_429, rate_500, retry_after)
            self._windows = windows
            self._rng = random.Random(seed)

    def set_latency(self, seconds: float) -> None:
        """Delay every answer, to test client timeouts."""
        with self._lock:
            self._latency = seconds

    def reset(self) -> None:
        """Forget calls, messages, faults and latency."""
        with self._lock:
            self._calls.clear()
            self._messages.clear()
            self._faults.clear()
            self._rates = (0.0, 0.0, 1)
            self._windows = False
            self._limited.clear()
            self._latency = 0.0

    # --- request handling (called from server threads) ---------------------------------

    def _take_fault(self, method: str) -> _Fault | None:
        with self._lock:
            for i, fault in enumerate(self._faults):
                if fault.method in (None, method):
                    del self._faults[i]
                    return fault
            rate_429, rate_500, retry_after = self._rates
            if rate_429 or rate_500:
                roll = self._rng.random()
                if roll < rate_429:
                    return _Fault(429, None, retry_after, None)
                if roll < rate_429 + rate_500:
                    return _Fault(500, None, retry_after, None)
        return None

    @staticmethod
    def _fault_reply(fault: _Fault, *, webhook: bool) -> _Reply:
        retry = (("Retry-After", str(fault.retry_after)),) if fault.status == 429 else ()
        if webhook:  # incoming webhooks answer in plain text, errors as 4xx
            if fault.error:
                return _Reply(404 if fault.error == "channel_not_found" else 400, fault.error)
            return _Reply(fault.status, "rate_limited" if retry else "internal_error", retry)
        if fault.error:
            return _error(fault.error)
        if retry:
            return _Reply(429, {"ok": False, "error": "ratelimited"}, retry)
        return _error("internal_error", fault.status)

    def _handle(self, method: str, body: dict[str, Any], headers: dict[str, str]) -> _Reply:
        latency = self._latency
        if latency:
            time.sleep(latency)
        target = (method, str(body.get("channel", "")))
        with self._lock:
            left = self._limited.get(target, 0.0) - time.monotonic()
            refuse = left > 0 and self._windows
        fault = _Fault(429, None, math.ceil(left), None) if refuse else self._take_fault(method)
        if fault is None:
            reply = self._serve(method, body, headers)
        else:
            if fault.processed:
                self._serve(method, body, headers)
            reply = self._fault_reply(fault, webhook=method == "webhook.incoming")
        with self._lock:
            if fault is not None and fault.status == 429 and not refuse:
                ends = time.monotonic() + fault.retry_after
                self._limited[target] = max(self._limited.get(target, 0.0), ends)
            self._calls.append(Call(method, body, headers, reply.status, reply.ok, left > 0))
        return reply

    def _serve(self, method: str, body: dict[str, Any], headers: dict[str, str]) -> _Reply:
        if method == "webhook.incoming":
            return self._webhook(body)
        return self._api(method, body, headers)

    def _api(self, method: str, body: dict[str, Any], headers: dict[str, str]) -> _Reply:
        auth = headers.get("authorization", "")
        token = auth[7:] if auth.lower().startswith("bearer ") else str(body.get("token", ""))
        if not token:
            return _error("not_authed")
        if self.token is not None and token != self.token:
            return _error("invalid_auth")
        handler = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
        }.get(method)
        if handler is None:
            return _error("unknown_method")
        return handler(body)

    def _next_ts(self) -> str:
        now_us = max(int(time.time() * 1_000_000), self._last_ts_us + 1)
        self._last_ts_us = now_us
        return f"{now_us // 1_000_000}.{now_us % 1_000_000:06d}"

    def _content_error(self, body: dict[str, Any]) -> str | None:
        if not (body.get("text") or body.get("blocks") or body.get("attachments")):
            return "no_text"
        if len(str(body.get("text", ""))) > 40_000:
            return "msg_too_long"
        if self.validate_blocks and "blocks" in body:
            problem = _blocks_error(body["blocks"])
            if problem:
                return problem
        return _attachments_error(body) if self.validate_blocks else None

    def _auth_test(self, body: dict[str, Any]) -> _Reply:
        return _Reply(
            200,
            {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": "Fake Team",
                "user": "fakebot",
                "team_id": "T0FAKE",
                "user_id": BOT_USER,
                "bot_id": BOT_ID,
            },
        )

    def _post_message(self, body: dict[str, Any]) -> _Reply:
        channel = str(body.get("channel") or "")
        if not channel:
            return _error("channel_not_found")
        problem = self._content_error(body)
        if problem:
            return _error(problem)
        with self._lock:
            ts = self._next_ts()
            message: dict[str, Any] = {
                "type": "message",
                "user": BOT_USER,
                "bot_id": BOT_ID,
                "ts": ts,
                "text": body.get("text", ""),
            }
            for key in ("blocks", "attachments", "metadata", "thread_ts"):
                if key in body:
                    message[key] = body[key]
            if _truthy(body.get("reply_broadcast")):
                message["reply_broadcast"] = True
            self._messages.setdefault(channel, []).append(message)
            return _Reply(200, {"ok": True, "channel": channel, "ts": ts, "message": dict(message)})

    def _find(self, channel: str, ts: str) -> dict[str, Any] | None:
        return next((m for m in self._messages.get(channel, []) if m["ts"] == ts), None)

    def _update(self, body: dict[str, Any]) -> _Reply:
        channel, ts = str(body.get("channel") or ""), str(body.get("ts") or "")
        if not ts:
            return _error("invalid_arguments")
        problem = self._content_error(body)
        if problem:
            return _error(problem)
        with self._lock:
            if channel not in self._messages:
                return _error("channel_not_found")
            message = self._find(channel, ts)
            if message is None:
                return _error("message_not_found")
            for key in ("text", "blocks", "attachments", "metadata"):
                if key in body:
                    message[key] = body[key]
            message["edited"] = {"user": BOT_USER, "ts": self._next_ts()}
            reply = {"ok": True, "channel": channel, "ts": ts, "text": message["text"]}
            return _Reply(200, {**reply, "message": dict(message)})

    def _visible(self, message: dict[str, Any], with_metadata: bool) -> dict[str, Any]:
        shown = dict(message)
        if not with_metadata:
            shown.pop("metadata", None)
        return shown

    def _page(self, messages: list[dict[str, Any]], body: dict[str, Any]) -> dict[str, Any]:
        with_metadata = _truthy(body.get("include_all_metadata"))
        inclusive = _truthy(body.get("inclusive"))
        oldest, latest = body.get("oldest"), body.get("latest")
        limit = int(body.get("limit") or 100)
        start = int(body.get("cursor") or 0)
        kept = [
            m
            for m in messages
            if (oldest is None or (m["ts"] >= str(oldest) if inclusive else m["ts"] > str(oldest)))
            and (latest is None or (m["ts"] <= str(latest) if inclusive else m["ts"] < str(latest)))
        ]
        page = kept[start : start + limit]
        more = len(kept) > start + limit
        return {
            "ok": True,
            "messages": [self._visible(m, with_metadata) for m in page],
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _history(self, body: dict[str, Any]) -> _Reply:
        channel = str(body.get("channel") or "")
        with self._lock:
            # Real channels exist before anything is posted: unknown ones read as empty.
            stored = self._messages.get(channel, [])
            top = [
                m
                for m in reversed(stored)
                if m.get("thread_ts") in (None, m["ts"]) or m.get("reply_broadcast")
            ]
            return _Reply(200, self._page(top, body))

    def _replies(self, body: dict[str, Any]) -> _Reply:
        channel, ts = str(body.get("channel") or ""), str(body.get("ts") or "")
        with self._lock:
            if channel not in self._messages:
                return _error("channel_not_found")
            parent = self._find(channel, ts)
            if parent is None:
                return _error("thread_not_found")
            thread = [parent] + [
                m for m in self._messages[channel] if m.get("thread_ts") == ts and m is not parent
            ]
            return _Reply(200, self._page(thread, body))

    def _webhook(self, body: dict[str, Any]) -> _Reply:
        if not (body.get("text") or body.get("blocks") or body.get("attachments")):
            return _Reply(400, "no_text")
        if self.validate_blocks:
            problem = _blocks_error(body["blocks"]) if "blocks" in body else None
            if problem or _attachments_error(body):
                return _Reply(400, "invalid_blocks")
        return _Reply(200, "ok")

    # --- out-of-process control (standalone mode) ------------------------------------

    def _control(self, action: str, body: dict[str, Any]) -> _Reply:
        if action == "calls":  # `since`: only the calls after the first `since`
            since = int(body.get("since", 0))
            return _Reply(200, {"ok": True, "calls": [asdict(c) for c in self.calls[since:]]})
        if action == "fail_next":
            self.fail_next(
                int(body.get("n", 1)),
                status=int(body.get("status", 429)),
                retry_after=int(body.get("retry_after", 1)),
                error=body.get("error"),
                method=body.get("method"),
                processed=_truthy(body.get("processed")),
            )
        elif action == "fault_rates":
            seed = body.get("seed")
            self.set_fault_rates(
                float(body.get("rate_429", 0.0)),
                float(body.get("rate_500", 0.0)),
                seed=None if seed is None else int(seed),
                retry_after=int(body.get("retry_after", 1)),
                windows=_truthy(body.get("windows")),
            )
        elif action == "reset":
            self.reset()
        else:
            return _Reply(404, {"ok": False, "error": "unknown_control"})
        return _Reply(200, {"ok": True})


def signed_headers(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's signature headers for `body` (now, unless `timestamp` says otherwise)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": ts,
        "x-slack-signature": "v0=" + digest,
    }


def _parse_body(raw: bytes, content_type: str, query: str) -> dict[str, Any]:
    body: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    if not raw:
        return body
    if "json" in content_type:
        decoded = json.loads(raw.decode("utf-8"))
        if isinstance(decoded, dict):
            body.update(decoded)
        return body
    form = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
    if set(form) == {"payload"}:  # incoming webhooks also take payload=<json>
        form = json.loads(form["payload"])
    body.update(form)
    for key in JSON_FIELDS:
        value = body.get(key)
        if isinstance(value, str):
            with suppress(json.JSONDecodeError):
                body[key] = json.loads(value)
    return body


def _handler_for(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeSlack/1"
        # Keep-alive, as Slack's API does: every answer carries its Content-Length. Headers
        # and body are two writes, so Nagle would hold the body for the client's delayed
        # ACK (40 ms an answer on a kept-alive connection): TCP_NODELAY.
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            fake._connected()

        def log_message(self, format: str, *args: Any) -> None:
            """Silence per-request logging; tests read `fake.calls` instead."""

        def do_GET(self) -> None:
            self._dispatch()

        def do_POST(self) -> None:
            self._dispatch()

        def _dispatch(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = _parse_body(raw, self.headers.get("Content-Type", ""), parts.query)
            except (ValueError, UnicodeDecodeError):
                self._send(_error("invalid_json" if raw[:1] in b"{[" else "invalid_form_data"))
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = parts.path
            if path.startswith("/api/"):
                self._send(fake._handle(path[len("/api/") :], body, headers))
            elif path == "/webhook/incoming" and self.command == "POST":
                self._send(fake._handle("webhook.incoming", body, headers))
            elif path.startswith("/_fake/"):
                self._send(fake._control(path[len("/_fake/") :], body))
            else:
                self._send(_Reply(404, "not found"))

        def _send(self, reply: _Reply) -> None:
            if isinstance(reply.payload, str):
                data, content_type = reply.payload.encode(), "text/plain; charset=utf-8"
            else:
                data = json.dumps(reply.payload).encode()
                content_type = "application/json; charset=utf-8"
            answer(self, reply.status, data, content_type, reply.headers)

    return Handler


@contextmanager
def running_fake_slack(**kwargs: Any) -> Iterator[FakeSlack]:
    """A started FakeSlack for a `with` block (or a pytest fixture's `yield`)."""
    fake = FakeSlack(**kwargs).start()
    try:
        yield fake
    finally:
        fake.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the fake Slack Web API until interrupted.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--token", default=None, help="accept only this bot token")
    parser.add_argument("--rate-429", type=float, default=0.0)
    parser.add_argument("--rate-500", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    with running_fake_slack(host=args.host, port=args.port, token=args.token) as fake:
        fake.set_fault_rates(args.rate_429, args.rate_500, seed=args.seed)
        print(fake.url, flush=True)
        done.wait()


if __name__ == "__main__":
    main()
