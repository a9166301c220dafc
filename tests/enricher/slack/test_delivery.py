"""Slack delivery adapters: error classification and the console and webhook modes."""

from __future__ import annotations

import io
import json
import re

import httpx
import pytest
import respx

from enricher.errors import DeliveryFailed
from enricher.slack.delivery import BotDelivery, ConsoleDelivery, PostRef, WebhookDelivery
from enricher.slack.posting import Poster
from enricher.slack.render import SlackMessage
from tests.fakeslack import FakeSlack

MESSAGE = SlackMessage(
    text="fallback", blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
)
HOOK = "https://hooks.slack.example/services/T/B/X"

pytestmark = pytest.mark.anyio


@pytest.fixture()
def anyio_backend() -> str:
    return "asyncio"


async def post_failure(delivery: BotDelivery | WebhookDelivery) -> DeliveryFailed:
    """How one post through `delivery` fails (it is closed after)."""
    try:
        with pytest.raises(DeliveryFailed) as err:
            await delivery.post("C1", MESSAGE, "m")
    finally:
        await delivery.close()
    return err.value


class TestBotDelivery:
    async def test_post_update_reply_and_marker_lookup(self, fake_slack: FakeSlack) -> None:
        """A post can be found again by its marker, updated, and replied to in its thread."""
        bot = BotDelivery("xoxb-test", fake_slack.url)
        try:
            ref = await bot.post("C1", MESSAGE, "marker-1")
            assert await bot.find_marker("C1", "marker-1", None) == ref
            assert await bot.find_marker("C1", "other", None) is None
            await bot.update(ref, MESSAGE)
            assert not await bot.find_reply(ref, "reply-1")
            await bot.reply(ref, "resolved", "reply-1")
            assert await bot.find_reply(ref, "reply-1")
            assert not await bot.find_reply(ref, "other")
            # the thread's parent carries its own marker; it is not a reply
            assert not await bot.find_reply(ref, "marker-1")
        finally:
            await bot.close()
        assert fake_slack.calls_to("chat.update")[0].body["ts"] == ref.ts
        assert fake_slack.calls_to("chat.postMessage")[-1].body["thread_ts"] == ref.ts

    async def test_calls_share_one_connection(self, fake_slack: FakeSlack) -> None:
        """Posts, an update and a lookup go over one kept-alive connection: slack-sdk alone
        would open (and, against Slack, TLS-handshake) one per call."""
        bot = BotDelivery("xoxb-test", fake_slack.url)
        try:
            refs = [await bot.post("C1", MESSAGE, f"m-{n}") for n in range(5)]
            await bot.update(refs[0], MESSAGE)
            assert await bot.find_marker("C1", "m-3", None) == refs[3]
        finally:
            await bot.close()
        assert len(fake_slack.calls) == 7
        assert fake_slack.connections == 1

    async def test_reply_is_found_in_a_long_thread(self, fake_slack: FakeSlack) -> None:
        """The reply lookup pages through the thread (oldest first, 200 a page): a reply
        after 250 others is still found."""
        bot = BotDelivery("xoxb-test", fake_slack.url)
        try:
            ref = await bot.post("C1", MESSAGE, "parent")
            for n in range(250):
                await bot.reply(ref, f"chatter {n}", f"hay-{n}")
            await bot.reply(ref, "resolved", "needle")
            assert await bot.find_reply(ref, "needle")
        finally:
            await bot.close()
        lookups = fake_slack.calls_to("conversations.replies")
        assert len(lookups) == 2

    @pytest.mark.parametrize(
        ("fault", "permanent", "retry_after"),
        [
            ({"status": 429, "retry_after": 7}, False, 7.0),
            ({"status": 500}, False, None),
            ({"error": "channel_not_found"}, True, None),
            ({"error": "invalid_auth"}, True, None),
            ({"error": "internal_error"}, False, None),
            ({"error": "unknown_method"}, True, None),
            ({"error": "channel_is_archived"}, True, None),
        ],
    )
    async def test_errors_are_classified(
        self,
        fake_slack: FakeSlack,
        fault: dict[str, object],
        permanent: bool,
        retry_after: float | None,
    ) -> None:
        """429 carries Retry-After, 5xx is transient, configuration errors are permanent."""
        fake_slack.fail_next(1, **fault)  # type: ignore[arg-type]
        failure = await post_failure(BotDelivery("xoxb-test", fake_slack.url))
        assert (failure.permanent, failure.retry_after) == (permanent, retry_after)

    async def test_a_429_holds_back_the_calls_it_covers(self, fake_slack: FakeSlack) -> None:
        """After Slack's 429, posts to that channel are not sent until its Retry-After has
        passed (each would be refused and count against the app): they fail at once with
        the time left, for the queue to bring back. Another channel still gets its page."""
        fake_slack.fail_next(1, status=429, retry_after=30)
        bot = BotDelivery("xoxb-test", fake_slack.url)
        try:
            with pytest.raises(DeliveryFailed) as first:
                await bot.post("C1", MESSAGE, "m-1")
            with pytest.raises(DeliveryFailed) as held:
                await bot.post("C1", MESSAGE, "m-2")
            with pytest.raises(DeliveryFailed):  # a thread reply is a chat.postMessage too
                await bot.reply(PostRef("C1", "1700000000.000100"), "resolved", "m-3")
            other = await bot.post("C2", MESSAGE, "m-4")
        finally:
            await bot.close()
        assert (str(first.value), first.value.retry_after) == ("ratelimited", 30.0)
        assert str(held.value) == "ratelimit_pause"
        assert held.value.retry_after is not None and 0 < held.value.retry_after <= 30
        assert not held.value.maybe_delivered
        posts = fake_slack.calls_to("chat.postMessage")
        assert [(c.body["channel"], c.status) for c in posts] == [("C1", 429), ("C2", 200)]
        assert other.channel == "C2"

    async def test_an_api_address_that_is_not_slack_is_permanent(
        self, fake_slack: FakeSlack
    ) -> None:
        """A SLACK_API_URL that answers 404, or that aiohttp cannot use, fails for good."""
        for url in (fake_slack.origin + "/not-the-api/", "notaurl"):
            failure = await post_failure(BotDelivery("xoxb-test", url))
            assert failure.permanent is True, str(failure)
            assert "SLACK_API_URL" in str(failure)

    async def test_marker_is_found_behind_a_busy_channel(self, fake_slack: FakeSlack) -> None:
        """The lookup pages through history: 450 newer messages do not hide the marker."""
        bot = BotDelivery("xoxb-test", fake_slack.url)
        try:
            ref = await bot.post("C1", MESSAGE, "needle")
            for n in range(450):
                await bot.post("C1", MESSAGE, f"hay-{n}")
            assert await bot.find_marker("C1", "needle", None) == ref
        finally:
            await bot.close()


