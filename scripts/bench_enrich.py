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
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

import httpx
import structlog
import uvicorn
from pydantic import SecretStr
from qdrant_client import QdrantClient, models
from starlette.applications import Starlette

from enricher import logs
from enricher.alert import Alert
from enricher.app import create_app
from enricher.index import schema
from enricher.index.embedding import Embedder, SparseVector
from enricher.result import SearchResult
from enricher.search.searcher import Searcher
from enricher.service import Services
from enricher.settings import Settings
from enricher.slack.delivery import BotDelivery, PostRef
from enricher.slack.render import SlackMessage, render_message
from ingest.cache import EmbeddingCache
from ingest.chunking import chunk_markdown
from ingest.frontmatter import split_front_matter
from ingest.sources import DOC_HASH_VERSION
from ingest.sync import INDEX_RECIPE_VERSION, Syncer, SyncOptions
from scripts.benchlib import MODELS_DIR, REPO, dist, emit, machine, note, peak_rss_mb, print_table
from scripts.corpus_gen import GENERATOR_VERSION, Runbook, runbooks, write_corpus
from scripts.local_redis import RedisServer, free_port, running_redis
from tests.fakeslack import FakeSlack

SEED = 7
TOKEN = "xoxb-bench"
CHANNEL = "C0BENCH"
BASE_URL = "https://git.example.com/ops/runbooks/blob/main"
CACHE_DIR = REPO / ".cache" / "bench"
WARMUP = 5


# --- timing wrappers: delegate to the real parts, record into the current search's probe ----


@dataclass
class Probe:
    """What one `Searcher.search` call spent, recorded by the thread that ran it."""

    alert: Alert
    dense_s: float = 0.0
    sparse_s: float = 0.0
    qdrant: list[tuple[str, float]] = field(default_factory=list)
    total_s: float = 0.0
    result: SearchResult | None = None


_local = threading.local()


def _probe() -> Probe | None:
    return cast(Probe | None, getattr(_local, "probe", None))


