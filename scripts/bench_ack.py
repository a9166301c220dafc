"""The webhook's ack, measured apart (issue 23): `python -m scripts.bench_ack [--out F]`.

The real service (`python -m enricher`, its own process, as deployed) on golden's runbooks,
with its own Redis and the fake Slack, answers a lean client: HTTP/1.1 over one kept-alive
socket, written and read by hand, so that the client's own Python (about 1 ms a request
for httpx) stays out of the number. It measures:

- the floor: `GET /healthz`, what the HTTP stack alone costs;
- the ack alone: POST to 202 for new alert groups sent one at a time, PACE_S apart, so
  the page each one starts is done before the next (the worker's start still overlaps its
  own ack, as in production);
- a burst: `--burst` new groups from `--connections` sockets at once (client threads in
  this process, the service in its own), while the workers page them;
- a storm (`--storm N`, issue 23's 5,000 groups): N new groups the same way, while the
  fake Slack rate-limits as Slack does (`--storm-429`: that share of calls answered 429
  with Retry-After 1 s, and every call inside a Retry-After refused too). It waits until
  every group is paged and counts, from what Slack received: groups posted once, lost,
  posted twice, the 429s, and the calls sent while a Retry-After still ran ("early",
  which Slack refuses and counts against the app; at most the ones already on their way).

It reports; it never asserts a speed. The end to end and the index sizes are
`scripts.bench_enrich`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from enricher.settings import Settings
from scripts.benchlib import dist, emit, machine, note, print_table
from scripts.chaos.harness import (
    AM_TOKEN,
    Enricher,
    enricher_env,
    index_runbooks,
    start_fake_slack,
    stop_all,
)
from scripts.chaos.observed import marker
from scripts.chaos.workload import am_body
from scripts.index_copy import copy_index
from scripts.local_redis import running_redis

#: Between two alerts of the sequential run: longer than a page on golden takes.
PACE_S = 0.15
WARMUP = 10


class LeanClient:
    """One kept-alive HTTP/1.1 connection; each call returns (status, seconds)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def post(self, path: str, body: bytes) -> tuple[int, float]:
        head = (
            f"POST {path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer {AM_TOKEN}\r\ncontent-length: {len(body)}\r\n\r\n"
        )
        return self._exchange(head.encode() + body)

    def get(self, path: str) -> tuple[int, float]:
        return self._exchange(f"GET {path} HTTP/1.1\r\nhost: bench\r\n\r\n".encode())

    def _exchange(self, request: bytes) -> tuple[int, float]:
        started = time.perf_counter()
        self.sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            data += self._recv()
        head, _, body = data.partition(b"\r\n\r\n")
        fields = dict(
            line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line
        )
        length = int(fields.get(b"content-length", b"0"))
        while len(body) < length:
            body += self._recv()
        return int(head.split(b" ", 2)[1]), time.perf_counter() - started

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the service closed the connection")
        return chunk

    def close(self) -> None:
        self.sock.close()


def _body(number: int) -> bytes:
    key = _group_key(number)
    return am_body(key, "PostgresReplicationLag", "payments", number, [f"{number:06x}"],
                   "firing")


def floor(port: int, count: int) -> list[float]:
    client = LeanClient(port)
    try:
        times = []
        for _ in range(count):
            status, seconds = client.get("/healthz")
            if status != 200:
                raise SystemExit(f"GET /healthz answered {status}")
            times.append(seconds)
            time.sleep(PACE_S / 3)
        return times
    finally:
        client.close()


def sequential(port: int, count: int, failures: list[str]) -> list[float]:
    client = LeanClient(port)
    try:
        acks = []
        for n in range(WARMUP + count):
            status, seconds = client.post("/webhook/alertmanager", _body(n))
            if status != 202:
                failures.append(f"alert {n}: HTTP {status}")
            elif n >= WARMUP:
                acks.append(seconds)
            time.sleep(PACE_S)
        return acks
    finally:
        client.close()


