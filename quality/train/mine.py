"""Hard negatives for the reader, mined with the product's own search:
`python -m quality.train.mine`.

A re-ranker learns most from the candidates the pipeline actually confuses. Each corpus of
the training collection (`.cache/train/<corpus>/{corpus/, cases.jsonl}`, quality.train.
collect) is indexed with the real ingest into a throwaway index (quality.evalindex), and
every case goes through the webhook's search (quality.eval.run_case_ranked): as written,
and with its expected runbook left out of the index (the near miss an alert makes when
nobody wrote its runbook). A search the decision model decides (not the runbook_url or
exact-name tiers, where the reader is never asked) gives one list: its first `DEPTH`
candidates in fused order, each as the reader's (alert, passage) pair built by
`enricher.search.reader.texts` (so training reads exactly what serving reads), labelled 1
for the expected runbook (unit, on a page of alert sections) and 0 otherwise. The search
is decided by `Unranked`, which gives every candidate the same probability, so the page's
most-probable-first order is the fused order: the lists, and the siblings the reader
trains against, do not depend on the shipped decision (confidence.json). Near misses,
left-out twins and noise give lists with no positive: the reader must score them all low.

`--held-out NAME CORPUS CASES` mines a corpus for measuring only (the released dev slices):
its lists go to `<out>/held-out/`, which training never reads.

One JSON line per list: corpus, case, kind, left_out, alert, passages, keys, labels.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from enricher import logs
from enricher.search import reader
from enricher.search.confidence import Model
from enricher.search.decide import NAMED_TIERS, Candidate, SearchConfig
from enricher.search.query import build_query
from enricher.settings import Settings, load_settings
from quality.calibrate import neutral_model
from quality.cases import Case, load_cases
from quality.eval import run_case_ranked
from quality.evalindex import EvalIndex, payload_key
from quality.train.train_data import Listing

#: Candidates kept per search, in fused order: the reader reads the first READER_TOP_K of
#: the scored ones at run time; a few more give it the siblings just below.
DEPTH = 8
TRAIN = Path(".cache/train")
TRAIN_DIR = "train"
HELD_OUT_DIR = "held-out"


@dataclass(frozen=True)
class Unranked(Model):
    """A decision that gives every candidate the same probability, the runbook of the
    alert's rule at another severity included (Model.probability caps that one), so that
    the page's most-probable-first order is the fused order."""

    @classmethod
    def of(cls, model: Model) -> Unranked:
        return cls(**{f.name: getattr(model, f.name) for f in fields(model)})

    def probability(self, values: Mapping[str, float]) -> float:
        return 0.5


@dataclass(frozen=True)
class Source:
    name: str
    corpus: Path
    cases: Path


def mine(source: Source, settings: Settings, depth: int = DEPTH) -> Iterator[Listing]:
    """Every case of `source` and its left-out twin through the search, as listings."""
    cases, errors = load_cases(source.cases)
    if errors:
        print(f"mine: {source.name}: {len(errors)} unusable case lines skipped", file=sys.stderr)
    now = datetime.now(UTC)
    with EvalIndex(source.corpus, settings) as idx:
        searcher = idx.searcher(SearchConfig.from_settings(settings), Unranked.of(neutral_model()))
        for case in cases:
            twins = [False, True] if case.expected_key in idx.doc_ids else [False]
            for leave_out in twins:
                _, ranking = run_case_ranked(searcher, case, now, idx, leave_out=leave_out)
                if ranking is None or not ranking.candidates or ranking.tier in NAMED_TIERS:
                    continue
                yield listing(source.name, case, leave_out, ranking.candidates[:depth])


def listing(corpus: str, case: Case, leave_out: bool, candidates: Sequence[Candidate]) -> Listing:
    """The reader's view of one search (pure): label 1 for the case's runbook, unless it was
    left out."""
    query = build_query(case.alert)
    pairs = [reader.texts(query, c.payload) for c in candidates]
    keys = tuple(payload_key(c.payload) for c in candidates)
    expected = None if leave_out else case.expected_key
    return Listing(
        corpus=corpus,
        case=case.id,
        kind=case.kind,
        left_out=leave_out,
        alert=reader.alert_text(query),
        passages=tuple(p for _, p in pairs),
        keys=keys,
        labels=tuple(int(k == expected) for k in keys),
    )


def collection(root: Path) -> list[Source]:
    """The corpora the collector has built: every folder of `root` with a corpus and cases."""
    found = [Source(d.name, d / "corpus", d / "cases.jsonl") for d in sorted(root.iterdir())]
    return [s for s in found if s.corpus.is_dir() and s.cases.is_file()]


def fresh(path: Path, source: Source) -> bool:
    """Mined after the corpus and its cases last changed (the collector rebuilds them)."""
    if not path.is_file():
        return False
    inputs = [source.cases, source.corpus, *source.corpus.rglob("*")]
    return path.stat().st_mtime > max(p.stat().st_mtime for p in inputs)


def write(path: Path, listings: Iterator[Listing]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # two miners never share one
    count = 0
    with tmp.open("w", encoding="utf-8") as out:
        for item in listings:
            out.write(json.dumps(asdict(item), sort_keys=True) + "\n")
            count += 1
    tmp.replace(path)
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.mine", description=__doc__)
    parser.add_argument("--root", type=Path, default=TRAIN, help="the training collection")
    parser.add_argument("--out", type=Path, default=TRAIN / "mined")
    parser.add_argument("--depth", type=int, default=DEPTH)
    parser.add_argument("--only", nargs="*", default=None, help="mine these corpora only")
    parser.add_argument(
        "--held-out",
        nargs=3,
        action="append",
        default=[],
        metavar=("NAME", "CORPUS", "CASES"),
        help="a corpus mined for measuring only (never trained on)",
    )
    parser.add_argument("--force", action="store_true", help="mine again what is mined and fresh")
    args = parser.parse_args(argv)
    logs.configure(json=False, level="WARNING")
    settings = load_settings()
    jobs = [
        (s, args.out / TRAIN_DIR / f"{s.name}.jsonl")
        for s in collection(args.root)
        if args.only is None or s.name in args.only
    ]
    jobs += [
        (Source(n, Path(c), Path(f)), args.out / HELD_OUT_DIR / f"{n}.jsonl")
        for n, c, f in args.held_out
    ]
    for source, path in jobs:
        if fresh(path, source) and not args.force:
            continue
        count = write(path, mine(source, settings, args.depth))
        print(f"mine: {source.name}: {count} lists -> {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
