"""What the page's "Last time" line costs in Redis (issue 35, item 3):
`python -m scripts.bench_history [--entries N] [--rounds N] [--out F]`.

A local redis-server on loopback holds one alert's history with `--entries` pages (10,000 by
default, the store's cap: enricher.pipeline.history.CAP) spread over the last 7 days. Each
round reads the line's counts the way a new page does (`PageHistory.read`: one round trip,
two ZCOUNTs and an HMGET), then records a page (`PageHistory.fired`, which trims to the
cap). It reports the distributions; it never asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import redis.asyncio as aioredis

from enricher.alert import Alert
from enricher.pipeline.history import CAP, WEEK_S, PageHistory
from enricher.slack.delivery import PostRef
from scripts.benchlib import dist, emit, machine, print_table
from scripts.local_redis import RedisServer

#: A fixed "now" for the stored history: the bench depends on no date.
NOW = 1_800_000_000.0
ALERT = Alert(
    source="alertmanager", status="firing", alert_name="BenchHistory", service="bench",
    severity="critical", summary="", description="", group_key="g-bench",
)


async def measure(url: str, entries: int, rounds: int) -> dict[str, list[float]]:
    client = aioredis.Redis.from_url(url)
    history = PageHistory(client)
    key = history.key(ALERT)
    assert key is not None
    try:
        await client.delete(key, key + ":last")
        step = WEEK_S / entries
        for start in range(0, entries, 1000):
            batch = {f"g{n}:{NOW - WEEK_S + n * step!r}": NOW - WEEK_S + n * step
                     for n in range(start, min(entries, start + 1000))}
            await client.zadd(key, batch)
        await client.hset(key + ":last", mapping={"url": "https://slack.com/archives/C1/p1",
                                                  "resolved_s": "720.0"})
        assert await client.zcard(key) == entries
        reads: list[float] = []
        writes: list[float] = []
        for n in range(rounds):
            at = NOW + n
            started = time.perf_counter()
            await history.read(ALERT, at)
            reads.append(time.perf_counter() - started)
            started = time.perf_counter()
            await history.fired(ALERT, at, f"g-bench-{n}", PostRef("C1", f"{at:.6f}"))
            writes.append(time.perf_counter() - started)
            await client.zremrangebyscore(key, at - 0.5, at + 0.5)  # keep `entries` stored
        return {"read": reads, "record": writes}
    finally:
        await client.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=CAP)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        server = RedisServer(Path(work))
        server.start()
        try:
            times = asyncio.run(measure(server.url, args.entries, args.rounds))
        finally:
            server.stop()
    result = {"machine": machine(), "entries": args.entries, "rounds": args.rounds,
              **{name: dist(values) for name, values in times.items()}}
    print_table(f"history line at {args.entries} entries, {args.rounds} rounds (ms)", [
        (name, ", ".join(f"{k} {v}" for k, v in dist(values).items()))
        for name, values in times.items()
    ])
    return emit(result, args.out, [])


if __name__ == "__main__":
    raise SystemExit(main())
