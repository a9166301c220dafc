"""The Redis failover scenario (`python -m scripts.chaos --redis-failover`, issue 22).

One Redis primary, its replicas and three Sentinels (scripts.local_sentinel); two enricher
processes, each with its own copy of the embedded index, both following the Sentinels'
primary. Client threads send every alert group's firing body to both replicas (as an
Alertmanager HA pair does), retrying 5xx and connection errors and never a 202. When a
share of the sends has been answered, the primary is killed with SIGKILL; Sentinel promotes
a replica while the burst goes on. A watcher records when the Sentinels name a new primary.

`FailoverBurst` and `PrimaryWatch` are shared with tests/reliability/test_failover.py; the
count is scripts.chaos.failover_report.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from scripts.chaos.failover_report import Attempt, tally_failover
from scripts.chaos.harness import (
    AM_TOKEN,
    Enricher,
    enricher_env,
    index_runbooks,
    say,
    start_fake_slack,
    wait_until,
)
from scripts.chaos.observed import drain, slack_calls
from scripts.chaos.workload import Group, build_workload
from scripts.index_copy import copy_index
from scripts.local_sentinel import MASTER_NAME, SentinelCluster

#: REDIS_URL with Sentinel: only its database number is read (enricher.redis_connect).
SENTINEL_REDIS_URL = "redis://127.0.0.1/0"


@dataclass
class FailoverArgs:
    groups: int
    clients: int
    redis_replicas: int
    down_after_ms: int
    min_replicas_ack: int
    rate_429: float
    rate_500: float
    seed: int
    kill_share: float
    claim_idle_s: float
    post_lease_s: float
    workers: int
    cap_s: float
    quiet_s: float
    keep: bool


def failover_env(
    cluster: SentinelCluster, *, qdrant_path: Path, slack_url: str, worker_id: str,
    min_replicas_ack: int, **extra: str,
) -> dict[str, str]:
    """Settings of an enricher that follows the cluster's Sentinels."""
    return enricher_env(
        qdrant_path=qdrant_path, redis_url=SENTINEL_REDIS_URL, slack_url=slack_url,
        worker_id=worker_id, delivery="bot",
        **{"REDIS_SENTINELS": cluster.sentinels, "REDIS_SENTINEL_MASTER": MASTER_NAME,
           "REDIS_MIN_REPLICAS_ACK": str(min_replicas_ack), **extra},
    )


class PrimaryWatch:
    """Polls the Sentinels from the kill on: when did they name a new primary that takes
    writes (`promoted_at`, wall clock)."""

    def __init__(self, cluster: SentinelCluster, old_port: int) -> None:
        self.cluster = cluster
        self.old_port = old_port
        self.promoted_at: float | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.cluster.wait_for_failover(self.old_port)
        self.promoted_at = time.time()

    def join(self, timeout_s: float) -> None:
        self._thread.join(timeout_s)