class TestWebhookDelivery:
    @pytest.mark.parametrize(
        ("response", "permanent", "retry_after"),
        [
            (httpx.Response(429, headers={"Retry-After": "3"}), False, 3.0),
            (httpx.Response(503), False, None),
            (httpx.Response(404, text="no_service"), True, None),
        ],
    )
    async def test_errors_are_classified(
        self, response: httpx.Response, permanent: bool, retry_after: float | None
    ) -> None:
        """Incoming-webhook answers map to the same retry policy as the Web API."""
        hook = WebhookDelivery(HOOK)
        try:
            with respx.mock() as mock:
                mock.post(HOOK).mock(return_value=response)
                with pytest.raises(DeliveryFailed) as err:
                    await hook.post("C1", MESSAGE, "")
        finally:
            await hook.close()
        assert (err.value.permanent, err.value.retry_after) == (permanent, retry_after)

    @pytest.mark.parametrize("url", ["notaurl", "ftp://hooks.slack.example/x", "https://"])
    async def test_an_address_it_cannot_send_to_is_permanent(self, url: str) -> None:
        """No retry can send to an address httpx refuses: the job is dead-lettered at once,
        its reason naming the setting."""
        failure = await post_failure(WebhookDelivery(url))
        assert failure.permanent is True
        assert "SLACK_WEBHOOK_URL" in str(failure)

    async def test_timeout_is_transient(self) -> None:
        """A timeout is worth retrying."""
        hook = WebhookDelivery(HOOK)
        try:
            with respx.mock() as mock:
                mock.post(HOOK).mock(side_effect=httpx.ReadTimeout("slow"))
                with pytest.raises(DeliveryFailed) as err:
                    await hook.post("C1", MESSAGE, "")
        finally:
            await hook.close()
        assert err.value.permanent is False

    async def test_success_sends_blocks(self) -> None:
        """The webhook gets text and blocks as JSON."""
        hook = WebhookDelivery(HOOK)
        try:
            with respx.mock() as mock:
                route = mock.post(HOOK).mock(return_value=httpx.Response(200, text="ok"))
                await hook.post("C1", MESSAGE, "")
        finally:
            await hook.close()
        assert json.loads(route.calls[0].request.content) == MESSAGE.to_kwargs()


