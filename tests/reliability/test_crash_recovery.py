"""kill -9 and the crash window: nothing accepted is lost, and a post Slack took but whose `ts`
was never stored is found again by its marker instead of being posted twice.

`TestKill9` kills a real `python -m enricher` while posts are in flight (the fake Slack answers
slowly, so some posts land after the process is gone). The other classes rebuild the state a
crash leaves (Redis claim held by a dead owner, the message in Slack) with the production
Ledger and BotDelivery, so each window is checked in seconds instead of waiting out a lease.

TestKill9 runs with the production post lease (POST_LEASE_S 120 s): the restarted process
takes over its dead predecessor's claims at once (same WORKER_ID, another process nonce), so
it never waits on them ("post in flight"), and the pages in flight at the kill go out
seconds after the restart, not after the lease (the time is printed; docs/RELIABILITY.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from collections import Counter
from collections.abc import Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from slack_sdk import WebClient
from starlette.testclient import TestClient
from structlog.testing import capture_logs

from enricher.app import create_app
from enricher.index.embedding import Embedder
from enricher.pipeline.ledger import Claimed, Ledger
from enricher.result import SearchResult
from enricher.service import Services
from enricher.slack.delivery import BotDelivery, PostRef
from enricher.slack.render import render_message
from enricher.sources.alertmanager import normalize_group, parse_alertmanager
from scripts.chaos.harness import AM_TOKEN, DeliveryMode, Enricher, enricher_env
from scripts.chaos.harness import CHANNEL as CHAOS_CHANNEL
from scripts.chaos.observed import (
    console_messages,
    done_jobs,
    log_events,
    outputs,
    unfinished_jobs,
    webhook_messages,
)
from scripts.chaos.observed import marker as marker_of
from scripts.chaos.workload import am_body, runbook_alerts
from scripts.index_copy import copy_index
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack
from tests.helpers import CHANNEL, service_settings

BEARER = {"Authorization": f"Bearer {AM_TOKEN}"}


def page(number: int, tag: str) -> tuple[str, bytes]:
    """(group key, firing body) of a page about a real runbook."""
    service, name = runbook_alerts()[number % len(runbook_alerts())]
    key = f'{{}}:{{alertname="{name}", {tag}="{number}"}}'
    return key, am_body(key, name, service, number, [f"{tag}{number}"], "firing")


def resolve_of(number: int, tag: str) -> bytes:
    """The resolved notification for `page(number, tag)`."""
    service, name = runbook_alerts()[number % len(runbook_alerts())]
    key = f'{{}}:{{alertname="{name}", {tag}="{number}"}}'
    return am_body(key, name, service, number, [f"{tag}{number}"], "resolved")


def posts_with_marker(fake: FakeSlack, channel: str) -> dict[str, int]:
    """Top-level messages per marker, as the channel shows them (whatever the HTTP answers)."""
    counts: dict[str, int] = {}
    for message in fake.messages(channel):
        meta = message.get("metadata") or {}
        if not message.get("thread_ts") and meta.get("event_payload"):
            key = str(meta["event_payload"]["key"])
            counts[key] = counts.get(key, 0) + 1
    return counts


# --- a real kill -9 -----------------------------------------------------------------------


class TestKill9:
    def test_kill_mid_processing_loses_nothing_and_doubles_nothing(
        self, tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack
    ) -> None:
        """kill -9 while posts are in flight, restart with the same WORKER_ID: every accepted
        page is posted exactly once, including those Slack took after the process died."""
        fake_slack.set_latency(1.0)
        copy_index(golden_index, tmp_path / "qdrant")
        env = enricher_env(qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
                           slack_url=fake_slack.url, worker_id="crash-1", WORKERS="4",
                           JOB_CLAIM_IDLE_S="3", POST_LEASE_S="120")
        enricher = Enricher(env, tmp_path / "enricher.log")
        enricher.start()
        try:
            pages = [page(n, "crash") for n in range(16)]
            for _, body in pages[:12]:
                response = httpx.post(f"{enricher.url}/webhook/alertmanager", content=body,
                                      headers=BEARER)
                assert response.json() == {"status": "queued"}
            wait_for(lambda: len(fake_slack.calls_to("chat.postMessage")) >= 4, timeout_s=60,
                     what="the first posts")
            time.sleep(0.5)  # the workers have sent their next posts; Slack holds them 1 s
            before_kill = len(fake_slack.calls)
            enricher.kill()
            cut = cut_by_kill(redis_url)
            assert cut, "no job was in hand at the kill: the window was missed"
            time.sleep(2.5)  # Slack finishes the requests the dead process had sent
            landed_after_kill = [
                c for c in fake_slack.calls[before_kill:]
                if c.method == "chat.postMessage" and c.ok
            ]
            assert landed_after_kill, "no post was in flight at the kill: the window was missed"

            enricher.start()
            restarted = time.monotonic()
            for _, body in pages[12:]:
                response = httpx.post(f"{enricher.url}/webhook/alertmanager", content=body,
                                      headers=BEARER)
                assert response.json() == {"status": "queued"}
            markers = {marker_of(key, "firing") for key, _ in pages}
            wait_for(lambda: set(posts_with_marker(fake_slack, CHAOS_CHANNEL)) >= markers
                     and unfinished_jobs(redis_url) == 0,
                     timeout_s=180, what="every page after the restart")
            recovery_s = time.monotonic() - restarted
            print(f"every page out {recovery_s:.1f} s after the restart")
            # Waiting out the dead process's leases would take POST_LEASE_S (120 s); taking
            # them over takes seconds. Half the lease tells the two apart on a loaded box.
            assert recovery_s < 60, f"{recovery_s:.0f} s: the dead claims were waited out"
            time.sleep(2.5)  # a late second post would have landed by now

            assert posts_with_marker(fake_slack, CHAOS_CHANNEL) == dict.fromkeys(markers, 1)
            events = log_events(enricher.log_path)
            assert events["outcome.recovered"] >= len(landed_after_kill)
            assert events["slack.duplicate_post"] == 0
            assert_each_job_done_once(enricher.log_path, kills=1, cut=cut)

        finally:
            enricher.stop()


def cut_by_kill(redis_url: str) -> int:
    """Jobs the killed process had taken and not finished: its pending stream entries."""
    with redis.Redis.from_url(redis_url) as client:
        return int(client.xpending("rbe:jobs", "enrichers")["pending"])


def assert_each_job_done_once(log_path: Path, *, kills: int, cut: int) -> None:
    """No queue entry was finished twice (two workers on one pending entry), and a job's
    attempts count only the tries made: its first, plus one per kill that cut it short.
    `cut`: the jobs the kills left pending; those were tried again, so when a kill cut one
    some job shows a second attempt (a kill that lands between jobs cuts none)."""
    done = done_jobs(log_path)
    entries = Counter(str(e["job"]) for e in done)
    assert [entry for entry, n in entries.items() if n > 1] == []
    assert {int(e["attempts"]) for e in done} <= set(range(1, kills + 2))
    if cut:
        assert any(int(e["attempts"]) >= 2 for e in done), "a cut job was not tried again"


def printed(mode: DeliveryMode, fake: FakeSlack, stdout: Path) -> list[dict[str, Any]]:
    """What an enricher delivering without lookups sent, as a reader saw it."""
    if mode == "webhook":
        return webhook_messages([dataclasses.asdict(c) for c in fake.calls])
    messages, torn = console_messages(stdout)
    assert torn == 0, "a console document was cut short"
    return messages


class TestKill9WithoutLookups:
    """Console and incoming-webhook modes cannot look up what they sent (no `ts`, no history),
    so after a kill -9 the ledger alone must keep each page, escalation and resolve single."""

    GROUPS = 30

    @pytest.mark.parametrize("mode", ["console", "webhook"])
    def test_kill_mid_burst_sends_each_message_once(
        self, mode: DeliveryMode, tmp_path: Path, golden_index: Path, redis_url: str,
        fake_slack: FakeSlack
    ) -> None:
        """A kill -9 while pages are going out, then another while escalations and resolves
        are (the webhook answers slowly, so some are in flight at each kill; Slack takes them
        after the process is gone): every group's page, escalation and resolve shows, once
        unless a kill landed between its request leaving and its note (milliseconds on a
        loaded machine), and then the restarted process said so when it sent it again."""
        if mode == "webhook":
            fake_slack.set_latency(0.5)
        copy_index(golden_index, tmp_path / "qdrant")
        env = enricher_env(qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
                           slack_url=fake_slack.url, worker_id="crash-1", delivery=mode,
                           WORKERS="4", JOB_CLAIM_IDLE_S="3")
        stdout = tmp_path / "stdout.log"
        enricher = Enricher(env, tmp_path / "enricher.log", stdout_path=stdout)
        groups = range(self.GROUPS)
        expected: Counter[tuple[int, str]] = Counter({(n, "page"): 1 for n in groups})

        def shown() -> Counter[tuple[int, str]]:
            return outputs(printed(mode, fake_slack, stdout))

        cut = 0

        def kill_once_out(count: int) -> None:
            nonlocal cut
            wait_for(lambda: sum(shown().values()) >= count, timeout_s=60,
                     what=f"{count} messages out")
            enricher.kill()
            cut += cut_by_kill(redis_url)
            time.sleep(1.5)  # the webhook takes the requests the dead process had sent

        def restart_and_drain() -> None:
            enricher.start()
            wait_for(lambda: unfinished_jobs(redis_url) == 0 and shown() >= expected,
                     timeout_s=120, what="every message after the restart")
            time.sleep(1.5)  # a second copy, had there been one, would be out by now

        enricher.start()
        try:
            send_all(enricher, [escalated(n, 1) for n in groups])
            kill_once_out(self.GROUPS // 3)
            restart_and_drain()

            send_all(enricher, [escalated(n, 2) if n % 2 == 0 else escalated(n, 1, "resolved")
                                for n in groups])
            for n in groups:
                expected[(n, "escalation" if n % 2 == 0 else "resolve")] = 1
            kill_once_out(self.GROUPS + self.GROUPS // 3)
            restart_and_drain()

            assert shown() >= expected, "nothing is lost"
            assert shown() - expected <= maybe_repeated(enricher.log_path), (
                "a message shown twice that the restarted process did not announce"
            )
            assert log_events(enricher.log_path)["slack.duplicate_post"] == 0
            assert_each_job_done_once(enricher.log_path, kills=2, cut=cut)
        finally:
            enricher.stop()


def maybe_repeated(log_path: Path) -> Counter[tuple[int, str]]:
    """Per (group number, kind of output), the outputs a restarted process sent again after
    a kill in the crash window (`slack.output_maybe_repeated`)."""
    kinds = {"post": "page", "escalated": "escalation", "resolve": "resolve"}
    announced: Counter[tuple[int, str]] = Counter()
    for line in log_path.read_text(errors="replace").splitlines():
        if '"slack.output_maybe_repeated"' in line:
            event = json.loads(line)
            group = re.search(r'modes="(\d+)"', str(event["group"]))
            assert group is not None
            announced[(int(group.group(1)), kinds[str(event["kind"])])] += 1
    return announced


def escalated(number: int, alerts: int, status: str = "firing") -> bytes:
    """Group `number` with `alerts` firing (or resolved) alerts: fingerprints start with the
    group number in hex, so an escalation's list of targets names its group."""
    service, name = runbook_alerts()[number % len(runbook_alerts())]
    key = f'{{}}:{{alertname="{name}", modes="{number}"}}'
    fingerprints = [f"{number:04x}{i:02x}" for i in range(alerts)]
    return am_body(key, name, service, number, fingerprints, status)


