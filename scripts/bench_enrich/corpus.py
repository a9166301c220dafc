"""What each index size runs on: the shortest corpus prefix that makes the chunks, alerts
about it, and its index, built once and cached under .cache/bench."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from enricher.index import schema
from enricher.index.connect import open_index, open_local_mode
from enricher.index.embedding import Embedder
from enricher.search.reader import Reader
from enricher.settings import Settings
from ingest.cache import EmbeddingCache
from ingest.chunking import chunk_markdown
from ingest.frontmatter import split_front_matter
from ingest.sources import DOC_HASH_VERSION
from ingest.sync import INDEX_RECIPE_VERSION, Syncer, SyncOptions
from scripts.bench_ingest.raw import embed_texts, raw_fastembed
from scripts.benchlib import MODELS_DIR, REPO, note
from scripts.corpus_gen import GENERATOR_VERSION, Runbook, capacity, runbooks, write_corpus

SEED = 7
#: Where the service publishes the bench's runbooks: their links are made at ingest and are
#: part of each document's hash, so the index is built with the service's own.
BASE_URL = "https://git.example.com/ops/runbooks/blob/main"
#: Every corpus file's mtime (a quarter of the runbooks have no front-matter date and are
#: dated by it): the copy the service syncs is then the indexed one, on any later day.
CORPUS_MTIME = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
#: Chunks the models embed alone after a build, the rate the build is compared with.
RAW_SAMPLE = 2048
CACHE_DIR = REPO / ".cache" / "bench"


def write_pinned(root: Path, count: int) -> list[Runbook]:
    """The first `count` runbooks under `root`, each file at CORPUS_MTIME: written twice
    (the build's copy and the one the service syncs), they hash the same, so the service's
    first sync finds every document unchanged instead of embedding the corpus again."""
    books = write_corpus(root, count, seed=SEED)
    for book in books:
        os.utime(root / book.path, (CORPUS_MTIME, CORPUS_MTIME))
    return books


def corpus_for(chunks: int) -> list[Runbook]:
    """The shortest prefix of the generated corpus that makes at least `chunks` chunks."""
    books = runbooks(min(max(50, chunks // 3), capacity(SEED)), seed=SEED)
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
    books: list[Runbook],
    embedder: Embedder,
    rebuild: bool,
    local: bool = True,
    reader: Reader | None = None,
) -> tuple[Path, dict[str, Any]]:
    """The QDRANT_PATH folder for `books`, built once and cached under .cache/bench: the
    index in qdrant-client's local mode and, copied from it by the upgrade path
    (enricher.index.connect), the same points in a qdrant-edge shard. Without `local`
    (only qdrant-edge is benchmarked: 100k chunks, where local mode would take seconds a
    query) the sync writes the edge shard directly.

    The build happens in `building-<key>` beside it and resumes there when a run is cut
    short: the corpus is written once, and the sync skips what the index already holds
    (100k chunks take hours of embedding on two cores). With a bi-encoder `reader`, each
    chunk carries its reader vector, as `make ingest` writes it for the service."""
    options = SyncOptions.from_settings(Settings(), [])
    # Whatever decides what the index holds: the corpus, the models, the chunking and
    # embed-text recipes, the index contract (enricher/schema.py) and the client version.
    contract = hashlib.sha256(Path(schema.__file__).read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([
        GENERATOR_VERSION, SEED, len(books), embedder.identity.key, INDEX_RECIPE_VERSION,
        DOC_HASH_VERSION, options.chunk_max_chars, options.chunk_min_chars, contract,
        BASE_URL, CORPUS_MTIME, reader.digest if reader is not None else "",
        importlib.metadata.version("qdrant-client"), importlib.metadata.version("qdrant-edge-py"),
    ]).encode()).hexdigest()[:16]
    target = CACHE_DIR / f"enrich-{len(books)}docs-{key}"
    meta_path = target / "meta.json"
    cached = json.loads(meta_path.read_text()) if meta_path.exists() and not rebuild else None
    if cached is not None and (cached.get("local_mode", True) or not local):
        meta = {**cached, "cached": True}
        note(f"reusing cached index {target} ({meta['chunks']} chunks)")
        return target / "qdrant", meta
    shutil.rmtree(target, ignore_errors=True)
    building = CACHE_DIR / f"building-{key}"
    corpus = building / "runbooks"
    if rebuild or not corpus.is_dir():
        shutil.rmtree(building, ignore_errors=True)
        write_pinned(corpus, len(books))
    else:
        note(f"resuming the build in {building}")
    spent_path = building / "spent_s"
    spent = float(spent_path.read_text()) if spent_path.exists() else 0.0
    settings = Settings(models_dir=MODELS_DIR, qdrant_path=building / "qdrant",
                        qdrant_collection="bench", runbook_base_url=BASE_URL)
    index = open_local_mode(settings.qdrant_path, settings.qdrant_collection) if local \
        else open_index(settings)
    shown = [0]
    marks: list[tuple[float, int]] = []

    def progress(done: int, total: int) -> None:
        if done * 10 // total > shown[0]:
            shown[0] = done * 10 // total
            marks.append((time.perf_counter(), done))
            spent_path.write_text(f"{spent + marks[-1][0] - started:.1f}")
            note(f"  embedded {done}/{total} chunks")

    note(f"building the index for {len(books)} runbooks (once; cached in {CACHE_DIR}) ...")
    started = time.perf_counter()
    syncer = Syncer(index, embedder, EmbeddingCache(None, "none"), reader=reader)
    options = SyncOptions.from_settings(settings, [corpus], use_git=False)
    report = syncer.run(options, progress=progress)
    seconds = time.perf_counter() - started
    # The rate of each tenth of the build (does the sync slow down as the index grows?),
    # and the models alone over a sample of the same texts, in the sync's batches.
    slices = [round((n1 - n0) / (t1 - t0), 1)
              for (t0, n0), (t1, n1) in zip([(started, 0), *marks], marks, strict=False)]
    chunks = index.count()
    texts = embed_texts(corpus, options)
    raw = raw_fastembed(embedder, texts[:: max(1, len(texts) // RAW_SAMPLE)][:RAW_SAMPLE])
    index.close()
    edge = open_index(settings)
    edge.optimize()
    edge.close()
    # Blocks on disk, not apparent sizes: the engine preallocates sparse files.
    shard_mb = sum(f.stat().st_blocks * 512 for f in (building / "qdrant" / "edge").rglob("*")
                   if f.is_file()) / 2**20
    shutil.rmtree(corpus)
    rate = report.embedded / seconds
    meta = {"docs": len(books), "chunks": chunks,
            "build_s": round(spent + seconds, 1), "last_run_embedded": report.embedded,
            "chunks_per_s": round(rate, 1), "shard_mb": round(shard_mb, 1), "local_mode": local,
            "slices_chunks_per_s": slices, "raw_sample": raw.to_dict(),
            "sync_over_raw": round(rate / raw.to_dict()["chunks_per_s"], 3),
            "built": datetime.now(UTC).isoformat(timespec="seconds")}
    (building / "meta.json").write_text(json.dumps(meta))
    spent_path.unlink(missing_ok=True)
    building.rename(target)
    note(f"built in {seconds:.0f} s: {report.summary()}")
    return target / "qdrant", {**meta, "cached": False}
