"""Two enricher processes share one Redis, each with its own copy of the embedded Qdrant index,
and both receive every webhook, as two replicas behind Alertmanager in HA do: every alert group
is posted exactly once, and every resolve is applied exactly once."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from scripts.chaos.harness import AM_TOKEN, CHANNEL, Enricher, enricher_env
from scripts.chaos.observed import GroupView, log_events, slack_view, unfinished_jobs
from scripts.chaos.workload import am_body, runbook_alerts
from scripts.index_copy import copy_index
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack

GROUPS = 24
#: Groups that also get a second, different notification (one more alert) at the same time,
#: so two distinct jobs of one group race for the post in different processes.
GROWING = range(0, GROUPS, 3)
RESOLVING = range(1, GROUPS, 3)
HEADERS = {"Authorization": f"Bearer {AM_TOKEN}"}


@dataclasses.dataclass(frozen=True)
class Bodies:
    key: str
    firing: bytes
    grown: bytes
    resolved: bytes


def bodies(number: int) -> Bodies:
    service, name = runbook_alerts()[number % len(runbook_alerts())]
    key = f'{{}}:{{alertname="{name}", replica_test="{number}"}}'
    one, two = [f"{number:04x}a"], [f"{number:04x}a", f"{number:04x}b"]
    return Bodies(
        key,
        am_body(key, name, service, number, one, "firing"),
        am_body(key, name, service, number, two, "firing"),
        am_body(key, name, service, number, one, "resolved"),
    )


@pytest.fixture()
def replicas(
    tmp_path: Path, golden_index: Path, redis_url: str, fake_slack: FakeSlack
) -> Iterator[list[Enricher]]:
    fake_slack.set_latency(0.05)  # posts overlap across processes
    made: list[Enricher] = []
    for name in ("replica-a", "replica-b"):
        qdrant = tmp_path / name / "qdrant"
        copy_index(golden_index, qdrant)
        env = enricher_env(qdrant_path=qdrant, redis_url=redis_url, slack_url=fake_slack.url,
                           worker_id=name, WORKERS="2", JOB_CLAIM_IDLE_S="3")
        made.append(Enricher(env, tmp_path / f"{name}.log"))
    starting = [threading.Thread(target=e.start) for e in made]
    try:
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join()
        for enricher in made:
            assert enricher.proc is not None, f"{enricher.log_path.name} did not start"
        yield made
    finally:
        for enricher in made:
            enricher.stop()


def send_to_both(replicas: list[Enricher], sends: list[tuple[int, bytes]]) -> list[str]:
    """POST each body to its replica(s), all at once; returns the `status` answers."""

    def post(target: int, body: bytes) -> str:
        url = f"{replicas[target].url}/webhook/alertmanager"
        response = httpx.post(url, content=body, headers=HEADERS, timeout=10)
        assert response.status_code == 202, response.text
        return str(response.json()["status"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda s: post(*s), sends))


def seen(fake: FakeSlack, keys: list[str]) -> dict[str, GroupView]:
    """Per group, what the channel shows (top-level posts by marker, updates, replies)."""
    calls = [dataclasses.asdict(c) for c in fake.calls]
    return slack_view(keys, calls, fake.messages(CHANNEL))


class TestTwoReplicas:
    def test_each_group_posted_once_and_resolved_once(
        self, replicas: list[Enricher], fake_slack: FakeSlack, redis_url: str
    ) -> None:
        """Every body goes to both replicas, plus a competing variant for some groups: one
        top-level post per group, one update and one reply per resolve, both replicas work."""
        groups = [bodies(n) for n in range(GROUPS)]
        keys = [g.key for g in groups]
        firing: list[tuple[int, bytes]] = []
        for n, group in enumerate(groups):
            firing += [(0, group.firing), (1, group.firing)]
            if n in GROWING:
                firing.append((n % 2, group.grown))
        answers = send_to_both(replicas, firing)
        assert answers.count("queued") == GROUPS + len(GROWING)
        wait_for(lambda: all(v.firing_posts for v in seen(fake_slack, keys).values()),
                 timeout_s=60, what="a post for every group")

        send_to_both(replicas, [(r, groups[n].resolved) for n in RESOLVING for r in (0, 1)])
        wait_for(lambda: unfinished_jobs(redis_url) == 0
                 and all(seen(fake_slack, keys)[groups[n].key].replies for n in RESOLVING),
                 timeout_s=60, what="the resolves and an empty queue")

        final = seen(fake_slack, keys)
        top = {key: (v.firing_posts, v.resolved_posts) for key, v in final.items()}
        assert top == dict.fromkeys(keys, (1, 0))
        assert [final[groups[n].key].replies for n in RESOLVING] == [1] * len(RESOLVING)
        assert all(final[groups[n].key].updates for n in RESOLVING)
        top_level = [m for m in fake_slack.messages(CHANNEL) if not m.get("thread_ts")]
        assert len(top_level) == GROUPS
        events = [log_events(e.log_path) for e in replicas]
        assert all(e["job.done"] for e in events), "both replicas take jobs from the stream"
        # The other job of a growing group became an edit of the first post, not a post; or,
        # when it was received before the one already posted, it was an older view of the
        # group and was set aside. The bodies are sent at once, so either order happens.
        second = sum(e["outcome.updated"] + e["outcome.superseded"] for e in events)
        assert second == len(GROWING)
