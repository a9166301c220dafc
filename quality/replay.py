"""Replaying on-call feedback: what recorded votes do to the next page of the same alert.

`python -m quality.replay --corpus DIR --cases FILE [--votes FILE] [--kind KIND]`

The votes come from a feedback export (`python -m enricher.feedback export`: each case's
`feedback` field holds its page's votes per runbook path), or, without `--votes`, they are
simulated: every case is searched once, and an on-call who knows the right runbook votes
on what the page showed, "right" on the expected runbook when it was a match or a lead and
"wrong" on every other runbook shown. Every case is then searched again with the votes for
its alert name (enricher.search.feedback), as the next page of that alert would be. The
report puts both runs side by side: recall@1, recall@3, the no-match accuracy, the
false-match share and the right runbook's mean rank, and lists the cases whose rank moved.
The last stdout line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from enricher.errors import ConfigError
from enricher.search.feedback import Tallies, Tally
from enricher.search.names import name_key
from quality.cases import Case
from quality.eval import prepare, run_case_ranked
from quality.evalindex import EvalIndex
from quality.metrics import RANK_DEPTH, Outcome, compute_metrics
from quality.tables import metrics_table

#: Alert name key -> runbook path -> votes.
Book = dict[str, dict[str, Tally]]


def _add(book: Book, alert_name: str, path: str, *, right: int = 0, wrong: int = 0) -> None:
    key = name_key(alert_name)
    if not key:
        return
    old = book.setdefault(key, {}).get(path, Tally())
    book[key][path] = Tally(old.right + right, old.wrong + wrong)


def simulate(cases: Sequence[Case], outcomes: Sequence[Outcome]) -> Book:
    """The votes an on-call who knows each case's right runbook casts on its page."""
    book: Book = {}
    for case, outcome in zip(cases, outcomes, strict=True):
        shown = [outcome.top] if outcome.status == "matched" and outcome.top else []
        shown = [*shown, *outcome.leads]
        for path in dict.fromkeys(shown):
            if path == case.expected:
                _add(book, case.alert.alert_name, path, right=1)
            else:
                _add(book, case.alert.alert_name, path, wrong=1)
    return book


def book_from_export(path: Path, cases: Sequence[Case]) -> Book:
    """The votes in an exported feedback file (its cases' `feedback` fields)."""
    names = {case.id: case.alert.alert_name for case in cases}
    book: Book = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        votes = data.get("feedback") if isinstance(data, dict) else None
        name = names.get(str(data.get("id"))) if isinstance(data, dict) else None
        if not isinstance(votes, dict) or name is None:
            continue
        for verdict in ("right", "wrong"):
            for doc_path, count in (votes.get(verdict) or {}).items():
                _add(book, name, str(doc_path), **{verdict: int(count)})
    return book


def tallies_for(book: Book, alert_name: str, doc_ids: Mapping[str, str]) -> Tallies:
    """The votes for an alert's name, keyed by the doc ids of this index."""
    by_path = book.get(name_key(alert_name), {})
    return {doc_ids[path]: tally for path, tally in by_path.items() if path in doc_ids}


@dataclass(frozen=True)
class Replay:
    before: tuple[Outcome, ...]
    after: tuple[Outcome, ...]
    book: Book


def replay(index: EvalIndex, cases: Sequence[Case], book: Book | None = None) -> Replay:
    """Every case without votes, then with `book` (simulated from the first run if None)."""
    searcher = index.searcher()
    now = datetime.now(UTC)
    before = [run_case_ranked(searcher, case, now, index)[0] for case in cases]
    votes = simulate(cases, before) if book is None else book
    after = [
        run_case_ranked(
            searcher,
            case,
            now,
            index,
            feedback=tallies_for(votes, case.alert.alert_name, index.doc_ids),
        )[0]
        for case in cases
    ]
    return Replay(tuple(before), tuple(after), votes)


def mean_rank(outcomes: Iterable[Outcome]) -> float | None:
    """Mean rank of the right runbook over the cases expecting one (RANK_DEPTH + 1 when it
    is not among the candidates)."""
    ranks = [o.rank or RANK_DEPTH + 1 for o in outcomes if o.expected is not None]
    return sum(ranks) / len(ranks) if ranks else None


def moves(result: Replay) -> list[tuple[str, int | None, int | None]]:
    """(case id, rank before, rank after) for every case whose right runbook moved."""
    return [
        (b.id, b.rank, a.rank)
        for b, a in zip(result.before, result.after, strict=True)
        if b.rank != a.rank
    ]


def summary(result: Replay) -> dict[str, Any]:
    out: dict[str, Any] = {
        "votes": sum(t.right + t.wrong for per in result.book.values() for t in per.values()),
        "alert_names": len(result.book),
    }
    for label, outcomes in (("before", result.before), ("after", result.after)):
        out[label] = {**compute_metrics(outcomes).to_json(), "mean_rank": mean_rank(outcomes)}
    out["moved"] = [
        {"id": case, "rank_before": b, "rank_after": a} for case, b, a in moves(result)
    ]
    return out


def report_text(result: Replay) -> str:
    rows = [
        ("before votes", compute_metrics(result.before)),
        ("after votes", compute_metrics(result.after)),
    ]
    ranks = [mean_rank(result.before), mean_rank(result.after)]
    lines = [
        metrics_table(rows),
        "",
        "mean rank of the right runbook (missing counts as "
        f"{RANK_DEPTH + 1}): " + " -> ".join("–" if r is None else f"{r:.2f}" for r in ranks),
    ]
    moved = moves(result)
    lines.append(f"cases whose right runbook moved: {len(moved)}")
    lines += [f"  {case}: rank {b or '-'} -> {a or '-'}" for case, b, a in moved]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.replay", description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True, help="runbook root")
    parser.add_argument("--cases", type=Path, required=True, help="golden cases, JSON lines")
    parser.add_argument("--votes", type=Path, help="feedback export whose votes to replay")
    parser.add_argument("--kind", help="only the cases of this kind (e.g. renamed)")
    parser.add_argument("--split", default="all", help="cases of this split (default all)")
    parser.add_argument("--int8", action="store_true", help="use the int8 dense model")
    args = parser.parse_args(argv)
    try:
        settings, cases, _, split = prepare(args)
        chosen = [
            c
            for c in cases
            if (split == "all" or c.split == split) and args.kind in (None, c.kind)
        ]
        book = book_from_export(args.votes, cases) if args.votes else None
        with EvalIndex(args.corpus, settings) as index:
            result = replay(index, chosen, book)
    except (ConfigError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report_text(result))
    print(json.dumps(summary(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
