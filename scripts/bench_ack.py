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
  this process, the service in its own), while the workers page them.

It reports; it never asserts a speed. The end to end and the index sizes are
`scripts.bench_enrich`'s.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scripts.benchlib import dist, emit, machine, note, print_table
from scripts.chaos.harness import (
    AM_TOKEN,
    Enricher,
    enricher_env,
    index_runbooks,
    start_fake_slack,
    stop_all,
)
from scripts.chaos.workload import am_body
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
    key = f'{{}}:{{alertname="AckBench", n="{number}"}}'
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


def burst(port: int, count: int, connections: int, failures: list[str]) -> dict[str, Any]:
    acks: list[float] = []
    lock = threading.Lock()
    gate = threading.Barrier(connections + 1)

    def send(numbers: range) -> None:
        client = LeanClient(port)
        gate.wait()
        try:
            for n in numbers:
                status, seconds = client.post("/webhook/alertmanager", _body(100_000 + n))
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_ack", description=__doc__)
    parser.add_argument("--alerts", type=int, default=300, help="sequential alerts")
    parser.add_argument("--burst", type=int, default=500, help="alerts in the burst")
    parser.add_argument("--connections", type=int, default=8, help="burst connections")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-ack-") as tmp, \
            running_redis(Path(tmp)) as redis_server:
        work = Path(tmp)
        note("indexing golden/runbooks ...")
        with (work / "ingest.log").open("w") as log:
            index_runbooks(work / "qdrant", redis_server.url, log)
        slack, slack_url = start_fake_slack()
        service = Enricher(
            enricher_env(qdrant_path=work / "qdrant", redis_url=redis_server.url,
                         slack_url=slack_url, worker_id="bench-ack"),
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
        finally:
            stop_all(service, slack, redis_server)
    healthz_ms, ack_ms = dist(healthz), dist(acks)
    result: dict[str, Any] = {
        "benchmark": "ack",
        "machine": machine(),
        "load_avg_start": [round(x, 2) for x in load_start],
        "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "healthz_ms": healthz_ms,
        "ack_ms": ack_ms,
        "burst": burst_result,
        "service_rss_mb": {"idle": idle_rss_mb, "after_burst": serving_rss_mb},
    }
    print_table("The webhook's ack (real service, lean client)", [
        ("GET /healthz p50 / p99", f"{healthz_ms['p50']} / {healthz_ms['p99']} ms"),
        ("ack alone p50 / p99", f"{ack_ms['p50']} / {ack_ms['p99']} ms"),
        (f"burst of {args.burst}, ack p50 / p99",
         f"{burst_result['ack_ms']['p50']} / {burst_result['ack_ms']['p99']} ms "
         f"({burst_result['posts_per_s']} posts/s)"),
        ("service RSS idle / after", f"{idle_rss_mb} / {serving_rss_mb} MiB"),
    ])
    return emit(result, args.out, failures)


if __name__ == "__main__":
    sys.exit(main())
