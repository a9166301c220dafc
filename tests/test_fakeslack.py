"""The fake Slack server against the real slack_sdk clients (urllib and aiohttp)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook import WebhookClient

from tests.fakeslack import FakeSlack, running_fake_slack

TOKEN = "xoxb-test-token"


@pytest.fixture()
def fake() -> Iterator[FakeSlack]:
    with running_fake_slack() as server:
        yield server


@pytest.fixture()
def client(fake: FakeSlack) -> WebClient:
    return WebClient(token=TOKEN, base_url=fake.url)


def run_async(fake: FakeSlack, method: str, **kwargs: Any) -> Any:
    """Call one AsyncWebClient method in a fresh event loop; return the response data."""

    async def call() -> Any:
        client = AsyncWebClient(token=TOKEN, base_url=fake.url)
        response = await getattr(client, method)(**kwargs)
        return response.data

    return asyncio.run(call())


class TestPosting:
    def test_sync_post_recorded(self, fake: FakeSlack, client: WebClient) -> None:
        """WebClient.chat_postMessage is answered with a ts and recorded with headers."""
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*hi*"}}]
        response = client.chat_postMessage(channel="C1", text="hi", blocks=blocks)
        assert response["ok"] and response["channel"] == "C1"
        assert response["message"]["blocks"] == blocks
        (call,) = fake.calls_to("chat.postMessage")
        assert call.body["text"] == "hi" and call.body["blocks"] == blocks
        assert call.headers["authorization"] == f"Bearer {TOKEN}"
        assert call.status == 200 and call.ok

    def test_async_post_recorded(self, fake: FakeSlack) -> None:
        """AsyncWebClient (aiohttp) posts to the same fake."""
        data = run_async(fake, "chat_postMessage", channel="C2", text="async hi")
        assert data["ok"] and data["ts"]
        assert fake.calls_to("chat.postMessage")[0].body["channel"] == "C2"

    def test_ts_increasing_and_unique(self, client: WebClient) -> None:
        """Every post gets a later, distinct ts of Slack's form."""
        stamps = [client.chat_postMessage(channel="C1", text=str(i))["ts"] for i in range(20)]
        assert stamps == sorted(stamps) and len(set(stamps)) == 20
        assert all(len(ts.split(".")[1]) == 6 for ts in stamps)

    def test_form_encoded_body(self, fake: FakeSlack) -> None:
        """Form bodies work, with JSON-valued fields like blocks decoded."""
        blocks = [{"type": "divider"}]
        form = f"channel=C9&text=form&blocks={json.dumps(blocks)}".encode()
        request = urllib.request.Request(
            fake.url + "chat.postMessage",
            data=form,
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        with urllib.request.urlopen(request) as response:
            assert json.load(response)["ok"]
        assert fake.calls_to("chat.postMessage")[0].body["blocks"] == blocks

    def test_update(self, fake: FakeSlack, client: WebClient) -> None:
        """chat.update changes the stored message; an unknown ts is message_not_found."""
        ts = client.chat_postMessage(channel="C1", text="firing")["ts"]
        client.chat_update(channel="C1", ts=ts, text="resolved")
        assert fake.messages("C1")[0]["text"] == "resolved"
        with pytest.raises(SlackApiError) as info:
            client.chat_update(channel="C1", ts="1.000001", text="x")
        assert info.value.response["error"] == "message_not_found"

    def test_auth(self, fake: FakeSlack) -> None:
        """auth.test answers; a missing token is not_authed; a wrong one invalid_auth."""
        assert WebClient(token=TOKEN, base_url=fake.url).auth_test()["user_id"]
        with pytest.raises(SlackApiError) as info:
            WebClient(base_url=fake.url).auth_test()
        assert info.value.response["error"] == "not_authed"
        fake.token = TOKEN
        with pytest.raises(SlackApiError) as info:
            WebClient(token="xoxb-wrong", base_url=fake.url).auth_test()
        assert info.value.response["error"] == "invalid_auth"

    @pytest.mark.parametrize(
        ("blocks", "error"),
        [
            ([{"type": "divider"}] * 51, "invalid_blocks"),
            (
                [{"type": "header", "text": {"type": "plain_text", "text": "x" * 151}}],
                "invalid_blocks",
            ),
            (
                [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}],
                "invalid_blocks",
            ),
            (
                [{"type": "context", "elements": [{"type": "mrkdwn", "text": "x"}] * 11}],
                "invalid_blocks",
            ),
            (
                [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 2900}}] * 5,
                "msg_blocks_too_long",
            ),
        ],
    )
    def test_block_limits_enforced(self, client: WebClient, blocks: list[Any], error: str) -> None:
        """Blocks over Slack's limits are refused like Slack does."""
        with pytest.raises(SlackApiError) as info:
            client.chat_postMessage(channel="C1", text="x", blocks=blocks)
        assert info.value.response["error"] == error