class TimedEmbedder:
    """The real Embedder; query embeddings are timed into the current probe."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.identity = inner.identity

    def dense_query(self, text: str) -> list[float]:
        started = time.perf_counter()
        vector = self.inner.dense_query(text)
        if (probe := _probe()) is not None:
            probe.dense_s += time.perf_counter() - started
        return vector

    def sparse_query(self, text: str) -> SparseVector:
        started = time.perf_counter()
        vector = self.inner.sparse_query(text)
        if (probe := _probe()) is not None:
            probe.sparse_s += time.perf_counter() - started
        return vector

    def dense(self, texts: Sequence[str], batch_size: int = 32) -> list[list[float]]:
        return self.inner.dense(texts, batch_size)

    def sparse(self, texts: Sequence[str]) -> list[SparseVector]:
        return self.inner.sparse(texts)


def _call_kind(kwargs: dict[str, Any]) -> str:
    """What a query_points call is for: a hybrid tier (by its prefetch filter) or a
    single-retriever query (the searcher's BM25-only read of lexical evidence)."""
    prefetch = kwargs.get("prefetch")
    if not prefetch:
        return f"{kwargs.get('using', '?')} only"
    first = prefetch[0] if isinstance(prefetch, list) else prefetch
    flt = getattr(first, "filter", None)
    if not isinstance(flt, models.Filter) or not flt.must:
        return "hybrid unfiltered"
    conditions = flt.must if isinstance(flt.must, list) else [flt.must]
    keys = {getattr(c, "key", "") for c in conditions}
    if schema.F_ALERT_KEYS in keys:
        return "hybrid alert_name"
    return "hybrid service" if schema.F_SERVICE_KEYS in keys else "hybrid other"


class TimedClient:
    """The real QdrantClient for the calls the searcher makes (`query_points`, and `scroll`
    for the runbooks quoting the rule's metrics), each timed into the current probe."""

    def __init__(self, inner: QdrantClient) -> None:
        self.inner = inner

    def query_points(self, collection_name: str, **kwargs: Any) -> models.QueryResponse:
        return cast(
            models.QueryResponse,
            self._timed(_call_kind(kwargs), self.inner.query_points, collection_name, **kwargs),
        )

    def scroll(self, collection_name: str, **kwargs: Any) -> Any:
        return self._timed("scroll, metric quotes", self.inner.scroll, collection_name, **kwargs)

    @staticmethod
    def _timed(kind: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        response = call(*args, **kwargs)
        if (probe := _probe()) is not None:
            probe.qdrant.append((kind, time.perf_counter() - started))
        return response


class TimedSearcher(Searcher):
    """The service's Searcher, recording one Probe per search (in call order)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probes: list[Probe] = []

    def search(self, alert: Alert, now: datetime | None = None) -> SearchResult:
        probe = Probe(alert=alert)
        _local.probe = probe
        started = time.perf_counter()
        try:
            result = super().search(alert, now)
        finally:
            _local.probe = None
        probe.total_s = time.perf_counter() - started
        probe.result = result
        self.probes.append(probe)
        return result


class TimedBotDelivery(BotDelivery):
    """The real bot delivery; records when each chat.postMessage call starts."""

    def __init__(self, token: str, base_url: str) -> None:
        super().__init__(token, base_url)
        self.post_started: list[float] = []

    async def post(self, channel: str, message: SlackMessage, marker: str) -> PostRef:
        self.post_started.append(time.perf_counter())
        return await super().post(channel, message, marker)


class StampedSlack(FakeSlack):
    """The fake Slack API, stamping when each successful chat.postMessage arrives."""

    def __init__(self) -> None:
        super().__init__(token=TOKEN)
        self.received: list[float] = []
        self.arrived = threading.Condition()

    def _handle(self, method: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        at = time.perf_counter()
        reply = super()._handle(method, body, headers)
        if method == "chat.postMessage" and reply.ok:
            with self.arrived:
                self.received.append(at)
                self.arrived.notify_all()
        return reply

    def wait_for_posts(self, count: int, timeout_s: float) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.received) >= count, timeout=timeout_s)


# --- corpus, alerts and the cached index ----------------------------------------------------


def corpus_for(chunks: int) -> list[Runbook]:
    """The shortest prefix of the generated corpus that makes at least `chunks` chunks."""
    books = runbooks(max(50, chunks // 3), seed=SEED)
    settings = Settings()
    total = 0
    for n, book in enumerate(books, start=1):
        body = split_front_matter(book.text)[1]
        chunks_of = chunk_markdown(
            body, max_chars=settings.chunk_max_chars, min_chars=settings.chunk_min_chars
        )
        total += len(chunks_of)
        if total >= chunks:
            return books[:n]
    raise ValueError(f"{len(books)} runbooks make only {total} chunks, fewer than {chunks}")


def generator_url(service: str) -> str:
    """A rule link as Prometheus writes it, so every search also reads the rule's metrics
    (enricher.sources.promql) and looks for the runbooks quoting them, as it does in production."""
    metric = service.replace("-", "_")
    errors, total = f"{metric}_requests_errors_total", f"{metric}_requests_total"
    expr = f"sum(rate({errors}[5m])) / sum(rate({total}[5m])) > 0.05"
    return "http://prometheus.example/graph?" + urlencode({"g0.expr": expr, "g0.tab": "1"})


def am_body(seq: int, name: str, service: str, summary: str, description: str) -> bytes:
    """An Alertmanager v4 notification; `seq` makes the group (and so the post) unique."""
    starts = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    labels = {"alertname": name, "service": service, "severity": "critical",
              "namespace": service.split("-")[0], "instance": f"10.0.{seq % 250}.{seq % 7}:8080"}
    alert = {
        "status": "firing", "labels": labels,
        "annotations": {"summary": summary, "description": description},
        "startsAt": starts, "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": generator_url(service), "fingerprint": f"bench{seq:08x}",
    }
    return json.dumps({
        "version": "4", "groupKey": f'{{}}:{{alertname="{name}", bench="{seq}"}}',
        "truncatedAlerts": 0, "status": "firing", "receiver": "runbook-enricher",
        "groupLabels": {"alertname": name}, "commonLabels": labels,
        "commonAnnotations": alert["annotations"], "externalURL": "http://alertmanager:9093",
        "alerts": [alert],
    }).encode()


def alert_bodies(
    indexed: list[Runbook], unindexed: list[Runbook], count: int, start: int
) -> list[bytes]:
    """A realistic mix: 60% alerts with a runbook (service labels as found in the wild),
    20% alerts whose runbook was never written, 20% generic alert names (HighErrorRate)."""
    bodies: list[bytes] = []
    for i in range(count):
        seq = start + i
        kind = seq % 5
        pool = unindexed if kind == 3 else indexed
        book = pool[(seq * 7919) % len(pool)]
        labels = (book.service, f"{book.service}-prod", f"{book.service}-{book.component}")
        service = labels[seq % 3]
        name = book.alert_name if kind != 4 else book.kind
        bodies.append(am_body(seq, name, service, book.summary, book.description))
    return bodies


def ensure_index(
    books: list[Runbook], embedder: Embedder, rebuild: bool
) -> tuple[Path, dict[str, Any]]:
    """The embedded Qdrant folder for `books`, built once and cached under .cache/bench."""
    options = SyncOptions.from_settings(Settings(), [])
    # Whatever decides what the index holds: the corpus, the models, the chunking and
    # embed-text recipes, the index contract (enricher/schema.py) and the client version.
    contract = hashlib.sha256(Path(schema.__file__).read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([
        GENERATOR_VERSION, SEED, len(books), embedder.identity.key, INDEX_RECIPE_VERSION,
        DOC_HASH_VERSION, options.chunk_max_chars, options.chunk_min_chars, contract,
        importlib.metadata.version("qdrant-client"),
    ]).encode()).hexdigest()[:16]
    target = CACHE_DIR / f"enrich-{len(books)}docs-{key}"
    meta_path = target / "meta.json"
    if meta_path.exists() and not rebuild:
        meta = json.loads(meta_path.read_text())
        meta["cached"] = True
        note(f"reusing cached index {target} ({meta['chunks']} chunks)")
        return target / "qdrant", meta
    shutil.rmtree(target, ignore_errors=True)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="building-", dir=CACHE_DIR))
    corpus = building / "runbooks"
    write_corpus(corpus, len(books), seed=SEED)
    settings = Settings(models_dir=MODELS_DIR, qdrant_path=building / "qdrant",
                        qdrant_collection="bench")
    client = schema.open_client(settings)
    shown = [0]

    def progress(done: int, total: int) -> None:
        if done * 10 // total > shown[0]:
            shown[0] = done * 10 // total
            note(f"  embedded {done}/{total} chunks")

    note(f"building the index for {len(books)} runbooks (once; cached in {CACHE_DIR}) ...")
    started = time.perf_counter()
    syncer = Syncer(client, settings.qdrant_collection, embedder, EmbeddingCache(None, "none"))
    options = SyncOptions.from_settings(settings, [corpus], use_git=False)
    report = syncer.run(options, progress=progress)
    seconds = time.perf_counter() - started
    client.close()
    shutil.rmtree(corpus)
    meta = {"docs": report.indexed_docs, "chunks": report.indexed_chunks,
            "build_s": round(seconds, 1), "built": datetime.now(UTC).isoformat(timespec="seconds")}
    (building / "meta.json").write_text(json.dumps(meta))
    building.rename(target)
    note(f"built in {seconds:.0f} s: {report.summary()}")
    return target / "qdrant", {**meta, "cached": False}


# --- serving ---------------------------------------------------------------------------------


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise SystemExit("the service did not start under uvicorn")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=120)


def burst_client(url: str, bodies_file: Path, threads: int) -> dict[str, Any]:
    """Run in a child process: POST every body as fast as `threads` clients can."""
    bodies = [b.encode() for b in json.loads(bodies_file.read_text())]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def worker(share: list[bytes]) -> None:
        with httpx.Client(timeout=30) as client:
            barrier.wait()
            for body in share:
                started = time.perf_counter()
                response = client.post(url, content=body,
                                       headers={"Content-Type": "application/json"})
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    statuses[response.status_code] += 1

    pool = [threading.Thread(target=worker, args=(bodies[i::threads],)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    started_at = time.time()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    return {"latencies": latencies, "statuses": dict(statuses), "started_at": started_at,
            "wall_s": time.perf_counter() - started}


# --- one index size ------------------------------------------------------------------------


@dataclass
class SizeSetup:
    chunks: int
    alerts: int
    burst: int
    burst_threads: int
    workers: int
    drain_timeout_s: float
    rebuild: bool


def bench_size(
    setup: SizeSetup, embedder: Embedder, redis_server: RedisServer, fake: StampedSlack,
    work: Path,
) -> dict[str, Any]:
    books = corpus_for(setup.chunks)
    unindexed = runbooks(len(books) + 200, seed=SEED)[len(books):]
    cached_qdrant, meta = ensure_index(books, embedder, setup.rebuild)
    qdrant_path = work / f"qdrant-{setup.chunks}"
    shutil.copytree(cached_qdrant, qdrant_path)
    redis_server.flush()
    fake.reset()
    fake.received.clear()
    settings = Settings(
        models_dir=MODELS_DIR, qdrant_path=qdrant_path, qdrant_collection="bench",
        redis_url=redis_server.url, slack_bot_token=SecretStr(TOKEN), slack_channel=CHANNEL,
        slack_api_url=fake.url, allow_unauthenticated=True, workers=setup.workers,
        runbook_base_url=BASE_URL,
    )
    # Typed as the real parts: the wrappers delegate every call the service makes.
    timed_embedder = cast(Embedder, TimedEmbedder(embedder))
    delivery = TimedBotDelivery(TOKEN, fake.url)
    services = Services.build(settings, embedder=timed_embedder, delivery=delivery)
    searcher = TimedSearcher(cast(QdrantClient, TimedClient(services.client)),
                             settings.qdrant_collection, timed_embedder, services.searcher.config)
    services.searcher = services.processor.searcher = searcher
    points = services.client.count(settings.qdrant_collection, exact=True).count

    sequential = alert_bodies(books, unindexed, WARMUP + setup.alerts, start=0)
    burst = alert_bodies(books, unindexed, setup.burst, start=100_000)
    acks: list[float] = []
    e2e: list[float] = []
    slack_leg: list[float] = []
    failures: list[str] = []
    with serving(create_app(services)) as base:
        url = f"{base}/webhook/alertmanager"
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
        probes = searcher.probes[WARMUP : WARMUP + len(e2e)]
        down = [p.result.reason for p in probes if p.result and p.result.status == "unavailable"]
        if down:  # latencies of a search that failed fast would flatter the engine
            failures.append(f"{len(down)} search(es) unavailable, first: {down[0]}")
        note(f"{points} chunks: burst of {setup.burst} webhooks ...")
        bodies_file = work / f"burst-{setup.chunks}.json"
        bodies_file.write_text(json.dumps([b.decode() for b in burst]))
        posted_before = len(fake.received)
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
    return summarize(points, meta, probes, burst_probes, acks, e2e, slack_leg, render_s,
                     burst_result, burst_posted, burst_window, drained, setup, failures)


def summarize(
    points: int, meta: dict[str, Any], probes: list[Probe], burst_probes: list[Probe],
    acks: list[float], e2e: list[float], slack_leg: list[float], render_s: list[float],
    burst: dict[str, Any], burst_posted: int, burst_window: float, drained: bool,
    setup: SizeSetup, failures: list[str],
) -> dict[str, Any]:
    search_s = [p.total_s for p in probes]
    qdrant_s = [sum(t for _, t in p.qdrant) for p in probes]
    embed_s = [p.dense_s + p.sparse_s for p in probes]
    calls_by_kind: Counter[str] = Counter(kind for p in probes for kind, _ in p.qdrant)
    per_call: dict[str, list[float]] = {}
    for p in probes:
        for kind, seconds in p.qdrant:
            per_call.setdefault(kind, []).append(seconds)
    outcomes = Counter(f"{p.result.status}/{p.result.tier}" for p in probes if p.result)
    residual = [
        total - ack - search - render - leg
        for total, ack, search, render, leg in zip(e2e, acks, search_s, render_s, slack_leg,
                                                    strict=True)
    ]
    mean_e2e = sum(e2e) / len(e2e) if e2e else 1.0

    def share(values: Sequence[float]) -> float:
        return round(100 * (sum(values) / len(values)) / mean_e2e, 1) if values else 0.0

    breakdown = {
        "ack (POST to 202)": acks,
        "queue, ledger, thread hops (residual)": residual,
        "query embedding, dense": [p.dense_s for p in probes],
        "query embedding, sparse": [p.sparse_s for p in probes],
        "Qdrant calls (query_points, scroll), all": qdrant_s,
        "rest of search (query, rerank, matches)": [
            s - q - e for s, q, e in zip(search_s, qdrant_s, embed_s, strict=True)
        ],
        "render": render_s,
        "Slack request (post start to fake receipt)": slack_leg,
    }
    return {
        "chunks": points,
        "docs": meta["docs"],
        "index_build_s": meta["build_s"],
        "index_cached": meta["cached"],
        "alerts": len(e2e),
        "outcomes": dict(outcomes),
        "ack_ms": dist(acks),
        "search_ms": dist(search_s),
        "render_ms": dist(render_s),
        "end_to_end_ms": dist(e2e),
        "breakdown": {
            name: {**dist(values), "share_of_mean_e2e_pct": share(values)}
            for name, values in breakdown.items()
        },
        "qdrant_calls_per_alert": round(sum(calls_by_kind.values()) / max(1, len(probes)), 2),
        "qdrant_calls_by_kind": dict(calls_by_kind),
        "qdrant_ms_per_call_by_kind": {kind: dist(v) for kind, v in per_call.items()},
        "burst": {
            "requests": len(burst["latencies"]),
            "client_threads": setup.burst_threads,
            "workers": setup.workers,
            "statuses": burst["statuses"],
            "send_s": round(burst["wall_s"], 2),
            "ack_ms": dist(burst["latencies"]),
            "posted": burst_posted,
            "drained": drained,
            "window_s": round(burst_window, 1),
            "posts_per_s": round(burst_posted / burst_window, 2),
            "search_ms_under_load": dist([p.total_s for p in burst_probes]),
        },
        "failures": failures,
    }


# --- main ------------------------------------------------------------------------------------


def report(result: dict[str, Any]) -> None:
    m = result["machine"]
    for size in result["sizes"]:
        b = size["burst"]
        rows: list[tuple[str, object]] = [
            ("index", f"{size['chunks']} chunks from {size['docs']} runbooks "
                      f"({'cached' if size['index_cached'] else 'built'}; build "
                      f"{size['index_build_s']} s)"),
            ("alerts, outcomes", f"{size['alerts']}: {size['outcomes']}"),
        ]
        for label, key in (("ack", "ack_ms"), ("search", "search_ms"), ("render", "render_ms"),
                           ("end to end", "end_to_end_ms")):
            d = size[key]
            rows.append((f"{label} (ms)", f"p50 {d['p50']}  p99 {d['p99']}  max {d['max']}"))
        rows.append(("Qdrant calls/alert", f"{size['qdrant_calls_per_alert']} "
                                           f"{size['qdrant_calls_by_kind']}"))
        for kind, d in size["qdrant_ms_per_call_by_kind"].items():
            rows.append((f"  Qdrant {kind} (ms)", f"p50 {d['p50']}  p99 {d['p99']}"))
        rows.append(("breakdown", "p50 ms / share of mean end to end"))
        for name, d in size["breakdown"].items():
            rows.append((f"  {name}", f"{d['p50']} ms / {d['share_of_mean_e2e_pct']}%"))
        rows += [
            ("burst", f"{b['requests']} POSTs from {b['client_threads']} threads in "
                      f"{b['send_s']} s, statuses {b['statuses']}"),
            ("burst ack (ms)", f"p50 {b['ack_ms']['p50']}  p99 {b['ack_ms']['p99']}  "
                               f"max {b['ack_ms']['max']}"),
            ("burst drain", f"{b['posted']} posted in {b['window_s']} s ({b['posts_per_s']}/s, "
                            f"{b['workers']} workers){'' if b['drained'] else ', NOT drained'}"),
            ("search under burst (ms)", f"p50 {b['search_ms_under_load']['p50']}  "
                                        f"p99 {b['search_ms_under_load']['p99']}"),
            ("failures", "; ".join(size["failures"]) or "none"),
        ]
        print_table(f"Enrich benchmark, {size['chunks']} chunks ({m['date']}, {m['cores']} "
                    f"cores, load avg at start {result['load_avg_start']})", rows)
    print(f"\npeak RSS {result['peak_rss_mb']} MiB")


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
    fake = StampedSlack()
    fake.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-enrich-") as tmp, \
                running_redis(Path(tmp)) as redis_server:
            for chunks in (int(s) for s in args.sizes.split(",")):
                setup = SizeSetup(chunks, args.alerts, args.burst, args.burst_threads,
                                  args.workers, args.drain_timeout, args.rebuild)
                sizes.append(bench_size(setup, embedder, redis_server, fake, Path(tmp)))
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