@dataclass
class FailoverBurst:
    """Every group's firing body to every enricher, in random order, from client threads;
    each HTTP attempt is recorded (`Attempt`), so ack latency and 503s can be counted."""

    groups: list[Group]
    enrichers: list[Enricher]
    rng: random.Random
    attempts: list[Attempt] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._todo = [(g, e) for g in range(len(self.groups)) for e in range(len(self.enrichers))]
        self.rng.shuffle(self._todo)
        self.total = len(self._todo)
        self.answered = 0

    def _take(self) -> tuple[int, int] | None:
        with self._lock:
            return self._todo.pop() if self._todo else None

    def _record(self, attempt: Attempt, final: bool) -> None:
        with self._lock:
            self.attempts.append(attempt)
            self.answered += final

    def client(self, give_up_s: float = 180) -> None:
        headers = {"Authorization": f"Bearer {AM_TOKEN}", "Content-Type": "application/json"}
        with httpx.Client(timeout=10) as http:
            while (send := self._take()) is not None:
                group, target = send
                url = f"{self.enrichers[target].url}/webhook/alertmanager"
                self._send(http, url, headers, group, time.monotonic() + give_up_s)

    def _send(
        self, http: httpx.Client, url: str, headers: dict[str, str], group: int, until: float
    ) -> None:
        """Like Alertmanager: retry connection errors and 5xx with backoff, stop at a 2xx
        or 4xx (or when giving up)."""
        delay = 0.1
        while True:
            started = time.time()
            status, outcome = 0, ""
            with contextlib.suppress(httpx.TransportError):
                reply = http.post(url, content=self.groups[group].firing, headers=headers)
                status = reply.status_code
                with contextlib.suppress(ValueError):
                    outcome = str(reply.json().get("status", ""))
            final = 0 < status < 500 or time.monotonic() > until
            self._record(Attempt(group, started, time.time() - started, status, outcome), final)
            if final:
                return
            time.sleep(delay)
            delay = min(2.0, delay * 2)

    def run(self, clients: int, cluster: SentinelCluster, kill_share: float) -> dict[str, Any]:
        """Send everything; kill the primary once `kill_share` of the sends were answered.
        Returns the wall times of the start, the kill and the promotion (None if Sentinel
        promoted nothing), and the old primary's port."""
        started = time.time()
        threads = [threading.Thread(target=self.client, daemon=True) for _ in range(clients)]
        for thread in threads:
            thread.start()
        point = int(self.total * kill_share)
        wait_until(lambda: self.answered >= point, 600, "the burst to reach the kill point",
                   0.005)
        killed_at = time.time()
        old_port = cluster.kill_primary()
        say(f"kill -9 of the Redis primary (port {old_port}) after {self.answered} answers")
        watch = PrimaryWatch(cluster, old_port)
        for thread in threads:
            thread.join()
        watch.join(120)
        return {"started": started, "killed_at": killed_at, "old_port": old_port,
                "promoted_at": watch.promoted_at}


def run_failover(args: FailoverArgs, work: Path) -> dict[str, Any]:
    """The whole scenario; the report of `tally_failover` plus the run's settings."""
    rng = random.Random(args.seed)
    cluster = SentinelCluster(work / "redis", replicas=args.redis_replicas,
                              down_after_ms=args.down_after_ms)
    cluster.start()
    slack_proc = None
    enrichers: list[Enricher] = []
    try:
        slack_proc, slack_url = start_fake_slack(args.rate_429, args.rate_500, args.seed)
        say("indexing golden/runbooks")
        with (work / "ingest.log").open("w") as log:
            index_runbooks(work / "qdrant", cluster.primary_url(), log)
        for name in ("replica-a", "replica-b"):
            qdrant = work / name / "qdrant"
            copy_index(work / "qdrant", qdrant)
            env = failover_env(cluster, qdrant_path=qdrant, slack_url=slack_url,
                               worker_id=name, min_replicas_ack=args.min_replicas_ack,
                               WORKERS=str(args.workers),
                               JOB_CLAIM_IDLE_S=str(args.claim_idle_s),
                               POST_LEASE_S=str(args.post_lease_s))
            enrichers.append(Enricher(env, work / f"{name}.log"))
        for enricher in enrichers:
            enricher.start()
        groups, _, _ = build_workload(args.groups, args.groups, 0.0, rng)
        say(f"two enrichers up; sending {args.groups} groups to both")
        burst = FailoverBurst(groups, enrichers, rng)
        kill = burst.run(args.clients, cluster, args.kill_share)
        say("burst done; draining")
        drain(cluster.primary_url(), lambda: len(slack_calls(slack_url)), args.cap_s,
              args.quiet_s)
        report = tally_failover(burst.groups, burst.attempts, slack_url, enrichers,
                                cluster.primary_url(), **kill)
        report.update(seed=args.seed, min_replicas_ack=args.min_replicas_ack,
                      redis_replicas=args.redis_replicas, down_after_ms=args.down_after_ms)
        return report
    finally:
        for enricher in enrichers:
            enricher.stop()
        if slack_proc is not None:
            slack_proc.terminate()
            slack_proc.wait()
        cluster.stop()


__all__ = ["FailoverArgs", "FailoverBurst", "PrimaryWatch", "failover_env", "run_failover"]
