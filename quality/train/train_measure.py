"""The exported readers alone, as the page runs them: `python -m quality.train.train_measure`
(the runtime venv; no torch).

Each model folder is loaded by the serving side's own `enricher.search.reader.Reader`
(int8, one thread) and scores mined lists it never saw: the corpora it left out (a fold
reader) and the released dev slices (`<mined>/held-out`, mined for measuring only). Per
corpus: how often the reader's best candidate is the expected runbook, against the search's
first rank (quality.train.train_data.measure), and the AUC of label against logit. The
latency is the wall time of one `score` call on a page's pairs (READER_TOP_K of the mined
lists, the first `LATENCY_LISTS`), p50 and p99. All of it goes into the folder's
reader.json under `measured`; `folds.json` beside the folders names the corpora each
reader left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from enricher.search.reader import Reader
from quality.train.train_data import Listing, corpus_of, measure, mined, read

#: Lists timed for the latency.
LATENCY_LISTS = 200


def held_out(folder: Path, mined_root: Path) -> list[Path]:
    """What the reader in `folder` never saw: the corpora it left out, and the dev slices."""
    provenance = json.loads((folder / "reader.json").read_text(encoding="utf-8"))
    excluded = set(provenance["excluded"])
    left_out = [f for f in mined(mined_root / "train") if corpus_of(f) in excluded]
    return [*left_out, *mined(mined_root / "held-out")]


def latency(model: Reader, listings: Sequence[Listing], pairs: int) -> dict[str, float]:
    times = []
    for item in listings[:LATENCY_LISTS]:
        batch = [(item.alert, p) for p in item.passages[:pairs]]
        t0 = time.perf_counter()
        model.score(batch)
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "pairs": pairs,
        "p50_ms": round(float(np.percentile(times, 50)), 2),
        "p99_ms": round(float(np.percentile(times, 99)), 2),
    }


def measured(folder: Path, mined_root: Path) -> dict[str, Any]:
    model = Reader(folder)
    out: dict[str, Any] = {"held_out_int8": {}}
    timing: list[Listing] = []
    for f in held_out(folder, mined_root):
        listings = read(f)
        logits = [model.score([(x.alert, p) for p in x.passages]) for x in listings]
        out["held_out_int8"][corpus_of(f)] = asdict(measure(listings, logits))
        timing.extend(listings)
    out["latency_one_thread"] = [latency(model, timing, n) for n in (3, 5)]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.train_measure")
    parser.add_argument("folders", type=Path, nargs="+", help="exported model folders")
    parser.add_argument("--mined", type=Path, default=Path(".cache/train/mined"))
    args = parser.parse_args(argv)
    excluded: dict[str, list[str]] = {}
    for folder in args.folders:
        result = measured(folder, args.mined)
        path = folder / "reader.json"
        provenance = json.loads(path.read_text(encoding="utf-8"))
        provenance["measured"] = result
        path.write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
        excluded[folder.name] = provenance["excluded"]
        print(f"train_measure: {folder}: {json.dumps(result)}", file=sys.stderr)
    # Which corpora each reader never saw: the decision's refit scores a corpus with the
    # reader that left it out (quality.transfer).
    folds = args.folders[0].parent / "folds.json"
    folds.write_text(json.dumps(excluded, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
