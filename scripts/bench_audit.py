"""Audit benchmark: `python -m scripts.bench_audit [--rules 1000] [--chunks 10000] [--out F]`.

Audits `--rules` alerting rules against the enrichment benchmark's index of synthetic
runbooks (about `--chunks` chunks, built once and cached under .cache/bench by
scripts.bench_enrich.corpus). The rules mix what a rules repository holds: 40% link their
runbook (`runbook_url`), 10% link one that does not exist, 30% carry no link but an alert
named like a runbook or renamed, 20% are about runbooks that were never written. Each rule's
expression quotes the metrics of its service, as the benchmark's alerts do.

Reports the audit's time (rule files read, every rule searched and judged; the index and the
models opened before) and the verdicts; it never asserts a speed. JSON on the last line.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from enricher import logs
from enricher.audit.__main__ import audit
from enricher.index.connect import open_index
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from scripts.bench_enrich.corpus import SEED, corpus_for, ensure_index, generator_url
from scripts.benchlib import MODELS_DIR, emit, machine, peak_rss_mb
from scripts.corpus_gen import Runbook, runbooks
from scripts.index_copy import copy_index


def rule(seq: int, indexed: Sequence[Runbook], unwritten: Sequence[Runbook]) -> dict[str, Any]:
    kind = seq % 10
    pool = unwritten if kind >= 8 else indexed
    book = pool[(seq * 7919) % len(pool)]
    expr = parse_qs(urlsplit(generator_url(book.service)).query)["g0.expr"][0]
    annotations = {"summary": book.summary, "description": book.description}
    if kind < 4:
        annotations["runbook_url"] = f"https://runbooks.example.com/{book.path}"
    elif kind == 4:
        annotations["runbook_url"] = f"https://wiki.example.com/{book.service}/gone-{seq}"
    name = book.alert_name if kind % 2 == 0 else f"{book.alert_name}Team{seq}"
    return {
        "alert": name,
        "expr": expr,
        "for": "5m",
        "labels": {"severity": "critical" if seq % 3 == 0 else "warning"},
        "annotations": annotations,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_audit", description=__doc__)
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=10000, help="index size in chunks")
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logs.configure(json=False, level="WARNING")
    settings = Settings(models_dir=MODELS_DIR)
    embedder = Embedder(settings)
    books = corpus_for(args.chunks)
    qdrant, meta = ensure_index(books, embedder, rebuild=False)
    unwritten = runbooks(len(books) + 200, seed=SEED)[len(books):]
    groups = [
        {"name": f"team-{g}", "rules": [rule(g * 50 + i, books, unwritten) for i in range(50)]}
        for g in range(args.rules // 50)
    ]
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as folder:
        work = Path(folder)
        for group in groups:
            (work / f"{group['name']}.rules.yml").write_text(yaml.safe_dump({"groups": [group]}))
        served = settings.model_copy(
            update={"qdrant_path": work / "qdrant", "qdrant_collection": "bench"}
        )
        copy_index(qdrant, served.qdrant_path)  # the cached index stays untouched
        index = open_index(served)
        try:
            started = time.perf_counter()
            verdicts, failed = audit(served, index, embedder, [work])
            seconds = time.perf_counter() - started
        finally:
            index.close()
    tally = Counter(v.kind for v in verdicts)
    print(f"audited {len(verdicts)} rules against {meta['chunks']} chunks in {seconds:.1f} s "
          f"({1000 * seconds / max(len(verdicts), 1):.1f} ms a rule): {dict(tally)}")
    result = {
        "rules": len(verdicts), "chunks": meta["chunks"], "seconds": round(seconds, 2),
        "ms_per_rule": round(1000 * seconds / max(len(verdicts), 1), 2),
        "verdicts": dict(tally), "peak_rss_mb": peak_rss_mb(), "machine": machine(),
        "load_avg": os.getloadavg(),
    }
    return emit(result, args.out, failed)


if __name__ == "__main__":
    sys.exit(main())
