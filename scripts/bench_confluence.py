"""Confluence sync benchmark: `python -m scripts.bench_confluence [--pages N] [--out F]`.

N pages (default 2,000) across two Cloud spaces, served by respx in REST v2's shapes (the
test double of tests/ingest/confluence), synced with the real models into a qdrant-edge
shard in a temp dir, with a private redis-server. Three syncs: the first (everything new),
a re-sync with nothing changed, and one after a single page was edited. The embedder is
wrapped to time its calls, so model time is reported apart from the rest (HTTP layer,
storage-format conversion, chunking, index writes).

It reports; it never asserts a speed. It exits 1 when the re-sync reads a page or embeds
anything, makes more than one listing request per listing page of each space, or when the
edit re-indexes more than that page.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import respx
from pydantic import SecretStr

from enricher import logs
from enricher.index.connect import open_index
from enricher.settings import Settings
from ingest.cache import EmbeddingCache, connect
from ingest.confluence.cloud import LISTING_LIMIT
from ingest.confluence.source import from_settings
from ingest.sync import Syncer, SyncOptions
from scripts.bench_ingest.sync_runs import CountingEmbedder
from scripts.benchlib import MODELS_DIR, emit, print_table
from scripts.local_redis import RedisServer
from tests.ingest.confluence.fakesite import CLOUD, FakePage, FakeSite, serve_cloud

SERVICES = ("orders", "payments", "search", "billing", "gateway", "ledger", "profile", "cart")


def storage(n: int) -> str:
    """A runbook page of about 2 chunks, its words varied by `n` so no two embed alike."""
    service = SERVICES[n % len(SERVICES)]
    return (
        f"<h2>Symptoms</h2><p>The {service} service instance {n} answers slowly; p99 latency "
        f"of {service}_request_seconds passes {n % 7 + 1} seconds on shard {n % 13}.</p>"
        '<ac:structured-macro ac:name="warning"><ac:rich-text-body><p>Do not restart all '
        f"{service} pods at once.</p></ac:rich-text-body></ac:structured-macro>"
        f"<h2>Mitigation</h2><p>Scale {service}-{n} out and drain the slow node.</p>"
        '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash'
        f"</ac:parameter><ac:plain-text-body><![CDATA[kubectl -n {service} scale "
        f"deploy/{service}-{n} --replicas={n % 5 + 3}]]></ac:plain-text-body>"
        "</ac:structured-macro><table><tbody><tr><th>Shard</th><th>Owner</th></tr>"
        f"<tr><td>{n % 13}</td><td>team-{service}</td></tr></tbody></table>"
    )


def calls(router: respx.MockRouter) -> dict[str, int]:
    return {route.name: route.call_count for route in router.routes if route.name}


def run(pages: int, workdir: Path) -> tuple[dict[str, Any], list[str]]:
    (workdir / "redis").mkdir()
    redis = RedisServer(workdir / "redis")
    redis.start()
    settings = Settings(
        models_dir=MODELS_DIR, qdrant_path=workdir / "qdrant", redis_url=redis.url,
        confluence_url=f"{CLOUD}/wiki", confluence_spaces=("OPS", "SRE"),
        confluence_email="bench@acme.test", confluence_api_token=SecretStr("bench-token"),
    )
    site = FakeSite()
    for n in range(pages):
        site.add(FakePage(str(100_000 + n), ("OPS", "SRE")[n % 2], f"Runbook {n}", storage(n)))
    embedder = CountingEmbedder(settings)
    index = open_index(settings)
    result: dict[str, Any] = {"pages": pages, "spaces": 2}
    failures: list[str] = []
    try:
        with respx.mock(assert_all_called=False) as router:
            serve_cloud(router, site)
            source = from_settings(settings)
            assert source is not None
            options = SyncOptions.from_settings(settings, [], sources=[source])
            cache = EmbeddingCache(connect(settings.redis_url), embedder.identity.dense)
            syncer = Syncer(index, embedder, cache)
            for label in ("first", "unchanged", "one_edit"):
                if label == "one_edit":
                    site.edit("100000", storage(10**6))
                before, texts = calls(router), embedder.dense_texts
                model_before = embedder.dense_s + embedder.sparse_s
                started = time.perf_counter()
                report = syncer.run(options)
                wall = time.perf_counter() - started
                model = embedder.dense_s + embedder.sparse_s - model_before
                after = calls(router)
                result[label] = {
                    "wall_s": round(wall, 2),
                    "embedding_s": round(model, 2),
                    "rest_s": round(wall - model, 2),
                    "requests": {k: after[k] - before.get(k, 0) for k in after},
                    "dense_texts": embedder.dense_texts - texts,
                    "summary": report.summary(),
                }
                if report.errors:
                    failures.append(f"{label}: {report.errors[0].reason}")
            source.close()
    finally:
        index.close()
        redis.kill()
    unchanged, edit = result["unchanged"], result["one_edit"]
    per_space = -(-pages // 2 // LISTING_LIMIT)
    if unchanged["dense_texts"] or unchanged["requests"].get("page"):
        failures.append("the re-sync with nothing changed read a page or embedded a text")
    if unchanged["requests"].get("listing") != 2 * per_space:
        failures.append(f"the re-sync made {unchanged['requests'].get('listing')} listing "
                        f"requests, expected {2 * per_space} ({per_space} per space)")
    if edit["requests"].get("page") != 1 or not edit["summary"].startswith("indexed 1 "):
        failures.append("one edited page re-indexed more than that page")
    return result, failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_confluence",
                                     description=__doc__)
    parser.add_argument("--pages", type=int, default=2000, help="pages across two spaces")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logs.configure(json=False, level="WARNING")
    with tempfile.TemporaryDirectory(prefix="bench-confluence-") as workdir:
        result, failures = run(args.pages, Path(workdir))
    for label in ("first", "unchanged", "one_edit"):
        row = result[label]
        print_table(f"{label} sync of {args.pages} pages", [
            ("wall s", row["wall_s"]), ("embedding s", row["embedding_s"]),
            ("rest s", row["rest_s"]), ("requests", row["requests"]),
            ("dense texts", row["dense_texts"]), ("summary", row["summary"]),
        ])
    return emit(result, args.out, failures)


if __name__ == "__main__":
    sys.exit(main())
