"""Chaos proof of issue 4: a page burst, kill -9 mid-burst, and a Slack error storm.

`make chaos` runs `python -m scripts.chaos`. It reports what happened and is not a timed test.

1. It starts a private redis-server (appendonly, fsync always), the fake Slack (429 and 500 on
   a fraction of calls), a throwaway embedded Qdrant holding golden/runbooks, and the enricher.
2. It sends `--alerts` webhooks over `--groups` alert groups from a few client threads, the way
   Alertmanager in HA does: every body twice, some re-sent again, and some groups resolved
   (a resolve only after its firing was accepted). Clients retry connection failures and 5xx,
   never a 202.
3. It kills the enricher with SIGKILL mid-burst and restarts it with the same WORKER_ID.
4. It waits until the queue is empty and Slack has been quiet for a few seconds, then counts
   per group what the fake Slack received.
5. Memory: it sends rounds of hostile bodies and records the enricher's RSS after each round.

A table goes to stdout and the last line is JSON. Exit 1 when an accepted firing page never
appeared as a firing post (even if its resolve did), a group got more than one top-level post,
an accepted resolve never showed, a job was dead-lettered, or a request was never accepted.
`--keep` leaves the enricher log, the Slack calls and the Redis AOF for a post-mortem.

The process harness (`Enricher`, `start_fake_slack`) is reused by
tests/reliability.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx
import redis

from scripts.local_redis import RedisServer, free_port

REPO = Path(__file__).resolve().parent.parent
RUNBOOKS = REPO / "golden" / "runbooks"
SLACK_TOKEN = "xoxb-test"
CHANNEL = "C1"
AM_TOKEN = "chaos-am-token"
PD_SECRET = "chaos-pd-secret"
FIRING_ENDS = "0001-01-01T00:00:00Z"


def wait_until(
    predicate: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.1
) -> None:
    """Poll `predicate()` until true; the timeout only bounds a hang."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s:.0f}s waiting for {what}")


# --- processes ----------------------------------------------------------------------------


