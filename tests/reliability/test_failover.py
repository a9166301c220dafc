"""A Redis primary killed with SIGKILL mid-burst under Sentinel (issue 22): the short CI
version of `python -m scripts.chaos --redis-failover`.

Real processes: a primary, two replicas and three Sentinels (Debian's redis-server), two
`python -m enricher` replicas each with its own copy of the embedded index, and the fake
Slack answering 10% of calls 429 and 10% 500. Both enrichers get every group's body (an
Alertmanager HA pair), with REDIS_MIN_REPLICAS_ACK=1. Sentinel's down-after-milliseconds is
1500 here instead of the 5000 of the chaos run, only to keep the test short; nothing below
depends on it but the test's length.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.chaos.failover import FailoverBurst, failover_env
from scripts.chaos.failover_report import tally_failover
from scripts.chaos.harness import Enricher
from scripts.chaos.observed import slack_calls, unfinished_jobs
from scripts.chaos.workload import build_workload
from scripts.index_copy import copy_index
from scripts.local_sentinel import SentinelCluster
from tests.conftest import wait_for
from tests.fakeslack import FakeSlack

GROUPS = 30


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[SentinelCluster]:
    made = SentinelCluster(tmp_path / "redis", replicas=2, down_after_ms=1500)
    made.start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture()
def enrichers(
    tmp_path: Path, golden_index: Path, cluster: SentinelCluster, fake_slack: FakeSlack
) -> Iterator[list[Enricher]]:
    fake_slack.set_fault_rates(0.1, 0.1, seed=22)
    made: list[Enricher] = []
    try:
        for name in ("replica-a", "replica-b"):
            qdrant = tmp_path / name / "qdrant"
            copy_index(golden_index, qdrant)
            env = failover_env(cluster, qdrant_path=qdrant, slack_url=fake_slack.url,
                               worker_id=name, min_replicas_ack=1, WORKERS="2",
                               JOB_CLAIM_IDLE_S="3")
            enricher = Enricher(env, tmp_path / f"{name}.log")
            made.append(enricher)
            enricher.start()
        yield made
    finally:
        for enricher in made:
            enricher.stop()


class TestPrimaryKilledMidBurst:
    def test_every_page_answered_202_is_posted_once(
        self, cluster: SentinelCluster, enrichers: list[Enricher], fake_slack: FakeSlack
    ) -> None:
        """Webhooks answered 503 while no primary takes writes, the same processes take
        them again once Sentinel promoted a replica, and every group answered 202 has
        exactly one page in Slack; the queue on the new primary drains."""
        pids = [e.pid for e in enrichers]
        rng = random.Random(22)
        groups, _, _ = build_workload(GROUPS, GROUPS, 0.0, rng)
        burst = FailoverBurst(groups, enrichers, rng)
        kill = burst.run(clients=4, cluster=cluster, kill_share=0.3)
        assert kill["promoted_at"] is not None, "Sentinel promoted a replica"
        new_primary = cluster.primary_url()
        assert f":{kill['old_port']}/" not in new_primary

        def drained() -> bool:
            return unfinished_jobs(new_primary) == 0 and len(slack_calls(fake_slack.url)) > 0

        wait_for(drained, timeout_s=240, what="the queue on the new primary to drain")
        report = tally_failover(groups, burst.attempts, fake_slack.url, enrichers, new_primary,
                                **kill)
        assert report["answers"].get("503", 0) > 0, "no primary: the webhooks said retry"
        assert report["ack_202_after_kill"]["n"] > 0, "intake resumed without a restart"
        assert report["accepted_groups"] == GROUPS
        assert (report["lost"], report["duplicated"]) == (0, 0)
        assert report["exactly_once"] == GROUPS
        assert report["dead_letters"] == 0
        assert [e.pid for e in enrichers] == pids, "no enricher was restarted"
