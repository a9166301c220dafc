"""One fuzz run: the real service and its fakes, batches of random hostile bodies, the count.

Each batch is a hypothesis run of its own seed (`seed`, `seed + 1`, …), so a failing batch is
rerun alone with `--seed`; hypothesis shrinks the failing body before it is reported.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from scripts.chaos.harness import (
    AM_TOKEN,
    PD_SECRET,
    Enricher,
    enricher_env,
    index_runbooks,
    say,
    start_fake_slack,
    stop_all,
    wait_until,
)
from scripts.chaos.observed import log_events, unfinished_jobs
from scripts.local_redis import RedisServer
from tests.helpers import sign
from tests.payloads import alertmanager_bodies, bodies, pagerduty_bodies

#: The service's default MAX_BODY_BYTES: the fuzz bodies reach up to it.
BODY_CAP = 1 << 20
#: Alertmanager cuts a receiver off at about 10 s (DESIGN.md §2): a later answer is as good
#: as none for the sender. It fails the run, but is not shrunk: the body that froze the
#: service may be one sent before, so the batch seeds are reported instead.
SLOW_S = 10.0
#: No answer by then: counted as "timeout", and the run goes on.
HANG_S = 120.0
#: What uvicorn logs when a request raises out of the app (a traceback).
ASGI_ERROR = "Exception in ASGI application"
#: A progress line this often, so a run cut short still says what it saw.
PROGRESS_S = 60.0
ENDPOINTS = {"alertmanager": "/webhook/alertmanager", "pagerduty": "/webhook/pagerduty"}


@dataclass
class Tally:
    """Answers per endpoint and status; the failing batch and body, if any."""

    #: Per endpoint, counts by status code ("202") or "timeout".
    statuses: dict[str, Counter[str]] = field(
        default_factory=lambda: {name: Counter() for name in ENDPOINTS}
    )
    queued: int = 0
    slow: int = 0
    slowest_s: float = 0.0
    slow_seeds: set[int] = field(default_factory=set)
    batches: int = 0
    failed_seed: int | None = None
    failure: str = ""
    failing_body: bytes = b""
    workers: Counter[str] = field(default_factory=Counter)
    unfinished: int = 0

    @property
    def sent(self) -> int:
        return sum(sum(c.values()) for c in self.statuses.values())

    @property
    def server_errors(self) -> int:
        return sum(n for c in self.statuses.values() for code, n in c.items() if code[0] == "5")


def requests() -> st.SearchStrategy[tuple[str, bytes]]:
    """(endpoint, body): Alertmanager and PagerDuty bodies, hostile in every way we know."""
    return st.one_of(
        st.tuples(st.just("alertmanager"), bodies(alertmanager_bodies(), cap=BODY_CAP)),
        st.tuples(st.just("pagerduty"), bodies(pagerduty_bodies(), cap=BODY_CAP)),
    )


def post(
    client: httpx.Client, endpoint: str, body: bytes, batch_seed: int, tally: Tally
) -> int | None:
    """Send one body with valid credentials (every body reaches the parser); its status,
    None when no answer came within HANG_S."""
    headers = {"Authorization": f"Bearer {AM_TOKEN}"}
    if endpoint == "pagerduty":
        headers = {"X-PagerDuty-Signature": sign(body, PD_SECRET)}
    started = time.monotonic()
    try:
        response = client.post(ENDPOINTS[endpoint], content=body, headers=headers)
    except httpx.TimeoutException:
        response = None
    took = time.monotonic() - started
    tally.slowest_s = max(tally.slowest_s, took)
    if took > SLOW_S:
        tally.slow += 1
        tally.slow_seeds.add(batch_seed)
    if response is None:
        tally.statuses[endpoint]["timeout"] += 1
        return None
    tally.statuses[endpoint][str(response.status_code)] += 1
    if response.status_code == 202 and response.json().get("status") == "queued":
        tally.queued += 1
    return response.status_code


def run_batch(
    client: httpx.Client, batch_seed: int, examples: int, deadline: float, tally: Tally
) -> None:
    """One hypothesis run; raises (after shrinking) on a 5xx or a dropped connection."""

    @seed(batch_seed)
    @settings(
        max_examples=examples,
        derandomize=False,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(request=requests())
    def one(request: tuple[str, bytes]) -> None:
        if time.monotonic() > deadline:
            return
        endpoint, body = request
        tally.failing_body = body
        status = post(client, endpoint, body, batch_seed, tally)
        assert status is None or status < 500, f"{endpoint} answered {status}"
        tally.failing_body = b""

    one()


def fuzz(enricher: Enricher, seconds: float, first_seed: int, examples: int, tally: Tally) -> None:
    deadline = time.monotonic() + seconds
    said = time.monotonic()
    with httpx.Client(base_url=enricher.url, timeout=HANG_S) as client:
        batch_seed = first_seed
        while time.monotonic() < deadline:
            if time.monotonic() - said >= PROGRESS_S:
                said = time.monotonic()
                say(f"{tally.sent} bodies, last batch seed {batch_seed - 1}: {counts(tally)}")
            try:
                run_batch(client, batch_seed, examples, deadline, tally)
            except Exception as exc:  # a 5xx, a dead service: report the batch and stop
                tally.failed_seed = batch_seed
                notes = "\n".join(getattr(exc, "__notes__", []))
                tally.failure = f"{type(exc).__name__}: {exc}\n{notes}"
                return
            tally.batches += 1
            batch_seed += 1


def check_workers(enricher: Enricher, redis_url: str, log_path: Path, tally: Tally) -> None:
    """Wait for the workers to finish every accepted body, then count what they logged."""
    with contextlib.suppress(TimeoutError):  # counted as unfinished below
        wait_until(lambda: unfinished_jobs(redis_url) == 0, HANG_S * 5,
                   "the workers to finish every accepted body")
    tally.unfinished = unfinished_jobs(redis_url)
    time.sleep(1)  # the last job.done line
    events = log_events(log_path)
    tally.workers = Counter({name: events[name] for name in (
        "job.done", "job.crashed", "job.dead_letter", "job.dropped", ASGI_ERROR)})
    tally.workers["alive"] = int(enricher.proc is not None and enricher.proc.poll() is None)


def run(seconds: float, first_seed: int, examples: int, work: Path) -> Tally:
    redis_server = RedisServer(work)
    redis_server.start()
    slack_proc: subprocess.Popen[bytes] | None = None
    enricher: Enricher | None = None
    tally = Tally()
    try:
        slack_proc, slack_url = start_fake_slack()
        say("indexing golden/runbooks")
        with (work / "ingest.log").open("w") as log:
            index_runbooks(work / "qdrant", redis_server.url, log)
        env = enricher_env(qdrant_path=work / "qdrant", redis_url=redis_server.url,
                           slack_url=slack_url, worker_id="fuzz-1")
        enricher = Enricher(env, work / "enricher.log")
        enricher.start()
        say(f"enricher up on {enricher.url}; fuzzing for {seconds:.0f} s from seed {first_seed}")
        fuzz(enricher, seconds, first_seed, examples, tally)
        say(f"sent {tally.sent} bodies; waiting for the workers")
        check_workers(enricher, redis_server.url, work / "enricher.log", tally)
        return tally
    finally:
        stop_all(enricher, slack_proc, redis_server)


def counts(tally: Tally) -> str:
    """`alertmanager 202=… 400=… · pagerduty …`"""
    return " · ".join(
        f"{name} " + " ".join(f"{code}={n}" for code, n in sorted(by_status.items()))
        for name, by_status in tally.statuses.items()
    )


def summary(tally: Tally, seconds: float, first_seed: int) -> str:
    """The last line of a run: counts per endpoint and status, and what the workers did."""
    workers = tally.workers
    return (
        f"fuzz: {tally.sent} bodies in {seconds:.0f} s, seeds {first_seed}.."
        f"{first_seed + max(tally.batches - 1, 0)}: {counts(tally)}; "
        f"{tally.server_errors} answered 5xx, {tally.slow} slower than {SLOW_S:.0f} s "
        f"(slowest {tally.slowest_s:.2f} s); workers: {tally.queued} queued, "
        f"{workers['job.done']} done, {workers['job.crashed']} crashed, "
        f"{workers['job.dead_letter']} dead-lettered, {tally.unfinished} unfinished"
    )


def failed(tally: Tally) -> list[str]:
    """Why the run fails, if it does."""
    reasons = []
    if tally.failed_seed is not None:
        reasons.append(f"seed {tally.failed_seed}: {tally.failure[:2000]}")
    if tally.slow:
        seeds = ", ".join(str(s) for s in sorted(tally.slow_seeds))
        reasons.append(f"{tally.slow} answers slower than {SLOW_S:.0f} s, in the batches of "
                       f"seeds {seeds}: a body sent before froze the service")
    if tally.workers["alive"] != 1:
        reasons.append("the enricher died")
    for event in ("job.crashed", "job.dead_letter", "job.dropped", ASGI_ERROR):
        if tally.workers[event]:
            reasons.append(f"{tally.workers[event]} {event} in the enricher log")
    if tally.unfinished:
        reasons.append(f"{tally.unfinished} accepted jobs never finished")
    if tally.workers["job.done"] < tally.queued:
        reasons.append(f"{tally.queued - tally.workers['job.done']} queued jobs never done")
    return reasons

