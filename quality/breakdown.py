"""Where the pages go wrong, corpus by corpus: `python -m quality.breakdown`.

The held-out table (quality.transfer --compare) says how often a page is right; this says
what happened on the others, which is what decides the next step. An alert whose
runbook is indexed ends in one of five places:

- `right`: matched, and its runbook first;
- `unsure`: no match, though its runbook was first on the page (a confidence failure: the
  order was right, the decision did not believe it);
- `below`: no match, its runbook among the scored candidates but not first (a ranking
  failure the reader could fix);
- `absent`: its runbook not among them at all (retrieval);
- `wrong`: matched to another runbook (a sibling, usually: what misleads at 03:00).

An alert with no runbook (a near miss, noise, or a labelled alert run with its runbook left
out) ends `quiet` (no match) or `matched`. With `--rows FILE`, every page that did not end
`right` or `quiet` is written as a JSON line to read one by one (docs/RETRIEVAL.md: read
the wrong and abstained rows before training anything).

The searches, the decision and the readers are those of quality.transfer (same cache, same
held-out rule for the readers), so the counts add up to its table's cells.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from enricher import logs
from enricher.search.confidence import MODEL_PATH, load_model
from quality import reading
from quality.pages import NOISE, Page
from quality.transfer import REPO, Searches, collect_all, pages, read_all

#: Where an alert with a runbook can end, in the order of the table.
POSITIVE = ("right", "unsure", "below", "absent", "wrong")
#: Where an alert without one can end, per kind of alert.
NEGATIVE = ("left-out", "near miss", "noise")


def kind_of(page: Page) -> str:
    """`positive`, or which kind of alert without a runbook the page answered."""
    outcome = page.outcome
    if outcome.left_out is not None:
        return "left-out"
    if outcome.expected is not None:
        return "positive"
    return "noise" if outcome.kind in NOISE else "near miss"


def where(page: Page) -> str:
    """Where one page ended (the module docstring's places)."""
    outcome = page.outcome
    if kind_of(page) != "positive":
        return "matched" if page.matched else "quiet"
    if page.first_right:
        return "right" if page.matched else "unsure"
    if page.matched:
        return "wrong"
    return "below" if outcome.expected in outcome.docs else "absent"


def breakdown(shown: Sequence[Page]) -> Counter[str]:
    """Pages per place: `right`, `unsure`... for alerts with a runbook, and `<kind> matched`
    or `<kind> quiet` for the others."""
    counts: Counter[str] = Counter()
    for page in shown:
        kind = kind_of(page)
        place = where(page)
        counts[place if kind == "positive" else f"{kind} {place}"] += 1
    return counts


def table(rows: Sequence[tuple[str, Counter[str]]]) -> str:
    """One line per corpus: the positives' places (count and share), then how many alerts
    without a runbook were matched, of how many."""
    head = [f"{'corpus':<19}", *(f"{p:>12}" for p in POSITIVE), *(f"{n:>20}" for n in NEGATIVE)]
    lines = [" ".join(head)]
    for name, counts in rows:
        positives = sum(counts[p] for p in POSITIVE)
        cells = [f"{name[:19]:<19}"]
        for place in POSITIVE:
            share = counts[place] / positives if positives else 0.0
            cells.append(f"{counts[place]:>5} ({share:4.2f})")
        for kind in NEGATIVE:
            matched = counts[f"{kind} matched"]
            total = matched + counts[f"{kind} quiet"]
            cells.append(f"{f'{matched} of {total} matched':>20}")
        lines.append(" ".join(cells))
    return "\n".join(lines)


def row(corpus: str, page: Page) -> dict[str, object]:
    outcome = page.outcome
    return {
        "corpus": corpus,
        "id": outcome.id,
        "kind": outcome.kind,
        "where": where(page),
        "probability": None if page.probability is None else round(page.probability, 4),
        "expected": outcome.expected or outcome.left_out,
        "left_out": outcome.left_out is not None,
        "first": list(outcome.docs[:3]),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.breakdown", description=__doc__)
    parser.add_argument("--cache", type=Path, default=REPO / ".cache" / "transfer")
    parser.add_argument("--synthetic", type=int, default=300, metavar="N")
    parser.add_argument("--readers", type=Path, metavar="DIR", help="as quality.transfer's")
    parser.add_argument("--reader-top-k", type=int, default=3, metavar="K")
    parser.add_argument("--rerank-cos", type=float, metavar="LAMBDA")
    parser.add_argument("--today", type=Path, default=MODEL_PATH, help="the decision")
    parser.add_argument("--rows", type=Path, metavar="FILE", help="write the failed pages")
    args = parser.parse_args(argv)
    logs.configure(json=False, level="WARNING")
    today = load_model(args.today)
    bar = float(today.provenance.get("bar", 0.3))
    collected = collect_all(args.cache, args.synthetic, refresh=False, readers=args.readers)
    if args.readers is None:
        searches = [Searches(s.corpus, reading.read_run(s.run, today)) for s in collected]
    else:
        searches = read_all(
            collected, args.readers, args.cache, args.reader_top_k, today, args.rerank_cos
        )
    counted: list[tuple[str, Counter[str]]] = []
    failed: list[dict[str, object]] = []
    for s in searches:
        shown = pages(s.scored(s.corpus.score_split), today, bar)
        counted.append((s.corpus.name, breakdown(shown)))
        failed += [row(s.corpus.name, p) for p in shown if where(p) not in ("right", "quiet")]
    print(table(counted))
    if args.rows is not None:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in failed), encoding="utf-8")
        print(f"{len(failed)} failed page(s) in {args.rows}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
