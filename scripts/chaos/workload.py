"""The page burst: alert groups about the golden runbooks, the send list with HA copies,
re-sends and resolves, and the client threads that send it the way Alertmanager does."""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from scripts.chaos.harness import AM_TOKEN, RUNBOOKS, Enricher

FIRING_ENDS = "0001-01-01T00:00:00Z"


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

    @property
    def finished(self) -> bool:
        """Nothing left to send and nothing in flight."""
        with self._lock:
            return not self._pending and not self._in_flight

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