def burst(
    port: int, count: int, connections: int, failures: list[str], first: int = 100_000
) -> dict[str, Any]:
    acks: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(connections + 1)

    def send(numbers: range) -> None:
        client = LeanClient(port)
        gate.wait()
        try:
            for n in numbers:
                status, seconds = client.post("/webhook/alertmanager", _body(first + n))
                with lock:
                    acks.append(seconds)
                    if status != 202:
                        failures.append(f"burst alert {n}: HTTP {status}")
        finally:
            client.close()

    threads = [threading.Thread(target=send, args=(range(k, count, connections),))
               for k in range(connections)]
    for thread in threads:
        thread.start()
    gate.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {"posts": count, "connections": connections, "wall_s": round(wall, 2),
            "posts_per_s": round(count / wall, 1), "ack_ms": dist(acks)}


def storm(
    port: int, slack_url: str, args: argparse.Namespace, failures: list[str]
) -> dict[str, Any]:
    """`args.storm` new groups while Slack rate-limits, then what Slack received of them."""
    first = 1_000_000
    wanted = {marker(_group_key(first + n), "firing") for n in range(args.storm)}
    fake = slack_url.removesuffix("/api/") + "/_fake/"
    seen = _quiet(fake)
    httpx.post(fake + "fault_rates", timeout=10, json={
        "rate_429": args.storm_429, "retry_after": 1, "windows": True, "seed": 23})
    sent = burst(port, args.storm, args.connections, failures, first=first)
    calls: list[dict[str, Any]] = []
    found: set[str] = set()
    started = time.perf_counter()
    while found != wanted and time.perf_counter() - started < args.storm_cap_s:
        time.sleep(1.0)
        new = _calls(fake, seen + len(calls))
        calls += new
        found.update(m for m in map(_top_marker, new) if m in wanted)
    drained = time.perf_counter() - started
    time.sleep(3.0)  # a late duplicate would land now
    calls += _calls(fake, seen + len(calls))
    posted = Counter(m for m in map(_top_marker, calls) if m in wanted)
    httpx.post(fake + "fault_rates", timeout=10, json={})
    posts = [c for c in calls if c["method"] == "chat.postMessage"]
    return {
        "groups": args.storm, "rate_429": args.storm_429, "ack_ms": sent["ack_ms"],
        "accepted_per_s": sent["posts_per_s"],
        "posted_once": sum(1 for n in posted.values() if n == 1),
        "lost": len(wanted) - len(posted),
        "posted_twice_or_more": sum(1 for n in posted.values() if n > 1),
        "drained_s": round(sent["wall_s"] + drained, 1),
        "slack_calls": len(posts),
        "slack_429": sum(1 for c in posts if c["status"] == 429),
        "early": sum(1 for c in posts if c["early"]),
    }


def _quiet(fake: str) -> int:
    """Wait until the pages before the storm are done (Slack quiet for 2 s); their count."""
    seen, quiet_since = 0, time.perf_counter()
    while time.perf_counter() - quiet_since < 2.0:
        time.sleep(0.5)
        if new := len(_calls(fake, seen)):
            seen, quiet_since = seen + new, time.perf_counter()
    return seen


def _calls(fake: str, since: int) -> list[dict[str, Any]]:
    """The calls the fake Slack at `fake` received after its first `since`."""
    return list(httpx.get(fake + "calls", params={"since": since}, timeout=60).json()["calls"])


def _group_key(number: int) -> str:
    return f'{{}}:{{alertname="AckBench", n="{number}"}}'