class TestSentHook:
    """Deliveries that cannot look up what they sent say when a message has left."""

    async def test_webhook_calls_it_once_the_request_is_written(
        self, fake_slack: FakeSlack
    ) -> None:
        """Slack has the request before it answers: the hook runs in between, once."""
        fake_slack.set_latency(0.3)
        answered_when_sent: list[int] = []

        async def sent() -> None:
            answered_when_sent.append(len(fake_slack.calls))

        hook = WebhookDelivery(fake_slack.webhook_url)
        try:
            await hook.post("C1", MESSAGE, "m", on_sent=sent)
        finally:
            await hook.close()
        assert answered_when_sent == [0]
        assert [c.ok for c in fake_slack.calls_to("webhook.incoming")] == [True]

    async def test_webhook_calls_it_whatever_the_answer(self, fake_slack: FakeSlack) -> None:
        """A 500 comes after the request was written: the hook ran, and the failure is raised
        for the caller to undo what the hook noted."""
        fake_slack.fail_next(1, status=500, method="webhook.incoming")
        calls: list[str] = []

        async def sent() -> None:
            calls.append("sent")

        hook = WebhookDelivery(fake_slack.webhook_url)
        try:
            with pytest.raises(DeliveryFailed):
                await hook.post("C1", MESSAGE, "m", on_sent=sent)
        finally:
            await hook.close()
        assert calls == ["sent"]

    async def test_console_calls_it_after_printing(self) -> None:
        """The document is out (and shows its marker) when the hook runs, for a post and,
        through the poster, for a thread reply."""
        out = io.StringIO()
        seen: list[str] = []

        async def sent() -> None:
            seen.append(out.getvalue())

        console = Poster(ConsoleDelivery(out))
        await console.post("C1", MESSAGE, "page-marker", since=None, on_sent=sent)
        await console.reply_once(PostRef("C1", "1.1"), "resolved", "reply-marker", on_sent=sent)
        assert len(seen) == 2
        assert json.JSONDecoder().raw_decode(seen[0])[0]["marker"] == "page-marker"
        assert '"marker": "reply-marker"' in seen[1]


class TestConsoleDelivery:
    async def test_prints_what_would_be_posted(self) -> None:
        """Console mode writes each message as a JSON document with a fake ts."""
        out = io.StringIO()
        console = ConsoleDelivery(out)
        ref = await console.post("C1", MESSAGE, "m")
        await console.update(PostRef("C1", ref.ts), MESSAGE)
        decoder = json.JSONDecoder()
        first, end = decoder.raw_decode(out.getvalue())
        second, _ = decoder.raw_decode(out.getvalue()[end:].lstrip())
        assert re.fullmatch(r"console\.\d{13}\.000001", ref.ts)
        assert (first["slack"], first["channel"], first["text"]) == (
            "chat.postMessage",
            "C1",
            "fallback",
        )
        assert (second["slack"], second["update_ts"]) == ("chat.update", ref.ts)