def send_all(enricher: Enricher, bodies: list[bytes]) -> None:
    """POST the bodies from a few threads at once, so the workers fall behind."""

    def send(body: bytes) -> None:
        response = httpx.post(f"{enricher.url}/webhook/alertmanager", content=body,
                              headers=BEARER, timeout=10)
        assert response.json() == {"status": "queued"}

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(send, bodies))


# --- the crash window, rebuilt in place ----------------------------------------------------


@dataclass
class Running:
    client: TestClient
    services: Services
    fake: FakeSlack
    redis_url: str

    def send(self, body: bytes) -> None:
        response = self.client.post("/webhook/alertmanager", content=body, headers=BEARER)
        assert response.json() == {"status": "queued"}

    def drain(self) -> None:
        wait_for(lambda: unfinished_jobs(self.redis_url) == 0, timeout_s=30,
                 what="an empty queue")
        time.sleep(0.5)  # a second post, had there been one, would have landed by now

    def died_after_posting(self, body: bytes) -> PostRef:
        """Leave Redis and Slack as a worker does that died after Slack accepted its post and
        before it stored the ts: a claim under a dead owner (short lease), the message posted."""
        alert = normalize_group(parse_alertmanager(body))

        async def crash() -> PostRef:
            client = aioredis.Redis.from_url(self.redis_url)
            try:
                ledger = Ledger(client, dedup_ttl_s=60)
                claim = await ledger.claim_post(alert.group_key, "dead:1", lease_s=0.5)
                assert isinstance(claim, Claimed)
            finally:
                await client.aclose()
            delivery = BotDelivery("xoxb-test", self.fake.url)
            try:
                message = render_message(alert, SearchResult("no_match", None))
                return await delivery.post(CHANNEL, message, marker_of(alert.group_key, "firing"))
            finally:
                await delivery.close()

        return asyncio.run(crash())


