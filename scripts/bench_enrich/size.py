"""One index size: the real service with timing wrappers in place, sequential alerts, then a
burst from a child process; returns the size's JSON result."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
from pydantic import SecretStr

from enricher.app import create_app
from enricher.index.connect import open_local_mode
from enricher.index.embedding import Embedder
from enricher.index.engine import Index
from enricher.search.confidence import load_model
from enricher.search.reader import Reader
from enricher.search.searcher import load_reader
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.render import render_message
from scripts.bench_enrich.corpus import BASE_URL, SEED, alert_bodies, corpus_for, ensure_index
from scripts.bench_enrich.edit import EditProbe, sync_root
from scripts.bench_enrich.serving import serving
from scripts.bench_enrich.summary import summarize
from scripts.bench_enrich.timing import (
    StampedSlack,
    TimedBotDelivery,
    TimedEmbedder,
    TimedIndex,
    TimedReader,
    TimedSearcher,
)
from scripts.benchlib import MODELS_DIR, REPO, note, rss_kb
from scripts.corpus_gen import runbooks
from scripts.index_copy import copy_index
from scripts.local_redis import RedisServer

TOKEN = "xoxb-bench"
CHANNEL = "C0BENCH"
WARMUP = 5


@dataclass
class SizeSetup:
    chunks: int
    #: "edge" (qdrant-edge, the default engine) or "local" (qdrant-client local mode).
    engine: str
    alerts: int
    burst: int
    burst_threads: int
    workers: int
    drain_timeout_s: float
    rebuild: bool
    #: When > 0 (edge only), the service syncs the corpus folder itself at this interval
    #: and one runbook is edited during the burst (scripts/bench_enrich/edit.py).
    sync_interval_s: float = 0.0
    #: Whether the local mode is benchmarked too at this size (its index is then built there).
    local_too: bool = True
    #: Whether the service reads with the shipped reader. Off, it serves the same index
    #: (built with the reader's vectors) without it: the reader's cost on the same pages.
    reader: bool = True


def bench_size(
    setup: SizeSetup, embedder: Embedder, redis_server: RedisServer, fake: StampedSlack,
    work: Path,
) -> dict[str, Any]:
    books = corpus_for(setup.chunks)
    unindexed = runbooks(len(books) + 200, seed=SEED)[len(books):]
    reader = load_reader(Settings(models_dir=MODELS_DIR), load_model())
    cached_qdrant, meta = ensure_index(
        books, embedder, setup.rebuild, local=setup.local_too, reader=reader
    )
    qdrant_path = work / f"qdrant-{setup.chunks}-{setup.engine}"
    copy_index(cached_qdrant, qdrant_path)
    redis_server.flush()
    fake.reset()
    fake.received.clear()
    syncing = setup.sync_interval_s > 0 and setup.engine == "edge"
    root = sync_root(work, books) if syncing else None
    settings = Settings(
        models_dir=MODELS_DIR, qdrant_path=qdrant_path, qdrant_collection="bench",
        redis_url=redis_server.url, slack_bot_token=SecretStr(TOKEN), slack_channel=CHANNEL,
        slack_api_url=fake.url, allow_unauthenticated=True, workers=setup.workers,
        runbook_base_url=BASE_URL, runbook_roots=(str(root),) if root else (),
        sync_interval_s=max(setup.sync_interval_s, 1), sync_use_git=False,
        reader_enabled=None if setup.reader else False,
    )
    # Typed as the real parts: the wrappers delegate every call the service makes.
    timed_embedder = cast(Embedder, TimedEmbedder(embedder))
    delivery = TimedBotDelivery(TOKEN, fake.url)
    index = open_local_mode(qdrant_path, settings.qdrant_collection) \
        if setup.engine == "local" else None
    services = Services.build(settings, embedder=timed_embedder, delivery=delivery, index=index)
    reader = services.searcher.reader
    searcher = TimedSearcher(cast(Index, TimedIndex(services.index)), timed_embedder,
                             services.searcher.config, services.searcher.model,
                             reader and cast(Reader, TimedReader(reader)))
    services.searcher = services.processor.searcher = searcher
    points = services.index.count()

    sequential = alert_bodies(books, unindexed, WARMUP + setup.alerts, start=0)
    burst = alert_bodies(books, unindexed, setup.burst, start=100_000)
    acks: list[float] = []
    e2e: list[float] = []
    slack_leg: list[float] = []
    failures: list[str] = []
    edit: dict[str, Any] | None = None
    with serving(create_app(services)) as base:
        url = f"{base}/webhook/alertmanager"
        if services.sync is not None:
            started = time.perf_counter()
            services.sync.first_done.wait()
            note(f"first sync of the folder: {time.perf_counter() - started:.1f} s")
        note(f"{points} chunks: {setup.alerts} sequential alerts ...")
        with httpx.Client(timeout=30) as client:
            for n, body in enumerate(sequential):
                started = time.perf_counter()
                response = client.post(url, content=body,
                                       headers={"Content-Type": "application/json"})
                acked = time.perf_counter()
                if response.status_code != 202:
                    failures.append(f"alert {n}: HTTP {response.status_code} {response.text[:100]}")
                    break
                if not fake.wait_for_posts(n + 1, timeout_s=120):
                    failures.append(f"alert {n}: no chat.postMessage within 120 s")
                    break
                if n >= WARMUP:
                    acks.append(acked - started)
                    e2e.append(fake.received[n] - started)
                    slack_leg.append(fake.received[n] - delivery.post_started[n])
        # The whole benchmark process (service, fake Slack, client), the index open and
        # the sequential pages served: the service's share is all but a few MiB of it.
        serving_rss = round(rss_kb() / 1024, 1)
        probes = searcher.probes[WARMUP : WARMUP + len(e2e)]
        down = [p.result.reason for p in probes if p.result and p.result.status == "unavailable"]
        if down:  # latencies of a search that failed fast would flatter the engine
            failures.append(f"{len(down)} search(es) unavailable, first: {down[0]}")
        note(f"{points} chunks: burst of {setup.burst} webhooks ...")
        bodies_file = work / f"burst-{setup.chunks}.json"
        bodies_file.write_text(json.dumps([b.decode() for b in burst]))
        posted_before = len(fake.received)
        edit_probe = None
        if root is not None:
            edit_probe = EditProbe(services.index, root, books[0],
                              timeout_s=setup.sync_interval_s + 60)
            edit_probe.start(delay_s=2.0)
        child = subprocess.run(
            [sys.executable, "-m", "scripts.bench_enrich", "--burst-client", str(bodies_file),
             "--url", url, "--threads", str(setup.burst_threads)],
            capture_output=True, text=True, check=True, cwd=REPO,
        )
        burst_result = json.loads(child.stdout.strip().splitlines()[-1])
        drained = fake.wait_for_posts(posted_before + setup.burst, timeout_s=setup.drain_timeout_s)
        # Both processes read the same wall clock: from the first POST to the last post seen.
        burst_window = time.time() - float(burst_result["started_at"])
        burst_posted = len(fake.received) - posted_before
        burst_probes = searcher.probes[WARMUP + len(e2e) :]
        if edit_probe is not None:
            edit = {**edit_probe.join(), "sync_interval_s": setup.sync_interval_s,
                    "bound_s": setup.sync_interval_s + 5}
        note(f"{points} chunks: {burst_posted}/{setup.burst} burst alerts posted in "
             f"{burst_window:.0f} s; stopping the service")
    # Render is pure: time it on the same alerts and results, outside the service.
    render_s: list[float] = []
    for probe in probes:
        assert probe.result is not None
        started = time.perf_counter()
        for _ in range(5):
            render_message(probe.alert, probe.result, runbook_base_url=BASE_URL)
        render_s.append((time.perf_counter() - started) / 5)
    result = summarize(points, meta, probes, burst_probes, acks, e2e, slack_leg, render_s,
                       burst_result, burst_posted, burst_window, drained, setup.burst_threads,
                       setup.workers, failures)
    result["rss_mb"] = serving_rss
    if edit is not None:
        result["burst"]["edit_during_burst"] = edit
    return result


def side_by_side(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One size's entry: the first engine's result (edge when run), with the local mode's
    beside it under `local_mode` and local ÷ edge ratios of the headline numbers."""
    first, *_ = runs.values()
    entry = {**first, "engine": next(iter(runs))}
    if "edge" in runs and "local" in runs:
        edge, local = runs["edge"], runs["local"]
        entry["local_mode"] = local
        entry["local_over_edge"] = {
            "end_to_end_p50": _ratio(local["end_to_end_ms"]["p50"], edge["end_to_end_ms"]["p50"]),
            "end_to_end_p99": _ratio(local["end_to_end_ms"]["p99"], edge["end_to_end_ms"]["p99"]),
            "burst_posts_per_s": _ratio(
                local["burst"]["posts_per_s"], edge["burst"]["posts_per_s"]
            ),
        }
    return entry


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None
