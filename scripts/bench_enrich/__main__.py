"""Enrichment benchmark: `make bench-enrich` (`python -m scripts.bench_enrich [--out F]`).

For each index size (about 1k and 10k chunks of synthetic runbooks, embedded Qdrant) the
real service is built with `Services.build`, served by uvicorn on a free port in a thread,
and posts to the fake Slack API on 127.0.0.1. It measures, per alert:

- the ack: HTTP POST until the 202 arrives;
- end to end: POST sent until fake Slack receives chat.postMessage;
- inside that, measured in place in the running service by thin timing wrappers (not
  replacements): query embedding (dense, sparse), each Qdrant `query_points` call and its
  tier, the whole `Searcher.search`, and the Slack request; rendering is timed afterwards
  on the same alerts and results (a pure function). What is left is queue overhead.

Then a burst of webhooks from a separate client process (so client threads do not share
the server's GIL) measures the ack under load while the workers are busy.

Indexes are built once and cached under `.cache/bench/` (keyed on the corpus, the models
and the client version): the 10k index takes minutes to embed. It reports; it never
asserts a speed.
"""


from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog

from enricher import logs
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from scripts.bench_enrich.report import report
from scripts.bench_enrich.serving import burst_client
from scripts.bench_enrich.size import TOKEN, SizeSetup, bench_size, side_by_side
from scripts.bench_enrich.timing import StampedSlack
from scripts.benchlib import MODELS_DIR, emit, machine, peak_rss_mb
from scripts.local_redis import running_redis


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_enrich", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="index sizes in chunks")
    parser.add_argument("--alerts", type=int, default=200, help="sequential alerts per size")
    parser.add_argument("--burst", type=int, default=500, help="webhooks in the burst")
    parser.add_argument("--burst-threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=Settings().workers)
    parser.add_argument("--drain-timeout", type=float, default=120,
                        help="seconds to wait for the burst to be posted")
    parser.add_argument("--rebuild", action="store_true", help="ignore cached indexes")
    parser.add_argument("--sync-interval", type=float, default=10,
                        help="edge: the service syncs the corpus folder every N s and one "
                             "runbook is edited during the burst (0: off)")
    parser.add_argument("--engines", default="edge,local",
                        help="engines per size: edge (qdrant-edge, the default) and/or local "
                             "(qdrant-client local mode, for comparison)")
    parser.add_argument("--no-reader", action="store_true",
                        help="serve the same index without the reader (its cost, as an A/B; "
                             "with --sync-interval 0, or the sync re-indexes without it)")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    parser.add_argument("--burst-client", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=8, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.burst_client:
        print(json.dumps(burst_client(args.url, args.burst_client, args.threads)))
        return 0

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # The service logs one JSON event per step at INFO, as in production; the cost of
    # rendering them stays in the numbers, the output goes to /dev/null.
    logs.configure(json=True, level="INFO")
    devnull = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=devnull))
    load_start = os.getloadavg()
    embedder = Embedder(Settings(models_dir=MODELS_DIR))
    sizes: list[dict[str, Any]] = []
    fake = StampedSlack(TOKEN)
    fake.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-enrich-") as tmp, \
                running_redis(Path(tmp)) as redis_server:
            for chunks in (int(s) for s in args.sizes.split(",")):
                runs = {
                    engine: bench_size(
                        SizeSetup(chunks, engine, args.alerts, args.burst, args.burst_threads,
                                  args.workers, args.drain_timeout, args.rebuild,
                                  args.sync_interval, "local" in args.engines.split(","),
                                  not args.no_reader),
                        embedder, redis_server, fake, Path(tmp))
                    for engine in args.engines.split(",")
                }
                sizes.append(side_by_side(runs))
    finally:
        fake.stop()
    result = {
        "benchmark": "enrich",
        "machine": machine(),
        "load_avg_start": [round(x, 2) for x in load_start],
        "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "peak_rss_mb": peak_rss_mb(),
        "sizes": sizes,
    }
    report(result)
    return emit(result, args.out, [f for size in sizes for f in size["failures"]])


if __name__ == "__main__":
    sys.exit(main())