class TestHistory:
    def test_newest_first_with_metadata_on_request(self, client: WebClient) -> None:
        """History lists top-level messages newest first; metadata only when asked."""
        meta = {"event_type": "page", "event_payload": {"group_key": "g1"}}
        first = client.chat_postMessage(channel="C1", text="one", metadata=meta)["ts"]
        client.chat_postMessage(channel="C1", text="reply", thread_ts=first)
        client.chat_postMessage(channel="C1", text="two")
        plain = client.conversations_history(channel="C1")["messages"]
        assert [m["text"] for m in plain] == ["two", "one"]
        assert "metadata" not in plain[1]
        full = client.conversations_history(channel="C1", include_all_metadata=True)["messages"]
        assert full[1]["metadata"] == meta

    def test_limit_and_bounds(self, client: WebClient) -> None:
        """`limit`, `oldest` and `latest` narrow the page."""
        stamps = [client.chat_postMessage(channel="C1", text=str(i))["ts"] for i in range(5)]
        page = client.conversations_history(channel="C1", limit=2)
        assert [m["text"] for m in page["messages"]] == ["4", "3"] and page["has_more"]
        window = client.conversations_history(channel="C1", oldest=stamps[1], latest=stamps[4])
        assert [m["text"] for m in window["messages"]] == ["3", "2"]

    def test_async_history(self, fake: FakeSlack, client: WebClient) -> None:
        """AsyncWebClient's GET-style history call works too."""
        client.chat_postMessage(channel="C1", text="hello")
        data = run_async(fake, "conversations_history", channel="C1")
        assert [m["text"] for m in data["messages"]] == ["hello"]

    def test_replies(self, client: WebClient) -> None:
        """conversations.replies returns the parent then its replies."""
        parent = client.chat_postMessage(channel="C1", text="page")["ts"]
        client.chat_postMessage(channel="C1", text="✅ Resolved", thread_ts=parent)
        replies = client.conversations_replies(channel="C1", ts=parent)["messages"]
        assert [m["text"] for m in replies] == ["page", "✅ Resolved"]


