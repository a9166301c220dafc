"""Chaos proof of issue 4: a page burst, kill -9 mid-burst, and a Slack error storm.

`make chaos` runs `python -m scripts.chaos`. It reports what happened and is not a timed test.

1. It starts a private redis-server (appendonly, fsync always), the fake Slack (429 and 500 on
   a fraction of calls), a throwaway embedded Qdrant holding golden/runbooks, and the enricher.
2. It sends `--alerts` webhooks over `--groups` alert groups from a few client threads, the way
   Alertmanager in HA does: every body twice, some re-sent again, and some groups resolved
   (a resolve only after its firing was accepted). Clients retry connection failures and 5xx,
   never a 202.
3. It kills the enricher with SIGKILL mid-burst and restarts it with the same WORKER_ID.
   Beside it go `--incidents` signed PagerDuty triggers, each delivered twice, with incident
   notes on (`PAGERDUTY_NOTES=all`) through a fake PagerDuty API that fails like the fake
   Slack (issue 35; scripts/chaos/incidents.py).
4. It waits until the queue is empty and Slack has been quiet for a few seconds, then counts
   per group what the fake Slack received, and per incident its notes and pages.
   `--delivery webhook` posts through the fake's incoming webhook instead of its Web API,
   `--delivery console` prints to stdout (no faults then); messages are then told apart by
   their text, not by a marker.
5. Memory: it sends rounds of hostile bodies and records the enricher's RSS after each round.

A table goes to stdout and the last line is JSON. Exit 1 when an accepted firing page never
appeared as a firing post (even if its resolve did), a group got more than one top-level post,
an accepted resolve never showed, a job was dead-lettered, a request was never accepted, or an
incident has no note, two notes, or (bot delivery) not exactly one page.
`--keep` leaves the enricher log, the Slack calls and the Redis AOF for a post-mortem.

`--redis-failover` runs the scenario of issue 22 instead (scripts/chaos/failover.py): a
Redis primary with replicas under three Sentinels, two enricher replicas, and a `kill -9`
of the Redis primary mid-burst. Exit 1 when a page answered 202 is lost or doubled.

tests/reliability reuses the process harness (harness.py) and the Slack-side counting
(observed.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scripts.chaos.failover import FailoverArgs, run_failover
from scripts.chaos.failover_report import failover_failed, print_failover_table
from scripts.chaos.harness import DELIVERY_MODES
from scripts.chaos.incidents import incidents_failed
from scripts.chaos.report import failed, print_table
from scripts.chaos.run import Args, run
from scripts.local_sentinel import DOWN_AFTER_MS


def parse_args(argv: list[str] | None) -> Args | FailoverArgs:
    p = argparse.ArgumentParser(prog="python -m scripts.chaos", description=__doc__.split("\n")[0])
    p.add_argument("--alerts", type=int, default=1000, help="webhook requests in the burst")
    p.add_argument("--groups", type=int, default=300, help="distinct alert groups")
    p.add_argument("--resolve-share", type=float, default=0.4, help="share of groups resolved")
    p.add_argument("--clients", type=int, default=4, help="client threads")
    p.add_argument("--kills", type=int, default=1, help="kill -9 this many times mid-burst")
    p.add_argument("--rate-429", type=float, default=0.1)
    p.add_argument("--rate-500", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--claim-idle-s", type=float, default=3.0, help="JOB_CLAIM_IDLE_S")
    p.add_argument("--post-lease-s", type=float, default=120.0,
                   help="POST_LEASE_S (the production default: a restart takes over at once)")
    p.add_argument("--cap-s", type=float, default=900, help="give up draining after this")
    p.add_argument("--quiet-s", type=float, default=6, help="Slack silence that means done")
    p.add_argument("--memory-rounds", type=int, default=6)
    p.add_argument("--memory-per-round", type=int, default=400)
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, AOF)")
    p.add_argument("--incidents", type=int, default=60,
                   help="PagerDuty incidents sent beside the burst (each delivered twice), "
                        "with incident notes on through the fake PagerDuty API's 429s and "
                        "500s; 0: none")
    p.add_argument("--delivery", choices=DELIVERY_MODES, default="bot",
                   help="bot token (Web API), incoming webhook, or console (stdout)")
    f = p.add_argument_group("--redis-failover (issue 22; --groups, --clients, --seed, rates, "
                             "--claim-idle-s, --post-lease-s, --keep apply too)")
    f.add_argument("--redis-failover", action="store_true",
                   help="kill -9 the Redis primary under Sentinel instead of the enricher")
    f.add_argument("--min-replicas-ack", type=int, default=1, help="REDIS_MIN_REPLICAS_ACK")
    f.add_argument("--redis-replicas", type=int, default=2)
    f.add_argument("--down-after-ms", type=int, default=DOWN_AFTER_MS,
                   help="Sentinel down-after-milliseconds")
    f.add_argument("--kill-share", type=float, default=0.4,
                   help="kill once this share of the sends was answered")
    f.add_argument("--workers", type=int, default=4, help="WORKERS of each enricher")
    ns = p.parse_args(argv)
    seed = ns.seed if ns.seed is not None else random.randrange(1_000_000)
    if ns.redis_failover:
        return FailoverArgs(ns.groups, ns.clients, ns.redis_replicas, ns.down_after_ms,
                            ns.min_replicas_ack, ns.rate_429, ns.rate_500, seed, ns.kill_share,
                            ns.claim_idle_s, ns.post_lease_s, ns.workers, ns.cap_s, ns.quiet_s,
                            ns.keep)
    return Args(ns.alerts, ns.groups, ns.resolve_share, ns.clients, ns.kills, ns.rate_429,
                ns.rate_500, seed, ns.claim_idle_s, ns.post_lease_s, ns.cap_s, ns.quiet_s,
                ns.memory_rounds, ns.memory_per_round, ns.keep, ns.delivery, ns.incidents)


@contextlib.contextmanager
def workdir(keep: bool) -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="rbe-chaos-"))
    try:
        yield path
    finally:
        if keep:
            print(f"work folder kept: {path}", file=sys.stderr)
        else:
            shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with workdir(args.keep) as work:
        if isinstance(args, FailoverArgs):
            report = run_failover(args, work)
            print_failover_table(report)
            report["ok"] = not failover_failed(report)
        else:
            report = run(args, work)
            print_table(report)
            report["ok"] = not failed(report) and not (
                "pagerduty" in report and incidents_failed(report["pagerduty"]))
    print(json.dumps(report, sort_keys=True))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