def start_fake_slack(
    rate_429: float = 0.0, rate_500: float = 0.0, seed: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m tests.fakeslack` as a subprocess; returns it and its base URL."""
    argv = [sys.executable, "-m", "tests.fakeslack", "--port", "0", "--token", SLACK_TOKEN,
            "--rate-429", str(rate_429), "--rate-500", str(rate_500)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake Slack did not start (printed {url!r})")
    return proc, url


def base_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(HF_HUB_OFFLINE="1", MODELS_DIR=str(REPO / "models"), PYTHONUNBUFFERED="1")
    env.update(values)
    return env


def index_runbooks(qdrant_path: Path, redis_url: str, log: TextIO) -> None:
    env = base_env(QDRANT_PATH=str(qdrant_path), REDIS_URL=redis_url)
    subprocess.run(
        [sys.executable, "-m", "ingest", "--root", str(RUNBOOKS), "--no-git"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True,
    )


@dataclass
class Enricher:
    """`python -m enricher` as a subprocess; restartable with the same settings."""

    env: dict[str, str]
    log_path: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise RuntimeError("the enricher is not running")
        return self.proc.pid

    def start(self, timeout_s: float = 120) -> None:
        env = {**self.env, "HOST": "127.0.0.1", "PORT": str(self.port)}
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "enricher"], cwd=REPO, env=env,
                stdout=log, stderr=subprocess.STDOUT,
            )
        wait_until(self._ready, timeout_s, f"the enricher on port {self.port} to be ready")

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the enricher exited with {self.proc.returncode}:\n{tail}")
        try:
            return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def terminate(self, timeout_s: float = 60) -> int:
        """SIGTERM and wait; returns the exit code (negative: killed by that signal)."""
        if self.proc is None:
            raise RuntimeError("the enricher is not running")
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        self.proc = None
        return code

    def stop(self) -> None:
        """Best-effort cleanup: SIGTERM, then SIGKILL."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def metric(self, name: str) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        return float(match.group(1)) if match else 0.0

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text()
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        return int(match.group(1)) if match else 0


def enricher_env(
    *, qdrant_path: Path, redis_url: str, slack_url: str, worker_id: str, **extra: str
) -> dict[str, str]:
    return base_env(
        QDRANT_PATH=str(qdrant_path),
        REDIS_URL=redis_url,
        SLACK_BOT_TOKEN=SLACK_TOKEN,
        SLACK_CHANNEL=CHANNEL,
        SLACK_API_URL=slack_url,
        WORKER_ID=worker_id,
        ALERTMANAGER_BEARER_TOKENS=AM_TOKEN,
        PAGERDUTY_SIGNING_SECRETS=PD_SECRET,
        **extra,
    )


# --- Slack as the reader sees it -----------------------------------------------------------


def marker(group_key: str, status: str) -> str:
    """The key the worker stores in each top-level post's metadata (`enricher.worker._marker`)."""
    return hashlib.sha256(f"{group_key}|{status}".encode()).hexdigest()[:32]


def slack_calls(slack_url: str) -> list[dict[str, Any]]:
    origin = slack_url.removesuffix("/api/")
    calls: list[dict[str, Any]] = httpx.get(f"{origin}/_fake/calls", timeout=60).json()["calls"]
    return calls


def slack_history(slack_url: str, channel: str = CHANNEL) -> list[dict[str, Any]]:
    """Every top-level message of the channel with its metadata (retried past fault rates)."""
    body = {"channel": channel, "limit": 1_000_000, "include_all_metadata": True}
    headers = {"Authorization": f"Bearer {SLACK_TOKEN}"}
    for _ in range(100):
        reply = httpx.post(f"{slack_url}conversations.history", json=body, headers=headers,
                           timeout=60)
        data: dict[str, Any] = reply.json()
        if data.get("ok"):
            return list(data["messages"])
        if data.get("error") == "channel_not_found":
            return []
        time.sleep(0.2)
    raise RuntimeError("conversations.history kept failing")


@dataclass
class GroupView:
    """What one alert group looks like in Slack."""

    firing_posts: int = 0
    resolved_posts: int = 0
    updates: int = 0
    replies: int = 0


def slack_view(
    group_keys: list[str], calls: list[dict[str, Any]], history: list[dict[str, Any]]
) -> dict[str, GroupView]:
    """Per group key: successful top-level posts (by marker), and updates and thread replies
    on those posts (by ts)."""
    by_marker: dict[str, tuple[str, str]] = {}
    for key in group_keys:
        for status in ("firing", "resolved"):
            by_marker[marker(key, status)] = (key, status)
    views = {key: GroupView() for key in group_keys}
    ts_group: dict[str, str] = {}
    for message in history:
        found = by_marker.get(_marker_of(message))
        if found is not None:
            ts_group[str(message["ts"])] = found[0]
    for call in calls:
        if not call["ok"]:
            continue
        body = call["body"]
        if call["method"] == "chat.postMessage" and not body.get("thread_ts"):
            found = by_marker.get(_marker_of(body))
            if found is not None:
                view = views[found[0]]
                if found[1] == "firing":
                    view.firing_posts += 1
                else:
                    view.resolved_posts += 1
        elif call["method"] == "chat.postMessage":
            parent = ts_group.get(str(body["thread_ts"]))
            if parent is not None:
                views[parent].replies += 1
        elif call["method"] == "chat.update":
            edited = ts_group.get(str(body.get("ts")))
            if edited is not None:
                views[edited].updates += 1
    return views


def _marker_of(message: Mapping[str, Any]) -> str:
    meta = message.get("metadata")
    if not isinstance(meta, dict):
        return ""
    payload = meta.get("event_payload")
    return str(payload.get("key", "")) if isinstance(payload, dict) else ""


def log_events(log_path: Path) -> Counter[str]:
    """Counts of the enricher's JSON log events, with job outcomes and reasons spelled out."""
    counts: Counter[str] = Counter()
    for line in log_path.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            name = str(event.get("event", ""))
            counts[name] += 1
            if name == "job.done":
                counts[f"outcome.{event.get('outcome')}"] += 1
            elif name in ("job.retry_later", "job.dead_letter"):
                counts[f"{name}.{event.get('reason')}"] += 1
    return counts


def group_outcomes(log_path: Path) -> dict[str, Counter[str]]:
    """Per alert group, the outcomes of its finished jobs (posted, superseded, ...)."""
    outcomes: dict[str, Counter[str]] = {}
    for line in log_path.read_text(errors="replace").splitlines():
        if '"job.done"' in line:
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "job.done":
                    group = str(event.get("group"))
                    outcomes.setdefault(group, Counter())[str(event.get("outcome"))] += 1
    return outcomes


# --- workload ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    key: str
    firing: bytes
    resolved: bytes


@dataclass(frozen=True)
class Send:
    group: int
    kind: str  # "firing" | "resolved"


def runbook_alerts() -> list[tuple[str, str]]:
    """(service, alert name) of every golden runbook, so searches find real matches."""
    return sorted((p.parent.name, p.stem) for p in RUNBOOKS.glob("*/*.md"))


def am_body(key: str, name: str, service: str, number: int, fingerprints: list[str],
            status: str) -> bytes:
    ends = FIRING_ENDS if status == "firing" else "2026-11-28T04:00:00Z"
    labels = {"alertname": name, "service": service, "severity": "critical",
              "cluster": f"chaos-{number}"}
    alerts = [
        {
            "status": status,
            "labels": {**labels, "instance": f"{service}-{fp}"},
            "annotations": {"summary": f"{name} on {service} (group {number}, {fp})"},
            "startsAt": "2026-11-28T03:00:00Z",
            "endsAt": ends,
            "generatorURL": f"http://prometheus.chaos/graph?g={number}",
            "fingerprint": fp,
        }
        for fp in fingerprints
    ]
    body = {
        "version": "4", "groupKey": key, "truncatedAlerts": 0, "status": status,
        "receiver": "runbook-enricher",
        "groupLabels": {"alertname": name, "cluster": f"chaos-{number}"},
        "commonLabels": labels, "commonAnnotations": {},
        "externalURL": "http://alertmanager.chaos:9093", "alerts": alerts,
    }
    return json.dumps(body).encode()


def build_workload(
    groups: int, total: int, resolve_share: float, rng: random.Random
) -> tuple[list[Group], list[Send], dict[int, int]]:
    """Groups, the firing sends in burst order, and how often each resolving group's resolve
    is sent.

    Budget of `total` requests: one firing per group and one resolve per resolving group,
    then an HA copy of each of those, then more firing re-sends of random groups."""
    alerts = runbook_alerts()
    made: list[Group] = []
    for number in range(groups):
        service, name = alerts[number % len(alerts)]
        key = f'{{}}/{{severity="critical"}}:{{alertname="{name}", cluster="chaos-{number}"}}'
        fps = [f"{number:04x}{i:02x}" for i in range(rng.choice((1, 1, 1, 2, 3)))]
        made.append(Group(key, am_body(key, name, service, number, fps, "firing"),
                          am_body(key, name, service, number, fps, "resolved")))
    resolving = set(rng.sample(range(groups), round(groups * resolve_share)))
    if total < groups + len(resolving):
        raise SystemExit(f"--alerts {total} is fewer than one request per group and resolve")
    sends = [Send(g, "firing") for g in range(groups)]
    budget = total - groups - len(resolving)
    copies = min(budget, groups)
    sends += [Send(g, "firing") for g in range(copies)]
    budget -= copies
    resolve_copies = min(budget, len(resolving))
    budget -= resolve_copies
    sends += [Send(rng.randrange(groups), "firing") for _ in range(budget)]
    rng.shuffle(sends)
    copies_of = dict.fromkeys(resolving, 1)
    for g in rng.sample(sorted(resolving), resolve_copies):
        copies_of[g] = 2
    return made, sends, copies_of


class Burst:
    """The shared send list and what the service answered; client threads drain it.

    A group's resolve is only scheduled once one of its firing sends was answered 202,
    and then at a random place among the sends still to go."""

    def __init__(self, groups: list[Group], sends: list[Send], resolve_copies: dict[int, int],
                 rng: random.Random) -> None:
        self.groups = groups
        self._pending = list(sends)
        self._resolving = set(resolve_copies)
        self._resolve_copies = resolve_copies
        self._rng = rng
        self._lock = threading.Lock()
        self._in_flight = 0
        self.total = len(sends) + sum(resolve_copies.values())
        self.answered = 0
        self.accepted: dict[str, set[int]] = {"firing": set(), "resolved": set()}
        self.outcomes: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.gave_up = 0

    def take(self) -> Send | None:
        """The next send; None when nothing is left and nothing can add more."""
        while True:
            with self._lock:
                if self._pending:
                    self._in_flight += 1
                    return self._pending.pop(0)
                if not self._in_flight:
                    return None
            time.sleep(0.01)

    def done(self, send: Send, status: int, outcome: str) -> None:
        with self._lock:
            self._in_flight -= 1
            self.answered += 1
            self.outcomes[f"{send.kind}:{outcome or status}"] += 1
            if status != 202:
                if not status:
                    self.gave_up += 1
                return
            self.accepted[send.kind].add(send.group)
            if send.kind == "firing" and send.group in self._resolving:
                self._resolving.discard(send.group)
                for _ in range(self._resolve_copies.get(send.group, 0)):
                    at = self._rng.randint(0, len(self._pending))
                    self._pending.insert(at, Send(send.group, "resolved"))

    def failed(self, reason: str) -> None:
        with self._lock:
            self.failures[reason] += 1


def post_until_answered(
    client: httpx.Client, url: str, body: bytes, headers: Mapping[str, str],
    burst: Burst, give_up_s: float = 120,
) -> tuple[int, str]:
    """Like Alertmanager: retry connection failures and 5xx with backoff; a 2xx or 4xx is
    final. Returns (status, outcome), or (0, "gave_up")."""
    delay = 0.1
    deadline = time.monotonic() + give_up_s
    while True:
        try:
            reply = client.post(url, content=body, headers=headers)
        except httpx.TransportError as exc:
            reason = type(exc).__name__
        else:
            if reply.status_code < 500:
                outcome = ""
                with contextlib.suppress(ValueError):
                    outcome = str(reply.json().get("status", ""))
                return reply.status_code, outcome
            reason = f"http_{reply.status_code}"
        burst.failed(reason)
        if time.monotonic() > deadline:
            return 0, "gave_up"
        time.sleep(delay)
        delay = min(2.0, delay * 2)


def client_thread(enricher: Enricher, burst: Burst) -> None:
    headers = {"Authorization": f"Bearer {AM_TOKEN}", "Content-Type": "application/json"}
    with httpx.Client(timeout=10) as client:
        while (send := burst.take()) is not None:
            group = burst.groups[send.group]
            body = group.firing if send.kind == "firing" else group.resolved
            url = f"{enricher.url}/webhook/alertmanager"
            status, outcome = post_until_answered(client, url, body, headers, burst)
            burst.done(send, status, outcome)


def unfinished_jobs(redis_url: str) -> int:
    """Jobs in the stream plus jobs parked in the delayed set, read in one transaction.

    Not `rbe_queue_depth`: /metrics reads the two keys one after the other, so a job that
    moves from the delayed set into the stream between the reads is missed (seen as 0)."""
    with redis.Redis.from_url(redis_url) as client:
        pipe = client.pipeline(transaction=True)
        pipe.xlen("rbe:jobs")
        pipe.zcard("rbe:delayed")
        stream, delayed = pipe.execute()
    return int(stream) + int(delayed)


def drain(redis_url: str, slack_url: str, cap_s: float, quiet_s: float) -> float:
    """Wait until no job is left and Slack got no call for `quiet_s`; returns the monotonic
    time of the last Slack call seen."""
    deadline = time.monotonic() + cap_s
    last_count, last_call, last_busy = -1, time.monotonic(), time.monotonic()
    while time.monotonic() < deadline:
        count = len(slack_calls(slack_url))
        now = time.monotonic()
        if count != last_count:
            last_count, last_call = count, now
        if unfinished_jobs(redis_url):
            last_busy = now
        if now - max(last_call, last_busy) >= quiet_s:
            return last_call
        time.sleep(2)
    raise TimeoutError(f"the queue did not drain within {cap_s:.0f}s")


# --- memory under hostile input ------------------------------------------------------------


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(7 if depth < 5 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice((True, False, 0, -1, 2**63, 1e308, -0.0))
    if kind == 2:
        return "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(rng.randrange(40)))
    if kind == 3:
        return "x" * rng.randrange(10_000, 200_000)
    if kind == 4:
        return rng.randrange(-(10**12), 10**12)
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {str(_random_json(rng, 5))[:30]: _random_json(rng, depth + 1)
            for _ in range(rng.randrange(5))}


def hostile_body(rng: random.Random, valid_am: bytes) -> tuple[str, bytes]:
    """(endpoint, body) that must be refused with a 4xx or acknowledged without queueing."""
    kind = rng.randrange(6)
    if kind == 0:
        return "alertmanager", rng.randbytes(rng.randrange(2000))
    if kind == 1:
        depth = rng.randrange(100, 50_000)
        return rng.choice(("alertmanager", "pagerduty")), b"[" * depth + b"]" * depth
    if kind == 2:
        return rng.choice(("alertmanager", "pagerduty")), json.dumps(_random_json(rng)).encode()
    if kind == 3:  # near-valid Alertmanager body; version 3 keeps it refused
        body = json.loads(valid_am)
        body["version"] = "3"
        target = rng.choice((body, body["alerts"][0]))
        target[rng.choice(sorted(target))] = _random_json(rng)
        return "alertmanager", json.dumps(body).encode()
    if kind == 4:  # a PagerDuty event of a type the service ignores, with hostile data
        event = {"id": "E1", "event_type": "service.updated", "resource_type": "service",
                 "occurred_at": "2026-11-28T03:14:00Z", "data": _random_json(rng)}
        return "pagerduty", json.dumps({"event": event}).encode()
    return "alertmanager", valid_am  # a replay: deduplicated


def memory_rounds(
    enricher: Enricher, valid_am: bytes, rounds: int, per_round: int, rng: random.Random
) -> tuple[list[int], Counter[int]]:
    """RSS (kB) of the enricher after each round of hostile requests, and the status codes."""
    statuses: Counter[int] = Counter()
    rss: list[int] = []
    with httpx.Client(timeout=30) as client:
        for _ in range(rounds):
            for _ in range(per_round):
                endpoint, body = hostile_body(rng, valid_am)
                headers = {"Authorization": f"Bearer {AM_TOKEN}"}
                if endpoint == "pagerduty":
                    digest = hmac.new(PD_SECRET.encode(), body, hashlib.sha256).hexdigest()
                    headers = {"X-PagerDuty-Signature": f"v1={digest}"}
                reply = client.post(f"{enricher.url}/webhook/{endpoint}", content=body,
                                    headers=headers)
                statuses[reply.status_code] += 1
            rss.append(enricher.rss_kb())
    return rss, statuses


# --- the run -------------------------------------------------------------------------------


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


def parse_args(argv: list[str] | None) -> Args:
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
    p.add_argument("--post-lease-s", type=float, default=10.0, help="POST_LEASE_S")
    p.add_argument("--cap-s", type=float, default=900, help="give up draining after this")
    p.add_argument("--quiet-s", type=float, default=6, help="Slack silence that means done")
    p.add_argument("--memory-rounds", type=int, default=6)
    p.add_argument("--memory-per-round", type=int, default=400)
    p.add_argument("--keep", action="store_true", help="keep the work folder (logs, AOF)")
    ns = p.parse_args(argv)
    seed = ns.seed if ns.seed is not None else random.randrange(1_000_000)
    return Args(ns.alerts, ns.groups, ns.resolve_share, ns.clients, ns.kills, ns.rate_429,
                ns.rate_500, seed, ns.claim_idle_s, ns.post_lease_s, ns.cap_s, ns.quiet_s,
                ns.memory_rounds, ns.memory_per_round, ns.keep)


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


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args: Args, work: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    # A Redis that loses nothing it acknowledged: AOF with fsync on every write.
    redis_server = RedisServer(work, durable=True)
    redis_server.start()
    redis_url = redis_server.url
    slack_proc: subprocess.Popen[bytes] | None = None
    enricher: Enricher | None = None
    try:
        slack_proc, slack_url = start_fake_slack(args.rate_429, args.rate_500, args.seed)
        say("indexing golden/runbooks")
        with (work / "ingest.log").open("w") as log:
            index_runbooks(work / "qdrant", redis_url, log)
        env = enricher_env(qdrant_path=work / "qdrant", redis_url=redis_url, slack_url=slack_url,
                           worker_id="chaos-1", JOB_CLAIM_IDLE_S=str(args.claim_idle_s),
                           POST_LEASE_S=str(args.post_lease_s))
        enricher = Enricher(env, work / "enricher.log")
        enricher.start()
        say(f"enricher up on {enricher.url}; sending {args.alerts} webhooks")
        return burst_and_count(args, rng, enricher, slack_url, redis_url)
    finally:
        if enricher is not None:
            enricher.stop()
        if slack_proc is not None:
            slack_proc.terminate()
            slack_proc.wait()
        redis_server.stop()


def burst_and_count(
    args: Args, rng: random.Random, enricher: Enricher, slack_url: str, redis_url: str
) -> dict[str, Any]:
    groups, sends, resolve_copies = build_workload(args.groups, args.alerts,
                                                   args.resolve_share, rng)
    burst = Burst(groups, sends, resolve_copies, rng)
    started = time.monotonic()
    threads = [threading.Thread(target=client_thread, args=(enricher, burst), daemon=True)
               for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    kill_times: list[float] = []

    def reached(point: int) -> Callable[[], bool]:
        return lambda: burst.answered >= point or not any(t.is_alive() for t in threads)

    for k in range(args.kills):
        point = burst.total * (k + 1) // (args.kills + 2)
        wait_until(reached(point), 600, "the burst to reach the kill point", 0.005)
        enricher.kill()
        kill_times.append(time.monotonic())
        say(f"kill -9 after {burst.answered} answered requests; restarting")
        enricher.start()
        say("enricher restarted")
    for thread in threads:
        thread.join()
    burst_end = time.monotonic()
    say(f"burst done in {burst_end - started:.1f}s; draining")
    last_call = drain(redis_url, slack_url, args.cap_s, args.quiet_s)
    report = tally(args, burst, enricher, slack_url)
    report["unfinished_jobs"] = unfinished_jobs(redis_url)
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


def tally(args: Args, burst: Burst, enricher: Enricher, slack_url: str) -> dict[str, Any]:
    calls = slack_calls(slack_url)
    if args.keep:
        (enricher.log_path.parent / "slack_calls.json").write_text(json.dumps(calls))
    keys = [g.key for g in burst.groups]
    views = slack_view(keys, calls, slack_history(slack_url))
    fired = burst.accepted["firing"]
    resolved = burst.accepted["resolved"]
    top = {g: views[keys[g]].firing_posts + views[keys[g]].resolved_posts for g in fired}
    lost = {g for g in fired if not views[keys[g]].firing_posts}
    outcomes = group_outcomes(enricher.log_path)
    superseded = {g for g in lost if outcomes.get(keys[g], Counter())["superseded"]}
    in_thread = {g for g in resolved if views[keys[g]].updates and views[keys[g]].replies}
    alone = {g for g in resolved - in_thread if views[keys[g]].resolved_posts}
    events = log_events(enricher.log_path)
    statuses = Counter(int(c["status"]) for c in calls)
    return {
        "date": time.strftime("%Y-%m-%d"),
        "seed": args.seed,
        "requests": burst.total,
        "groups": len(burst.groups),
        "kills": args.kills,
        "client_retries": sum(burst.failures.values()),
        "client_failures": dict(burst.failures),
        "answers": dict(sorted(burst.outcomes.items())),
        "never_accepted": burst.gave_up,
        "accepted_pages": len(fired),
        "delivered": len(fired - lost),
        "lost": len(lost),
        "lost_superseded_by_resolve": len(superseded),
        "lost_never_queued": len(lost - superseded),
        "lost_nothing_in_slack": sum(1 for g in lost if not top[g]),
        "duplicates": sum(1 for g in fired if top[g] > 1),
        "extra_posts": sum(max(0, n - 1) for n in top.values()),
        "resolves_accepted": len(resolved),
        "resolves_delivered": len(in_thread),
        "resolves_posted_alone": len(alone),
        "resolves_missing": len(resolved - in_thread - alone),
        "duplicate_thread_replies": sum(1 for g in resolved if views[keys[g]].replies > 1),
        "dead_letters": int(enricher.metric("rbe_dead_letter_depth")),
        "slack_calls": len(calls),
        "slack_429": statuses.get(429, 0),
        "slack_500": statuses.get(500, 0),
        "log": {
            k: v for k, v in sorted(events.items())
            if k.startswith(("outcome.", "job.retry_later.", "job.dead_letter", "slack.duplicate",
                             "job.crashed", "redis.unavailable", "service.jobs_lost"))
        },
    }


def failed(report: Mapping[str, Any]) -> bool:
    """A firing page accepted but never posted (even if its resolve showed up instead), a
    group posted twice, a resolve that never showed, or a request never accepted."""
    return bool(
        report["lost"] or report["duplicates"] or report["resolves_missing"]
        or report["never_accepted"] or report["dead_letters"]
        or report["duplicate_thread_replies"] or report.get("unfinished_jobs")
    )


def print_table(report: Mapping[str, Any]) -> None:
    rows = [
        ("requests sent (incl. HA copies, re-sends, resolves)", report["requests"]),
        ("client retries (conn. errors / 5xx)", report["client_retries"]),
        ("requests never accepted", report["never_accepted"]),
        ("kill -9", report["kills"]),
        ("accepted pages (groups)", report["accepted_pages"]),
        ("delivered (firing post)", report["delivered"]),
        ("lost (accepted firing page never posted)", report["lost"]),
        ("  dropped as superseded by its resolve", report["lost_superseded_by_resolve"]),
        ("  never reached the queue", report["lost_never_queued"]),
        ("  nothing at all in Slack for the group", report["lost_nothing_in_slack"]),
        ("duplicates (groups with >1 top-level post)", report["duplicates"]),
        ("resolves accepted", report["resolves_accepted"]),
        ("resolves delivered (update + thread reply)", report["resolves_delivered"]),
        ("resolves posted alone (no firing post)", report["resolves_posted_alone"]),
        ("resolves missing", report["resolves_missing"]),
        ("duplicate thread replies", report["duplicate_thread_replies"]),
        ("dead letters", report["dead_letters"]),
        ("Slack calls / 429 / 500", f"{report['slack_calls']} / {report['slack_429']} / "
                                    f"{report['slack_500']}"),
        ("burst (s)", report["burst_s"]),
        ("drain after burst (s)", report["drain_s"]),
    ]
    if "memory" in report:
        memory = report["memory"]
        rows.append(("hostile requests / statuses", f"{memory['requests']} / {memory['statuses']}"))
        rows.append(("RSS per round (MB)",
                     " ".join(f"{kb / 1024:.0f}" for kb in memory["rss_kb_per_round"])))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with workdir(args.keep) as work:
        report = run(args, work)
    print_table(report)
    report["ok"] = not failed(report)
    print(json.dumps(report, sort_keys=True))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
