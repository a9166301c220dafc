"""Getting a rendered message to Slack: bot token (Web API), incoming webhook, or the console.

Every failure becomes `DeliveryFailed` with `permanent` set, and `retry_after` for 429, so
the worker can decide between retrying later and dead-lettering. Nothing here sleeps or
retries: backoff belongs to the job queue, where it does not block other channels. After a
429, the calls it covers are held back until its Retry-After (enricher.slack.ratelimit).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

import aiohttp
import httpx
import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from enricher.errors import ConfigError, DeliveryFailed
from enricher.settings import Settings
from enricher.slack.ratelimit import Pauses
from enricher.slack.render import SlackMessage

log = structlog.get_logger(__name__)

#: Slack errors about one message: no retry can send it, but the next page may go through.
MESSAGE_ERRORS = frozenset(
    {
        "msg_too_long",
        "msg_blocks_too_long",
        "invalid_blocks",
        "invalid_blocks_format",
        "invalid_attachments",
        "too_many_attachments",
        "no_text",
        "message_not_found",
        "cant_update_message",
        "edit_window_closed",
        "invalid_arguments",
        "invalid_metadata_format",
    }
)
#: Slack errors that no retry can fix and that every page will meet until the
#: configuration is fixed (the token, the channel, the app, the address).
SETUP_ERRORS = frozenset(
    {
        "channel_not_found",
        "channel_is_archived",
        "not_in_channel",
        "is_archived",
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "missing_scope",
        "no_permission",
        "not_allowed_token_type",
        "team_access_not_granted",
        "ekm_access_denied",
        "restricted_action",
        "unknown_method",
        "method_deprecated",
    }
)
PERMANENT_ERRORS = MESSAGE_ERRORS | SETUP_ERRORS
#: HTTP answers of an address that is not (or no longer) a Slack endpoint.
GONE = frozenset({404, 410})
MARKER_EVENT = "runbook_enricher_page"
#: History pages (200 messages each) searched for a marker.
MARKER_PAGES = 10
#: Slack's clock and ours may differ; look a little further back than the job's arrival.
MARKER_CLOCK_SLACK_S = 60.0


@dataclass(frozen=True)
class PostRef:
    channel: str
    ts: str


#: Called by `post` of a delivery without lookups the moment the message has left the
#: process (the request fully written, the document printed), so the caller can note that
#: it was sent. (A reply has left when `reply` returns: there is no answer to wait for.)
OnSent = Callable[[], Awaitable[None]]


class Delivery(Protocol):
    #: Whether posted messages can be edited later (chat.update) and threaded.
    can_update: bool
    #: Whether what was sent can be found again by its marker (`find_marker`, `find_reply`).
    #: A delivery that cannot calls `on_sent` instead, and the ledger keeps the note
    #: (enricher.pipeline.ledger); one that can ignores `on_sent`.
    can_find: bool

    async def post(
        self, channel: str, message: SlackMessage, marker: str, *, on_sent: OnSent | None = None
    ) -> PostRef: ...

    async def update(self, ref: PostRef, message: SlackMessage) -> None: ...

    async def reply(
        self, ref: PostRef, text: str, marker: str, *, broadcast: bool = False
    ) -> None: ...

    async def find_marker(
        self, channel: str, marker: str, since: float | None
    ) -> PostRef | None: ...

    async def find_reply(self, ref: PostRef, marker: str) -> bool: ...

    async def close(self) -> None: ...


def _failure(exc: Exception) -> DeliveryFailed:
    if isinstance(exc, SlackApiError):
        status = exc.response.status_code
        data = exc.response.data  # text, not JSON, when the address is not Slack's API
        error = str((data.get("error") if isinstance(data, dict) else None) or f"http_{status}")
        if status == 429 or error == "ratelimited":
            retry_after = float(exc.response.headers.get("Retry-After", "1") or 1)
            return DeliveryFailed("ratelimited", permanent=False, retry_after=retry_after)
        if error == "unknown_method" or (status in GONE and error not in PERMANENT_ERRORS):
            return _bad_address("SLACK_API_URL", error)
        return DeliveryFailed(error, permanent=error in PERMANENT_ERRORS)
    if isinstance(exc, aiohttp.InvalidURL):
        return _bad_address("SLACK_API_URL", type(exc).__name__)
    return DeliveryFailed(type(exc).__name__, permanent=False)


def _bad_address(setting: str, error: str) -> DeliveryFailed:
    return DeliveryFailed(
        f"{error}: {setting} does not take messages; fix it and restart",
        permanent=True,
    )


_TRANSPORT_ERRORS = (SlackApiError, aiohttp.ClientError, TimeoutError, OSError)


class BotDelivery:
    """chat.postMessage with a bot token (scope chat:write); supports resolve updates."""

    can_update = True
    can_find = True

    def __init__(self, token: str, base_url: str, timeout_s: float = 10.0) -> None:
        self._client = AsyncWebClient(token=token, base_url=base_url, timeout=int(timeout_s))
        self._timeout_s = timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self.pauses = Pauses()

    def _keep_alive(self) -> None:
        """One aiohttp session for the calls of an event loop. Without it slack-sdk opens a
        session per call and closes it after: a TCP and TLS handshake with Slack per page.
        A session belongs to the loop it was made on, so another loop gets its own."""
        loop = asyncio.get_running_loop()
        session = self._client.session
        if session is None or session.closed or self._loop is not loop:
            self._client.session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._timeout_s)
            )
            self._loop = loop

    async def post(
        self, channel: str, message: SlackMessage, marker: str, *, on_sent: OnSent | None = None
    ) -> PostRef:
        response = await self._call(
            "chat.postMessage",
            channel,
            self._client.chat_postMessage,
            channel=channel,
            text=message.text,
            blocks=message.blocks,
            attachments=message.attachments or None,
            unfurl_links=False,
            unfurl_media=False,
            metadata={"event_type": MARKER_EVENT, "event_payload": {"key": marker}},
        )
        return PostRef(channel=str(response["channel"]), ts=str(response["ts"]))

    async def update(self, ref: PostRef, message: SlackMessage) -> None:
        # An empty list (not None) clears attachments a resolve or edit no longer has.
        await self._call(
            "chat.update",
            ref.channel,
            self._client.chat_update,
            channel=ref.channel,
            ts=ref.ts,
            text=message.text,
            blocks=message.blocks,
            attachments=message.attachments,
        )

    async def reply(
        self, ref: PostRef, text: str, marker: str, *, broadcast: bool = False
    ) -> None:
        """A thread reply; `broadcast` also shows it in the channel (reply_broadcast), which
        notifies the channel's watchers as a new message would."""
        await self._call(
            "chat.postMessage",
            ref.channel,
            self._client.chat_postMessage,
            channel=ref.channel,
            thread_ts=ref.ts,
            text=text,
            reply_broadcast=broadcast,
            unfurl_links=False,
            metadata={"event_type": MARKER_EVENT, "event_payload": {"key": marker}},
        )

    async def find_reply(self, ref: PostRef, marker: str) -> bool:
        """Whether the thread under `ref` holds a reply this service sent with `marker`: a
        retried resolve must not reply twice when Slack stored the first reply but its answer
        was lost (or the process died before recording it)."""
        async for _, messages in self._pages(
            "conversations.replies", self._client.conversations_replies, channel=ref.channel,
            ts=ref.ts,
        ):
            if any(m.get("ts") != ref.ts and _has_marker(m, marker) for m in messages):
                return True
        return False

    async def find_marker(self, channel: str, marker: str, since: float | None) -> PostRef | None:
        """Look for a message this service posted with `marker` since `since` (epoch s; the
        job's arrival): closes the window between Slack accepting a post and its `ts` being
        stored. Pages through the channel history from a minute before `since`, so a busy
        channel cannot push the message out of reach (at most MARKER_PAGES pages)."""
        oldest = f"{since - MARKER_CLOCK_SLACK_S:.6f}" if since is not None else None
        async for response, messages in self._pages(
            "conversations.history", self._client.conversations_history, channel=channel,
            oldest=oldest,
        ):
            for message in messages:
                if _has_marker(message, marker):
                    return PostRef(str(response.get("channel") or channel), str(message["ts"]))
        return None

    async def _pages(
        self, name: str, method: Callable[..., Awaitable[Any]], **params: Any
    ) -> AsyncIterator[tuple[Any, list[dict[str, Any]]]]:
        """(response, messages) for up to MARKER_PAGES pages of 200, metadata included."""
        cursor: str | None = None
        for _ in range(MARKER_PAGES):
            response = await self._call(
                name, str(params["channel"]), method, limit=200, include_all_metadata=True,
                cursor=cursor, **params,
            )
            yield response, response.get("messages") or []
            cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
            if not response.get("has_more") or not cursor:
                return

    async def _call(
        self, name: str, target: str, method: Callable[..., Awaitable[Any]], **params: Any
    ) -> Any:
        """One Web API call, unless a 429 for method `name` in channel `target` still holds
        (enricher.slack.ratelimit)."""
        self.pauses.check(name, target)
        self._keep_alive()
        try:
            return await method(**params)
        except _TRANSPORT_ERRORS as exc:
            raise self.pauses.note(name, target, _failure(exc)) from exc

    async def close(self) -> None:
        session = self._client.session
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()