class TestFaults:
    def test_429_sync(self, fake: FakeSlack, client: WebClient) -> None:
        """A 429 surfaces as SlackApiError with status 429 and the Retry-After header."""
        fake.fail_next(1, status=429, retry_after=7)
        with pytest.raises(SlackApiError) as info:
            client.chat_postMessage(channel="C1", text="x")
        assert info.value.response.status_code == 429
        assert info.value.response.headers["Retry-After"] == "7"
        assert client.chat_postMessage(channel="C1", text="x")["ok"]
        assert [c.status for c in fake.calls] == [429, 200]

    def test_429_async(self, fake: FakeSlack) -> None:
        """The aiohttp client sees the same 429 and header."""
        fake.fail_next(1, status=429, retry_after=3)
        with pytest.raises(SlackApiError) as info:
            run_async(fake, "chat_postMessage", channel="C1", text="x")
        assert info.value.response.status_code == 429
        assert info.value.response.headers["Retry-After"] == "3"

    def test_500(self, fake: FakeSlack, client: WebClient) -> None:
        """fail_next(status=500) answers HTTP 500 n times, then recovers."""
        fake.fail_next(2, status=500)
        for _ in range(2):
            with pytest.raises(SlackApiError) as info:
                client.chat_postMessage(channel="C1", text="x")
            assert info.value.response.status_code == 500
        assert client.chat_postMessage(channel="C1", text="x")["ok"]
        assert fake.messages("C1")[0]["text"] == "x" and len(fake.messages("C1")) == 1

    @pytest.mark.parametrize("error", ["channel_not_found", "not_in_channel", "invalid_auth"])
    def test_ok_false(self, fake: FakeSlack, client: WebClient, error: str) -> None:
        """fail_next(error=…) is HTTP 200 with ok:false and that error."""
        fake.fail_next(1, error=error)
        with pytest.raises(SlackApiError) as info:
            client.chat_postMessage(channel="C1", text="x")
        assert info.value.response.status_code == 200
        assert info.value.response["error"] == error
        assert not fake.calls[0].ok

    def test_fault_for_one_method(self, fake: FakeSlack, client: WebClient) -> None:
        """A fault aimed at chat.update leaves other methods alone."""
        fake.fail_next(1, status=500, method="chat.update")
        ts = client.chat_postMessage(channel="C1", text="x")["ts"]
        with pytest.raises(SlackApiError):
            client.chat_update(channel="C1", ts=ts, text="y")

    def test_processed_fault_stores_message(self, fake: FakeSlack, client: WebClient) -> None:
        """`processed=True` stores the post but fails the answer (the lost-ts window)."""
        fake.fail_next(1, status=500, processed=True)
        with pytest.raises(SlackApiError):
            client.chat_postMessage(channel="C1", text="posted anyway")
        assert [m["text"] for m in fake.messages("C1")] == ["posted anyway"]

    def test_latency(self, fake: FakeSlack) -> None:
        """set_latency delays answers past a client timeout."""
        fake.set_latency(0.3)
        with pytest.raises(TimeoutError):
            urllib.request.urlopen(fake.url + "auth.test", data=b"", timeout=0.05)

    def test_fault_rates_seeded(self, fake: FakeSlack, client: WebClient) -> None:
        """Random faults follow the rates and repeat exactly with the same seed."""

        def statuses() -> list[int]:
            fake.reset()
            fake.set_fault_rates(rate_429=0.3, rate_500=0.2, seed=42)
            for _ in range(60):
                with contextlib.suppress(SlackApiError):
                    client.auth_test()
            return [c.status for c in fake.calls]

        first = statuses()
        assert first == statuses()
        assert {200, 429, 500} == set(first)

    def test_calls_inside_a_retry_after_are_marked_and_with_windows_refused(
        self, fake: FakeSlack, client: WebClient
    ) -> None:
        """Like Slack, the fake remembers the Retry-After it gave per method and channel: a
        call inside it is `early`; with `windows` it is refused with the time left."""
        fake.fail_next(1, status=429, retry_after=30)
        with pytest.raises(SlackApiError):
            client.chat_postMessage(channel="C1", text="x")
        assert client.chat_postMessage(channel="C1", text="served, but early")["ok"]
        fake.set_fault_rates(windows=True)
        with pytest.raises(SlackApiError) as info:
            client.chat_postMessage(channel="C1", text="refused")
        assert info.value.response.status_code == 429
        assert 29 <= int(info.value.response.headers["Retry-After"]) <= 30
        assert client.chat_postMessage(channel="C2", text="another channel")["ok"]
        ts = fake.messages("C1")[0]["ts"]
        assert client.chat_update(channel="C1", ts=ts, text="another method")["ok"]
        assert [(c.status, c.early) for c in fake.calls] == [
            (429, False), (200, True), (429, True), (200, False), (200, False)
        ]

    def test_bad_rates_refused(self, fake: FakeSlack) -> None:
        """Rates summing over 1 are a caller error."""
        with pytest.raises(ValueError):
            fake.set_fault_rates(rate_429=0.7, rate_500=0.5)


class TestWebhookAndStandalone:
    def test_incoming_webhook(self, fake: FakeSlack) -> None:
        """The incoming webhook answers "ok" and records the payload."""
        response = WebhookClient(fake.webhook_url).send(text="hello", blocks=[{"type": "divider"}])
        assert response.status_code == 200 and response.body == "ok"
        (call,) = fake.calls_to("webhook.incoming")
        assert call.body["text"] == "hello"

    @pytest.mark.parametrize(
        ("fault", "status", "body"),
        [
            ({"status": 429}, 429, "rate_limited"),
            ({"status": 500}, 500, "internal_error"),
            ({"error": "channel_not_found"}, 404, "channel_not_found"),
            ({"error": "invalid_payload"}, 400, "invalid_payload"),
        ],
    )
    def test_webhook_faults(
        self, fake: FakeSlack, fault: dict[str, Any], status: int, body: str
    ) -> None:
        """Webhook faults answer like Slack's webhooks: a status and a plain-text reason."""
        fake.fail_next(1, **fault)
        response = WebhookClient(fake.webhook_url).send(text="x")
        assert (response.status_code, response.body) == (status, body)

    def test_module_runs_standalone(self) -> None:
        """`python -m tests.fakeslack --port 0` prints a working base URL."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakeslack", "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and url.endswith("/api/")
            assert WebClient(token=TOKEN, base_url=url).auth_test()["ok"]
            with urllib.request.urlopen(url.replace("/api/", "/_fake/calls")) as response:
                assert json.load(response)["calls"][0]["method"] == "auth.test"
        finally:
            proc.terminate()
            assert proc.wait(timeout=5) == 0
            assert proc.stdout is not None
            proc.stdout.close()
