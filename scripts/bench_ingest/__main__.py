"""Ingest benchmark: `make bench-ingest` (`python -m scripts.bench_ingest [--docs N] [--out F]`).

Generates a synthetic corpus (scripts/corpus_gen/), starts a private redis-server and
syncs into embedded Qdrant in a temp dir, with the real offline models. It reports; it never
asserts a speed. It exits non-zero only on correctness failures: a re-sync over unchanged
input that embeds anything, or an index that does not hold what the sync says it wrote.

The full sync and the raw fastembed pass over the same texts alternate slice by slice, so
both see the same machine (on a shared host the load drifts within minutes); the embedder
is wrapped to time its calls, which splits the sync into model time and everything else.

Every measurement runs in this one process, so peak RSS (ru_maxrss, a high-water mark)
is reported after the full sync and raw passes, and again at the end, once the int8 model
has also run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from enricher import logs
from scripts.bench_ingest.report import report
from scripts.bench_ingest.run import run
from scripts.benchlib import emit


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.bench_ingest", description=__doc__)
    parser.add_argument("--docs", type=int, default=1000, help="runbooks to generate")
    parser.add_argument(
        "--int8-docs", type=int, default=200,
        help="documents for the int8 full sync (0 skips it)",
    )
    parser.add_argument("--out", type=Path, help="also write the JSON result here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logs.configure(json=False, level="WARNING")
    result, failures = run(args.docs, min(args.int8_docs, args.docs))
    report(result)
    return emit(result, args.out, failures)


if __name__ == "__main__":
    sys.exit(main())