def _has_marker(message: dict[str, Any], marker: str) -> bool:
    meta = message.get("metadata") or {}
    payload = meta.get("event_payload") or {}
    return bool(meta.get("event_type") == MARKER_EVENT and payload.get("key") == marker)


class WebhookDelivery:
    """An incoming webhook: simplest to set up, but messages can't be updated on resolve."""

    can_update = False
    can_find = False

    def __init__(self, url: str, timeout_s: float = 10.0) -> None:
        self._url = url
        self._client = httpx.AsyncClient(timeout=timeout_s)
        self.pauses = Pauses()

    async def post(
        self, channel: str, message: SlackMessage, marker: str, *, on_sent: OnSent | None = None
    ) -> PostRef:
        """POST the message; `on_sent` runs once the request is written in full: from there
        on Slack has it, answer or not (a kill before that leaves no message)."""
        extensions = {} if on_sent is None else {"trace": _when_written(on_sent)}
        self.pauses.check("incoming-webhook", "webhook")
        try:
            response = await self._client.post(
                self._url, json=message.to_kwargs(), extensions=extensions
            )
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise _bad_address("SLACK_WEBHOOK_URL", type(exc).__name__) from exc
        except httpx.HTTPError as exc:
            raise DeliveryFailed(type(exc).__name__, permanent=False) from exc
        if response.status_code == 429:
            retry_after = float(response.headers.get("Retry-After", "1") or 1)
            failure = DeliveryFailed("ratelimited", permanent=False, retry_after=retry_after)
            raise self.pauses.note("incoming-webhook", "webhook", failure)
        if response.status_code >= 500:
            raise DeliveryFailed(f"http_{response.status_code}", permanent=False)
        if response.status_code in GONE:
            # no_service, channel_is_archived: the webhook was removed or its channel is gone
            raise _bad_address("SLACK_WEBHOOK_URL", response.text[:100] or "http_404")
        if response.status_code >= 400:
            # Incoming webhooks answer 4xx with a plain-text reason (invalid_token, ...)
            reason = response.text[:100] or f"http_{response.status_code}"
            raise DeliveryFailed(reason, permanent=True)
        return PostRef(channel=channel, ts="")

    async def update(self, ref: PostRef, message: SlackMessage) -> None:
        await self.post(ref.channel, message, "")

    async def reply(
        self, ref: PostRef, text: str, marker: str, *, broadcast: bool = False
    ) -> None:
        return None

    async def find_marker(self, channel: str, marker: str, since: float | None) -> PostRef | None:
        return None

    async def find_reply(self, ref: PostRef, marker: str) -> bool:
        return False

    async def close(self) -> None:
        await self._client.aclose()


