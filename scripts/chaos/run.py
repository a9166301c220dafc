"""One chaos run: its settings, the processes it starts and stops, and the burst with its
faults, followed by the count."""

from __future__ import annotations

import contextlib
import random
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scripts.chaos.faults import kill_mid_burst, memory_rounds
from scripts.chaos.harness import (
    DeliveryMode,
    Enricher,
    enricher_env,
    index_runbooks,
    say,
    start_fake_slack,
    stop_all,
)
from scripts.chaos.incidents import (
    IncidentSends,
    build_incidents,
    incident_thread,
    notes_env,
    running_pagerduty,
    tally_incidents,
)
from scripts.chaos.observed import drain, incident_pages, slack_calls, unfinished_jobs
from scripts.chaos.report import tally
from scripts.chaos.workload import Burst, build_workload, client_thread
from scripts.local_redis import RedisServer
from tests.fakepagerduty import FakePagerDuty


@dataclass
class Args:
    alerts: int
    groups: int
    resolve_share: float
    clients: int
    kills: int
    rate_429: float
    rate_500: float
    seed: int
    claim_idle_s: float
    post_lease_s: float
    cap_s: float
    quiet_s: float
    memory_rounds: int
    memory_per_round: int
    keep: bool
    delivery: DeliveryMode
    incidents: int


def run(args: Args, work: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    # A Redis that loses nothing it acknowledged: AOF with fsync on every write.
    redis_server = RedisServer(work, durable=True)
    redis_server.start()
    redis_url = redis_server.url
    slack_proc: subprocess.Popen[bytes] | None = None
    enricher: Enricher | None = None
    with contextlib.ExitStack() as stack:
        try:
            slack_proc, slack_url = start_fake_slack(args.rate_429, args.rate_500, args.seed)
            pagerduty = None
            if args.incidents:
                pagerduty = stack.enter_context(
                    running_pagerduty(args.rate_429, args.rate_500, args.seed))
            say("indexing golden/runbooks")
            with (work / "ingest.log").open("w") as log:
                index_runbooks(work / "qdrant", redis_url, log)
            env = enricher_env(qdrant_path=work / "qdrant", redis_url=redis_url,
                               slack_url=slack_url, worker_id="chaos-1", delivery=args.delivery,
                               JOB_CLAIM_IDLE_S=str(args.claim_idle_s),
                               POST_LEASE_S=str(args.post_lease_s),
                               **(notes_env(pagerduty) if pagerduty else {}))
            enricher = Enricher(env, work / "enricher.log", stdout_path=work / "stdout.log")
            enricher.start()
            say(f"enricher up on {enricher.url} ({args.delivery}); sending {args.alerts} "
                f"webhooks and {args.incidents} PagerDuty incidents")
            return burst_and_count(args, rng, enricher, slack_url, redis_url, pagerduty)
        finally:
            stop_all(enricher, slack_proc, redis_server)


def burst_and_count(
    args: Args, rng: random.Random, enricher: Enricher, slack_url: str, redis_url: str,
    pagerduty: FakePagerDuty | None,
) -> dict[str, Any]:
    groups, sends, resolve_copies = build_workload(args.groups, args.alerts,
                                                   args.resolve_share, rng)
    burst = Burst(groups, sends, resolve_copies, rng)
    incidents = IncidentSends(build_incidents(args.incidents, datetime.now(UTC)), rng)
    started = time.monotonic()
    threads = [threading.Thread(target=client_thread, args=(enricher, burst), daemon=True)
               for _ in range(args.clients)]
    threads += [threading.Thread(target=incident_thread, args=(enricher, incidents, burst),
                                 daemon=True) for _ in range(2 if args.incidents else 0)]
    for thread in threads:
        thread.start()
    kill_times = kill_mid_burst(enricher, burst, threads, args.kills)
    for thread in threads:
        thread.join()
    burst_end = time.monotonic()
    say(f"burst done in {burst_end - started:.1f}s; draining")
    assert enricher.stdout_path is not None
    stdout = enricher.stdout_path

    def progress() -> int:
        """What the enricher has sent so far: Slack calls, or console output."""
        notes = len(pagerduty.calls) if pagerduty else 0
        if args.delivery == "console":
            return notes + (stdout.stat().st_size if stdout.exists() else 0)
        return notes + len(slack_calls(slack_url))

    last_call = drain(redis_url, progress, args.cap_s, args.quiet_s)
    report = tally(burst, enricher, slack_url, seed=args.seed, kills=args.kills,
                   keep=args.keep, delivery=args.delivery)
    report["unfinished_jobs"] = unfinished_jobs(redis_url)
    if pagerduty is not None:
        pages = incident_pages(slack_url, sorted(incidents.accepted), args.delivery)
        report["pagerduty"] = tally_incidents(incidents, pagerduty, pages)
    report["burst_s"] = round(burst_end - started, 1)
    report["drain_s"] = round(max(0.0, last_call - burst_end), 1)
    if kill_times:
        report["last_kill_to_last_slack_call_s"] = round(last_call - kill_times[-1], 1)
    if args.memory_rounds:
        say("memory rounds")
        valid = groups[0].firing
        rss, statuses = memory_rounds(enricher, valid, args.memory_rounds, args.memory_per_round,
                                      rng)
        report["memory"] = {
            "requests": sum(statuses.values()),
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "rss_kb_per_round": rss,
            "growth_after_first_round_kb": rss[-1] - rss[0],
        }
    return report