def _top_marker(call: dict[str, Any]) -> str | None:
    """The page marker of a top-level post Slack accepted (None for anything else)."""
    body = call["body"]
    if call["method"] != "chat.postMessage" or not call["ok"] or body.get("thread_ts"):
        return None
    meta = body.get("metadata") or {}
    if isinstance(meta, str):
        meta = json.loads(meta)
    return (meta.get("event_payload") or {}).get("key")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_ack", description=__doc__)
    parser.add_argument("--alerts", type=int, default=300, help="sequential alerts")
    parser.add_argument("--burst", type=int, default=500, help="alerts in the burst")
    parser.add_argument("--connections", type=int, default=8, help="burst connections")
    parser.add_argument("--storm", type=int, default=0, help="groups in the storm (0: none)")
    parser.add_argument("--storm-429", type=float, default=0.02,
                        help="share of Slack calls answered 429 during the storm")
    parser.add_argument("--storm-cap-s", type=float, default=1800,
                        help="give up waiting for the storm's pages after this")
    parser.add_argument("--index", type=Path,
                        help="serve a copy of this QDRANT_PATH folder (for example a cached "
                             "benchmark index, .cache/bench/enrich-*/qdrant) instead of golden")
    parser.add_argument("--collection", default="bench",
                        help="QDRANT_COLLECTION of --index")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-ack-") as tmp, \
            running_redis(Path(tmp)) as redis_server:
        work = Path(tmp)
        collection = Settings().qdrant_collection
        if args.index:
            note(f"copying {args.index} ...")
            copy_index(args.index, work / "qdrant")
            collection = args.collection
        else:
            note("indexing golden/runbooks ...")
            with (work / "ingest.log").open("w") as log:
                index_runbooks(work / "qdrant", redis_server.url, log)
        slack, slack_url = start_fake_slack()
        service = Enricher(
            enricher_env(qdrant_path=work / "qdrant", redis_url=redis_server.url,
                         slack_url=slack_url, worker_id="bench-ack",
                         QDRANT_COLLECTION=collection),
            work / "enricher.log",
        )
        try:
            service.start()
            idle_rss_mb = round(service.rss_kb() / 1024, 1)
            note("the floor, then the ack alone ...")
            healthz = floor(service.port, 100)
            acks = sequential(service.port, args.alerts, failures)
            note(f"a burst of {args.burst} from {args.connections} connections ...")
            burst_result = burst(service.port, args.burst, args.connections, failures)
            serving_rss_mb = round(service.rss_kb() / 1024, 1)
            storm_result = None
            if args.storm:
                note(f"a storm of {args.storm} groups, Slack answering {args.storm_429:.0%} "
                     "429 and refusing calls inside a Retry-After ...")
                storm_result = storm(service.port, slack_url, args, failures)
        finally:
            stop_all(service, slack, redis_server)
    healthz_ms, ack_ms = dist(healthz), dist(acks)
    result: dict[str, Any] = {
        "benchmark": "ack",
        "index": str(args.index) if args.index else "golden/runbooks",
        "machine": machine(),
        "load_avg_start": [round(x, 2) for x in load_start],
        "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "healthz_ms": healthz_ms,
        "ack_ms": ack_ms,
        "burst": burst_result,
        "service_rss_mb": {"idle": idle_rss_mb, "after_burst": serving_rss_mb},
        "storm": storm_result,
    }
    print_table("The webhook's ack (real service, lean client)", [
        ("GET /healthz p50 / p99", f"{healthz_ms['p50']} / {healthz_ms['p99']} ms"),
        ("ack alone p50 / p99", f"{ack_ms['p50']} / {ack_ms['p99']} ms"),
        (f"burst of {args.burst}, ack p50 / p99",
         f"{burst_result['ack_ms']['p50']} / {burst_result['ack_ms']['p99']} ms "
         f"({burst_result['posts_per_s']} posts/s)"),
        ("service RSS idle / after", f"{idle_rss_mb} / {serving_rss_mb} MiB"),
        *(_storm_rows(storm_result) if storm_result else []),
    ])
    if storm_result and (storm_result["lost"] or storm_result["posted_twice_or_more"]):
        failures.append(f"storm: {storm_result['lost']} group(s) lost, "
                        f"{storm_result['posted_twice_or_more']} posted more than once")
    return emit(result, args.out, failures)


def _storm_rows(result: dict[str, Any]) -> list[tuple[str, object]]:
    return [
        (f"storm of {result['groups']}, ack p50 / p99",
         f"{result['ack_ms']['p50']} / {result['ack_ms']['p99']} ms "
         f"({result['accepted_per_s']} accepted/s)"),
        ("storm: posted once / lost / twice",
         f"{result['posted_once']} / {result['lost']} / {result['posted_twice_or_more']}"),
        ("storm: drained in", f"{result['drained_s']} s"),
        ("storm: Slack calls / 429 / early",
         f"{result['slack_calls']} / {result['slack_429']} / {result['early']}"),
    ]


if __name__ == "__main__":
    sys.exit(main())