class ConsoleDelivery:
    """No Slack configured: print what would be posted, one JSON document per message.

    Message ids carry the process start time (`console.<epoch ms>.<n>`), so an update after a
    restart names the message it edits, not one of another process with the same counter.
    A post or reply also shows its marker, the key a reader can tell repeats apart by.
    """

    can_update = True
    can_find = False

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout
        self._count = 0
        self._started = time.time_ns() // 1_000_000

    def _emit(self, kind: str, channel: str, body: dict[str, Any]) -> str:
        self._count += 1
        ts = f"console.{self._started}.{self._count:06d}"
        doc = {"slack": kind, "channel": channel, "ts": ts, **body}
        self._out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        self._out.flush()
        return ts

    async def post(
        self, channel: str, message: SlackMessage, marker: str, *, on_sent: OnSent | None = None
    ) -> PostRef:
        body = {**message.to_kwargs(), **_marked(marker)}
        ref = PostRef(channel, self._emit("chat.postMessage", channel, body))
        if on_sent is not None:
            await on_sent()
        return ref

    async def update(self, ref: PostRef, message: SlackMessage) -> None:
        self._emit("chat.update", ref.channel, {"update_ts": ref.ts, **message.to_kwargs()})

    async def reply(
        self, ref: PostRef, text: str, marker: str, *, broadcast: bool = False
    ) -> None:
        body = {"thread_ts": ref.ts, "text": text, "reply_broadcast": broadcast, **_marked(marker)}
        self._emit("chat.postMessage (thread)", ref.channel, body)

    async def find_marker(self, channel: str, marker: str, since: float | None) -> PostRef | None:
        return None

    async def find_reply(self, ref: PostRef, marker: str) -> bool:
        return False

    async def close(self) -> None:
        return None


def _when_written(on_sent: OnSent) -> Callable[[str, dict[str, Any]], Awaitable[None]]:
    """An httpx `trace` callback that runs `on_sent` when the request body is written."""

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_body.complete"):
            await on_sent()

    return trace


def _marked(marker: str) -> dict[str, str]:
    return {"marker": marker} if marker else {}


def build_delivery(settings: Settings) -> Delivery:
    if settings.slack_bot_token is not None:
        if not settings.slack_channel and settings.slack_routes.strip() in ("", "[]"):
            raise ConfigError(
                "SLACK_BOT_TOKEN is set but no channel is: set SLACK_CHANNEL (default channel) "
                "or SLACK_ROUTES"
            )
        return BotDelivery(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
    if settings.slack_webhook_url is not None:
        return WebhookDelivery(settings.slack_webhook_url.get_secret_value())
    log.warning("delivery.console", reason="neither SLACK_BOT_TOKEN nor SLACK_WEBHOOK_URL is set")
    return ConsoleDelivery()
