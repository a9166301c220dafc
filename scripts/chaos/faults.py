"""The faults a chaos run injects into the enricher: kill -9 mid-burst, and rounds of hostile
requests with the enricher's RSS after each round."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx

from scripts.chaos.harness import AM_TOKEN, PD_SECRET, Enricher, say, wait_until
from scripts.chaos.workload import Burst


def kill_mid_burst(
    enricher: Enricher, burst: Burst, threads: list[threading.Thread], kills: int
) -> list[float]:
    """SIGKILL the enricher `kills` times at evenly spaced points of the burst, restarting it
    with the same settings each time; returns the monotonic time of each kill."""
    kill_times: list[float] = []

    def reached(point: int) -> Callable[[], bool]:
        return lambda: burst.answered >= point or not any(t.is_alive() for t in threads)

    for k in range(kills):
        point = burst.total * (k + 1) // (kills + 2)
        wait_until(reached(point), 600, "the burst to reach the kill point", 0.005)
        enricher.kill()
        kill_times.append(time.monotonic())
        say(f"kill -9 after {burst.answered} answered requests; restarting")
        enricher.start()
        say("enricher restarted")
    return kill_times


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
