"""What REDIS_MIN_REPLICAS_ACK costs the webhook's ack (issue 22), on loopback:
`python -m scripts.bench_replica_ack [--rounds N] [--http N] [--out F]`.

A Sentinel deployment (scripts.local_sentinel: a primary, two replicas, three Sentinels, AOF
with fsync on every write everywhere) and the service's own client through the Sentinels.
Each round enqueues one new job the way intake does (`JobQueue.enqueue_once`: dedup mark,
owed post, XADD) once without and once with a replica ack, in alternating order, so load
on the shared machine hits both alike. The rest of the ack (auth, parse, answer) runs the
same code either way, so the difference here is the difference in the ack.

`--http N` also measures whole webhooks: two `python -m enricher` processes on the same
deployment (a database each), one without and one with the ack (1 worker each, posting to
the fake Slack), each sent N new alert groups by one client, alternating, one request at a
time. It
reports; it never asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from enricher import redis_connect
from enricher.pipeline.ledger import Ledger
from enricher.pipeline.queue import JobQueue, new_job
from enricher.pipeline.replication import ReplicaAck
from enricher.settings import Settings
from enricher.sources import Parsed, parse
from scripts.benchlib import dist, emit, machine, note, print_table
from scripts.chaos.failover import SENTINEL_REDIS_URL, failover_env
from scripts.chaos.harness import AM_TOKEN, Enricher, index_runbooks, start_fake_slack
from scripts.chaos.workload import am_body
from scripts.index_copy import copy_index
from scripts.local_sentinel import MASTER_NAME, SentinelCluster

TIMEOUT_MS = 500


def _parsed(number: int) -> Parsed:
    key = f'{{}}:{{alertname="BenchAck", n="{number}"}}'
    body = am_body(key, "BenchAck", "bench", number, [f"{number:06x}"], "firing")
    parsed = parse("alertmanager", body)
    assert isinstance(parsed, Parsed)
    return parsed


async def measure(cluster: SentinelCluster, rounds: int) -> dict[str, list[float]]:
    settings = Settings(redis_url=SENTINEL_REDIS_URL,
                        redis_sentinels=tuple(cluster.sentinels.split(",")),
                        redis_sentinel_master=MASTER_NAME)
    client = redis_connect.async_client(settings)
    ledger = Ledger(client, dedup_ttl_s=3600)
    queues = {
        "0": JobQueue(client, consumer="bench", claim_idle_ms=60_000),
        "1": JobQueue(client, consumer="bench", claim_idle_ms=60_000,
                      replica_ack=ReplicaAck(1, TIMEOUT_MS)),
    }
    times: dict[str, list[float]] = {name: [] for name in queues}
    try:
        for number in range(rounds):
            order = ("0", "1") if number % 2 else ("1", "0")
            for name in order:
                job = new_job(_parsed(number * 2 + int(name)))
                started = time.perf_counter()
                await queues[name].enqueue_once(
                    job, ledger.seen_key(job.dedup_key), 60_000,
                    owed_post=ledger.owed_post(job.group_key),
                )
                times[name].append(time.perf_counter() - started)
    finally:
        await redis_connect.aclose(client)
    return times


def measure_http(cluster: SentinelCluster, work: Path, rounds: int) -> dict[str, list[float]]:
    slack, slack_url = start_fake_slack()
    enrichers: dict[str, Enricher] = {}
    try:
        with (work / "ingest.log").open("w") as log:
            index_runbooks(work / "qdrant", cluster.primary_url(), log)
        for ack in ("0", "1"):
            qdrant = work / f"ack{ack}" / "qdrant"
            copy_index(work / "qdrant", qdrant)
            env = failover_env(cluster, qdrant_path=qdrant, slack_url=slack_url,
                               worker_id=f"bench-ack{ack}", min_replicas_ack=int(ack),
                               WORKERS="1")
            # A database each: each enricher works only the jobs of its own webhooks.
            env["REDIS_URL"] = f"redis://127.0.0.1/{1 + int(ack)}"
            enrichers[ack] = Enricher(env, work / f"ack{ack}.log")
            enrichers[ack].start()
        times: dict[str, list[float]] = {ack: [] for ack in enrichers}
        headers = {"Authorization": f"Bearer {AM_TOKEN}"}
        with httpx.Client(timeout=10) as http:
            for number in range(rounds):
                for ack in ("0", "1") if number % 2 else ("1", "0"):
                    n = number * 2 + int(ack)
                    key = f'{{}}:{{alertname="BenchAck", n="{n}"}}'
                    body = am_body(key, "BenchAck", "bench", n, [f"{n:06x}"], "firing")
                    started = time.perf_counter()
                    reply = http.post(f"{enrichers[ack].url}/webhook/alertmanager",
                                      content=body, headers=headers)
                    times[ack].append(time.perf_counter() - started)
                    assert reply.status_code == 202, reply.text
        return times
    finally:
        for enricher in enrichers.values():
            enricher.stop()
        slack.terminate()
        slack.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.bench_replica_ack",
                                description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--http", type=int, default=0, help="also this many webhooks per setting")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    http: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="rbe-bench-ack-") as work:
        cluster = SentinelCluster(Path(work) / "redis", replicas=2)
        cluster.start()
        try:
            note(f"{args.rounds} rounds against a primary with 2 replicas under 3 Sentinels")
            times = asyncio.run(measure(cluster, args.rounds))
            if args.http:
                note(f"{args.http} webhooks to each of two enrichers")
                http = measure_http(cluster, Path(work), args.http)
        finally:
            cluster.stop()
    without, with_ack = dist(times["0"]), dist(times["1"])
    result: dict[str, Any] = {
        "machine": machine(),
        "rounds": args.rounds,
        "enqueue_ms": {"REDIS_MIN_REPLICAS_ACK=0": without, "REDIS_MIN_REPLICAS_ACK=1": with_ack},
        "p50_growth_ms": round(with_ack["p50"] - without["p50"], 2),
    }
    print_table("intake's Redis write (ms)", [
        ("REDIS_MIN_REPLICAS_ACK=0", without),
        ("REDIS_MIN_REPLICAS_ACK=1", with_ack),
        ("p50 growth", result["p50_growth_ms"]),
    ])
    if http:
        plain, acked = dist(http["0"]), dist(http["1"])
        result["webhook_ms"] = {"REDIS_MIN_REPLICAS_ACK=0": plain,
                                "REDIS_MIN_REPLICAS_ACK=1": acked}
        result["webhook_p50_growth_ms"] = round(acked["p50"] - plain["p50"], 2)
        print_table("webhook answered 202 (ms)", [
            ("REDIS_MIN_REPLICAS_ACK=0", plain),
            ("REDIS_MIN_REPLICAS_ACK=1", acked),
            ("p50 growth", result["webhook_p50_growth_ms"]),
        ])
    return emit(result, args.out, [])


if __name__ == "__main__":
    raise SystemExit(main())