@pytest.fixture()
def running(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    settings = service_settings(tmp_path, golden_index, redis_url, fake_slack,
                                alertmanager_bearer_tokens=(AM_TOKEN,))
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as client:
        yield Running(client, services, fake_slack, redis_url)


@pytest.fixture()
def hooked(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack, embedder: Embedder
) -> Iterator[Running]:
    """The service delivering through the fake Slack's incoming webhook (no lookups)."""
    settings = service_settings(tmp_path, golden_index, redis_url, None,
                                alertmanager_bearer_tokens=(AM_TOKEN,),
                                slack_webhook_url=fake_slack.webhook_url)
    services = Services.build(settings, embedder=embedder)
    with TestClient(create_app(services)) as client:
        yield Running(client, services, fake_slack, redis_url)


def webhook_outputs(fake: FakeSlack) -> Counter[tuple[int, str]]:
    return outputs(webhook_messages([dataclasses.asdict(c) for c in fake.calls]))


def other_messages(fake: FakeSlack, count: int) -> None:
    """Top-level traffic in the channel from people and other integrations."""
    slack = WebClient(token="xoxb-test", base_url=fake.url)
    for n in range(count):
        slack.chat_postMessage(channel=CHANNEL, text=f"someone else's message {n}")


class TestCrashWindow:
    def test_marker_found_after_takeover(self, running: Running) -> None:
        """The next claimer finds the dead worker's message by its marker and adopts it."""
        key, body = page(1, "window")
        posted = running.died_after_posting(body)
        running.send(body)
        running.drain()
        assert posts_with_marker(running.fake, CHANNEL) == {marker_of(key, "firing"): 1}
        record = asyncio.run(_post_record(running.redis_url, key))
        assert record is not None and record["ts"] == posted.ts

    def test_marker_lookup_blip_is_retried_in_place(self, running: Running) -> None:
        """A 500 from the takeover's history lookup is retried at once (it is a read): the
        job recovers the dead worker's message on its first attempt, not after a backoff."""
        key, body = page(6, "window")
        running.died_after_posting(body)
        running.fake.fail_next(1, status=500, method="conversations.history")
        with capture_logs() as logs:
            running.send(body)
            running.drain()
        assert [c.ok for c in running.fake.calls_to("conversations.history")] == [False, True]
        assert posts_with_marker(running.fake, CHANNEL) == {marker_of(key, "firing"): 1}
        done = [e for e in logs if e["event"] == "job.done" and e.get("group") == key]
        assert [(e["outcome"], e["attempts"]) for e in done] == [("recovered", 1)]

    def test_marker_found_behind_a_busy_channel(self, running: Running) -> None:
        """The lookup still finds the message when more than 100 other top-level messages
        were posted in the channel since (an alert storm, people talking)."""
        key, body = page(2, "window")
        running.died_after_posting(body)
        other_messages(running.fake, 120)
        running.send(body)
        running.drain()
        assert posts_with_marker(running.fake, CHANNEL) == {marker_of(key, "firing"): 1}


def died_sending(
    hooked: Running, body: bytes, *, noted_out: bool
) -> list[MutableMapping[str, Any]]:
    """Rebuild a worker that died sending the group's page through the webhook, after the
    page reached Slack: its claim, its note that the post was about to go and, with
    `noted_out`, its note that it had left. Then the job runs again; its log events."""
    alert = normalize_group(parse_alertmanager(body))

    async def crash() -> None:
        client = aioredis.Redis.from_url(hooked.redis_url)
        try:
            ledger = Ledger(client, dedup_ttl_s=60)
            assert isinstance(await ledger.claim_post(alert.group_key, "dead:1", 0.5), Claimed)
            await ledger.note_attempt(alert.group_key, "post")
            if noted_out:
                await ledger.note_output(alert.group_key, "post")
        finally:
            await client.aclose()

    asyncio.run(crash())
    message = render_message(alert, SearchResult("no_match", None))
    httpx.post(hooked.fake.webhook_url, json=message.to_kwargs()).raise_for_status()
    with capture_logs() as logs:
        hooked.send(body)
        hooked.drain()
    return logs


class TestCrashWindowWithoutLookups:
    def test_post_noted_by_a_dead_attempt_is_not_sent_again(self, hooked: Running) -> None:
        """A worker sent its post through the webhook, noted that in the ledger and died
        before recording it. The next attempt cannot look in the channel: it takes the post
        as sent, says so in the log, and does not send it again."""
        logs = died_sending(hooked, escalated(7, 1), noted_out=True)
        assert webhook_outputs(hooked.fake) == {(7, "page"): 1}
        assert [e["outcome"] for e in logs if e["event"] == "job.done"] == ["unconfirmed"]
        assert [e["kind"] for e in logs if e["event"] == "slack.output_unconfirmed"] == ["post"]

    def test_post_begun_by_a_dead_attempt_is_sent_again_and_announced(
        self, hooked: Running
    ) -> None:
        """A worker began sending its post and died before noting that it had left (a kill
        in the crash window): it may have reached Slack or not. The next attempt sends it (a
        page is never dropped on a guess) and says that the channel may show it twice."""
        logs = died_sending(hooked, escalated(6, 1), noted_out=False)
        assert webhook_outputs(hooked.fake) == {(6, "page"): 2}
        assert [e["outcome"] for e in logs if e["event"] == "job.done"] == ["posted"]
        repeated = [e["kind"] for e in logs if e["event"] == "slack.output_maybe_repeated"]
        assert repeated == ["post"]

    def test_send_refused_by_slack_is_sent_again(self, hooked: Running) -> None:
        """A 429 is an answer: nothing was posted, so the retry sends (the note that the first
        attempt left is cleared), and the page shows once."""
        hooked.fake.fail_next(1, status=429, method="webhook.incoming")
        hooked.send(escalated(8, 1))
        hooked.drain()
        assert [c.status for c in hooked.fake.calls_to("webhook.incoming")] == [429, 200]
        assert webhook_outputs(hooked.fake) == {(8, "page"): 1}

    def test_escalation_and_resolve_are_sent_once(self, hooked: Running) -> None:
        """With a webhook an escalation and a resolve are new messages, each sent once."""
        for body in (escalated(9, 1), escalated(9, 2), escalated(9, 2, "resolved")):
            hooked.send(body)
            hooked.drain()
        assert webhook_outputs(hooked.fake) == {
            (9, "page"): 1, (9, "escalation"): 1, (9, "resolve"): 1
        }


class TestAnswerLost:
    def test_post_taken_but_answer_lost_is_not_posted_again(self, running: Running) -> None:
        """Slack stored the message but the answer was a 500 (or never came): the retry must
        not make a second top-level message."""
        key, body = page(3, "lost")
        running.fake.fail_next(1, status=500, method="chat.postMessage", processed=True)
        running.send(body)
        running.drain()
        assert posts_with_marker(running.fake, CHANNEL) == {marker_of(key, "firing"): 1}


    def test_resolve_reply_taken_but_answer_lost_is_not_sent_again(
        self, running: Running
    ) -> None:
        """Slack stored the resolve's thread reply but answered 500: the retry edits the
        message again (harmless) and finds the reply by its marker instead of sending a
        second one."""
        _, body = page(4, "lost")
        running.send(body)
        running.drain()
        (parent,) = running.fake.messages(CHANNEL)
        running.fake.fail_next(1, status=500, method="chat.postMessage", processed=True)
        running.send(resolve_of(4, "lost"))
        running.drain()
        replies = [m for m in running.fake.messages(CHANNEL) if m.get("thread_ts") == parent["ts"]]
        assert len(running.fake.calls_to("chat.update")) >= 2, "the resolve was not retried"
        assert len(replies) == 1


class TestResolveRace:
    def test_two_different_resolves_of_a_group_reply_once(self, running: Running) -> None:
        """Two resolve notifications of one group that differ (so intake keeps both, as from
        HA peers with different views) reach two workers at once. Slack answers slowly, so
        both would be between the thread lookup and the reply together: one reply, still."""
        number = 5
        key, body = page(number, "race")
        running.send(body)
        running.drain()
        (parent,) = running.fake.messages(CHANNEL)
        service, name = runbook_alerts()[number % len(runbook_alerts())]
        peer = am_body(key, name, service, number, ["race5", "race5-peer"], "resolved")
        running.fake.set_latency(0.3)
        running.send(resolve_of(number, "race"))
        running.send(peer)
        running.drain()
        replies = [m for m in running.fake.messages(CHANNEL) if m.get("thread_ts") == parent["ts"]]
        assert len(replies) == 1
        assert len(running.fake.calls_to("chat.update")) >= 1


async def _post_record(redis_url: str, group_key: str) -> dict[str, Any] | None:
    client = aioredis.Redis.from_url(redis_url)
    try:
        record = await Ledger(client, dedup_ttl_s=60).get_post(group_key)
    finally:
        await client.aclose()
    return None if record is None else {"ts": record.ts, "channel": record.channel}
