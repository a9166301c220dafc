"""Retrieval quality on a golden set: the numbers CI guards (docs/RETRIEVAL.md).

`python -m quality.eval --corpus DIR --cases FILE [--out per_case.jsonl] [--split NAME]
[--ablations] [--int8] [--failures] [--gate FILE] [--record FILE]`

The corpus is indexed with the real embedders and `Syncer` into a throwaway collection in an
embedded Qdrant under a temp dir, never the configured data dir. Every case then goes
through what the webhook runs: `enricher.sources.parse_body`, then `Searcher.search_ranked`,
which is `Searcher.search` (status, tier and reported matches, threshold included) returning also
the ranking it decided on (the candidates before the threshold).

Metrics, over the cases of one split, overall and per kind:

- recall@1: status "matched" and the top reported match is the expected runbook, over the
  cases that expect one. The threshold is part of it: a right answer below the bar is a miss.
- recall@3, MRR@5: rank of the expected runbook among the candidates (documents ordered by
  confidence, before the threshold), over the cases that expect one.
- precision: matched cases whose top match is right, over all matched cases.
- no-match accuracy: cases expecting no runbook that come back "no_match".
- false-match rate: cases whose top reported match is wrong (a "matched" null case counts),
  over all cases. This is what makes on-call stop trusting the bot.
- foreign steps: pages whose actionable part comes from outside the matched runbook unit
  (another alert's section of the same page); the target is none.

A case with `expected_section` is scored on sections: its candidates and answers are named
`<path>#<anchor>` (quality.cases.unit_key), so a page's sibling section is a wrong answer.

The last stdout line is one JSON object: metrics of the selected split, per kind, the search
config and corpus size. `--gate` fails (exit 1) when test recall@3 or no-match accuracy falls
more than 0.02 below the numbers recorded with `--record`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from enricher import logs
from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.result import Match
from enricher.search.decide import Ranking, SearchConfig
from enricher.search.feedback import NO_FEEDBACK, Tallies
from enricher.search.searcher import Searcher
from enricher.settings import Settings, load_settings
from quality.cases import Case, CaseError, load_cases, unit_key
from quality.evalindex import EvalIndex, payload_key
from quality.metrics import (
    RANK_DEPTH,
    Outcome,
    baseline,
    by_kind,
    check_gate,
    compute_metrics,
    in_split,
)
from quality.tables import (
    LEFT_OUT,
    cases_only,
    failure_line,
    kind_rows,
    leads_line,
    left_out_only,
    metrics_table,
    splits,
)

log = structlog.get_logger(__name__)


# --- running -------------------------------------------------------------------------------


def ranked_docs(
    ranking: Ranking | None, *, sections: bool = False
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Candidate documents before the decision: paths (unit keys with `sections`) and
    confidences, best first."""
    top = ranking.candidates[:RANK_DEPTH] if ranking is not None else ()
    path = schema.F_PATH
    names = tuple(payload_key(c.payload) if sections else str(c.payload[path]) for c in top)
    return names, tuple(c.score for c in top)


def steps_anchor(match: Match) -> str:
    """The anchor of the actionable section a page shows for `match`, "" when none."""
    if match.steps is not None:
        return match.steps.anchor
    return match.anchor if match.actionable else ""


def foreign_steps(matches: Sequence[Match], index: EvalIndex) -> bool | None:
    """Whether some match shows an actionable part from outside its own runbook unit (None
    when none shows one). The unit comes from the index, by the section's anchor."""
    shown = [(m, steps_anchor(m)) for m in matches]
    units = [(m, index.unit_of.get((m.path, a))) for m, a in shown if a]
    if not units:
        return None
    return any(unit != m.unit_anchor for m, unit in units)


def run_case(
    searcher: Searcher,
    case: Case,
    now: datetime,
    index: EvalIndex,
    *,
    leave_out: bool = False,
) -> Outcome:
    """One case through the webhook's search (see `run_case_ranked`)."""
    return run_case_ranked(searcher, case, now, index, leave_out=leave_out)[0]


def run_case_ranked(
    searcher: Searcher,
    case: Case,
    now: datetime,
    index: EvalIndex,
    *,
    leave_out: bool = False,
    feedback: Tallies = NO_FEEDBACK,
) -> tuple[Outcome, Ranking | None]:
    """One case through the webhook's search, and the ranking it was decided on.
    `leave_out`: with its expected runbook left out of the index, so the right answer
    becomes "no confident match". `feedback`: votes for the alert's name (quality.replay)."""
    sections = case.expected_section is not None
    expected = case.expected_key
    left_out = expected if leave_out else None
    exclude = index.doc_ids.get(left_out) if left_out else None
    result, ranking = searcher.search_ranked(case.alert, now, exclude=exclude, feedback=feedback)
    docs, scores = ranked_docs(ranking, sections=sections)

    def name(match: Match) -> str:
        return unit_key(match.path, match.unit_anchor) if sections else match.path

    top = result.matches[0] if result.matches else None
    shows_steps = top is not None and (top.actionable or top.steps is not None)
    outcome = Outcome(
        id=case.id,
        kind=case.kind,
        split=case.split,
        expected=None if left_out else expected,
        status=result.status,
        tier=result.tier,
        docs=docs,
        scores=scores,
        top=name(top) if top else None,
        leads=tuple(name(m) for m in result.leads),
        left_out=left_out,
        actionable=shows_steps if top is not None and name(top) in index.actionable else None,
        shown=tuple((m.path, m.unit_anchor, steps_anchor(m)) for m in result.matches),
        foreign_steps=foreign_steps([*result.matches, *result.leads], index),
    )
    return outcome, ranking


def run_cases(
    searcher: Searcher, cases: Sequence[Case], index: EvalIndex, *, leave_out: bool = False
) -> list[Outcome]:
    """Every case; with `leave_out`, every case that expects a runbook once more without it."""
    now = datetime.now(UTC)
    outcomes = [run_case(searcher, case, now, index) for case in cases]
    if leave_out:
        outcomes += [
            run_case(searcher, case, now, index, leave_out=True)
            for case in cases
            if case.expected_key in index.doc_ids
        ]
    return outcomes


def ablation_configs(base: SearchConfig) -> list[tuple[str, SearchConfig]]:
    """What each part buys. "bm25 only" and "dense only" rank with one reading; every row
    still decides with the confidence model. The hybrid rows then add the tiers (runbook_url,
    exact name) and the rule's metrics (quoting runbooks, the names reading); rows without
    them have them off, so each row adds one part."""
    plain = replace(base, metric_evidence=False)
    return [
        ("bm25 only", replace(plain, mode="sparse")),
        ("dense only", replace(plain, mode="dense")),
        ("hybrid, no tiers", replace(plain, tiers=False)),
        ("hybrid + tiers, no metrics", plain),
        ("hybrid + tiers", base),
    ]


@dataclass(frozen=True)
class Run:
    name: str
    config: SearchConfig
    outcomes: tuple[Outcome, ...]


@dataclass(frozen=True)
class Evaluation:
    runs: tuple[Run, ...]
    errors: tuple[CaseError, ...]
    #: Cases whose expected runbook is not in the corpus (they can never be found).
    unknown_expected: tuple[Case, ...]
    #: Runbooks the corpus scan could not use ("path: reason"); they are not indexed.
    source_errors: tuple[str, ...]
    documents: int
    chunks: int
    identity: str
    index_seconds: float
    search_seconds: float

    @property
    def main(self) -> Run:
        return self.runs[-1]


def evaluate(
    corpus: Path,
    cases: Sequence[Case],
    errors: Sequence[CaseError] = (),
    *,
    settings: Settings,
    embedder: Embedder | None = None,
    ablations: bool = False,
    leave_out: bool = False,
) -> Evaluation:
    """Index `corpus` once and run every case; the last run is the webhook's configuration.
    `leave_out`: also run every labelled case with its runbook left out (near misses)."""
    started = time.perf_counter()
    with EvalIndex(corpus, settings, embedder) as idx:
        indexed = time.perf_counter()
        base = idx.searcher().config
        configs = ablation_configs(base) if ablations else [("hybrid + tiers", base)]
        runs = tuple(
            Run(
                name,
                config,
                tuple(run_cases(idx.searcher(config), cases, idx, leave_out=leave_out)),
            )
            for name, config in configs
        )
        return Evaluation(
            runs=runs,
            errors=tuple(errors),
            unknown_expected=tuple(
                c
                for c in cases
                if c.expected
                and (c.expected not in idx.paths or c.expected_key not in idx.doc_ids)
            ),
            source_errors=tuple(f"{e.path}: {e.reason}" for e in idx.sync.errors),
            documents=idx.sync.indexed_docs,
            chunks=idx.sync.indexed_chunks,
            identity=idx.embedder.identity.dense,
            index_seconds=indexed - started,
            search_seconds=time.perf_counter() - indexed,
        )


# --- output --------------------------------------------------------------------------------


def config_json(run: Run, evaluation: Evaluation, settings: Settings) -> dict[str, Any]:
    return {
        **asdict(run.config),
        "dense_model": evaluation.identity,
        "chunk_max_chars": settings.chunk_max_chars,
        "chunk_min_chars": settings.chunk_min_chars,
    }


def summary(evaluation: Evaluation, split: str, settings: Settings) -> dict[str, Any]:
    main = in_split(evaluation.main.outcomes, split)
    cases = cases_only(main)
    out: dict[str, Any] = {
        "split": split,
        "overall": compute_metrics(cases).to_json(),
        "by_kind": {k: m.to_json() for k, m in by_kind(cases).items()},
        "by_split": {
            s: compute_metrics(cases_only(in_split(evaluation.main.outcomes, s))).to_json()
            for s in splits(evaluation.main.outcomes)
        },
        "errors": len(evaluation.errors),
        "corpus": {
            "documents": evaluation.documents,
            "chunks": evaluation.chunks,
            "unreadable": len(evaluation.source_errors),
        },
        "config": config_json(evaluation.main, evaluation, settings),
    }
    if left := left_out_only(main):
        out["left_out"] = compute_metrics(left).to_json()
    if len(evaluation.runs) > 1:
        out["ablations"] = {
            r.name: compute_metrics(cases_only(in_split(r.outcomes, split))).to_json()
            for r in evaluation.runs
        }
    return out


def report_text(evaluation: Evaluation, split: str, *, failures: bool = False) -> str:
    main = in_split(evaluation.main.outcomes, split)
    lines = [
        f"corpus: {evaluation.documents} document(s), {evaluation.chunks} chunk(s); "
        f"model {evaluation.identity}; indexed in {evaluation.index_seconds:.1f}s, "
        f"searched in {evaluation.search_seconds:.1f}s",
        "",
        f"split {split}, by kind (R@1 counts only matched answers; R@3/MRR@5 rank candidates;",
        "falseM: wrong runbooks over matched answers; leads: missed cases whose runbook was a",
        "lead; steps: matched pages showing an actionable section when the runbook has one):",
        metrics_table(kind_rows(main)),
        f"pages showing an actionable part from another alert's section: "
        f"{compute_metrics(main).foreign_steps}",
        "",
        "by split:",
        metrics_table(
            [
                (s, compute_metrics(cases_only(in_split(evaluation.main.outcomes, s))))
                for s in splits(evaluation.main.outcomes)
            ]
        ),
    ]
    lines += ["", "no-match pages (leads: closest runbooks named as not confident):"]
    lines += [
        leads_line(s, cases_only(evaluation.main.outcomes))
        for s in splits(evaluation.main.outcomes)
    ]
    if len(evaluation.runs) > 1:
        lines += [
            "",
            f"ablations, split {split} (cases, then {LEFT_OUT} per row):",
            metrics_table(
                [
                    (f"{r.name}{suffix}", compute_metrics(part(in_split(r.outcomes, split))))
                    for r in evaluation.runs
                    for suffix, part in (("", cases_only), (f" / {LEFT_OUT}", left_out_only))
                    if part(in_split(r.outcomes, split))
                ]
            ),
        ]
    if failures:
        lines += ["", f"failures, split {split}:"]
        lines += [failure_line(o) for o in main if not o.ok] or ["  none"]
    return "\n".join(lines)


def write_outcomes(path: Path, outcomes: Iterable[Outcome]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for outcome in outcomes:
            fh.write(json.dumps(outcome.to_json()) + "\n")


def choose_split(requested: str | None, cases: Sequence[Case]) -> str:
    """The requested split, else "test" when the file has one, else "all". A requested split
    that no case carries is a usage error, not an empty report."""
    named = sorted({c.split for c in cases if c.split is not None})
    if requested and requested != "all" and requested not in named:
        raise ConfigError(
            f"no case has split {requested!r}; the file has: {', '.join([*named, 'all'])}"
        )
    if requested:
        return requested
    return "test" if "test" in named else "all"


def prepare(
    args: argparse.Namespace,
) -> tuple[Settings, list[Case], list[CaseError], str]:
    """Shared CLI start for eval and calibrate: settings, cases (errors reported), split."""
    logs.configure(json=False, level="WARNING")
    settings = load_settings()
    if args.int8:
        settings = settings.model_copy(update={"embed_int8": True})
    cases, errors = load_cases(args.cases)
    for error in errors:
        print(f"{args.cases}:{error.line}: {error.reason}", file=sys.stderr)
    return settings, cases, errors, choose_split(args.split, cases)


def add_common_arguments(parser: argparse.ArgumentParser, default_split: str | None) -> None:
    parser.add_argument(
        "--corpus", type=Path, required=True, help="runbook root: <root>/<service>/<alert_name>.md"
    )
    parser.add_argument("--cases", type=Path, required=True, help="golden cases, JSON lines")
    parser.add_argument(
        "--split",
        metavar="NAME",
        default=default_split,
        help="cases to score: a split named in the cases file (dev, test, holdout, ...) or "
        "all (default: %(default)s)",
    )
    parser.add_argument("--int8", action="store_true", help="use the int8 dense model")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quality.eval",
        description="Index a runbook corpus into a throwaway collection and score golden cases.",
    )
    add_common_arguments(parser, None)
    parser.add_argument("--out", type=Path, help="write one JSON line per case here")
    parser.add_argument(
        "--ablations",
        action="store_true",
        help="also score bm25-only, dense-only, and hybrid without tiers or metric evidence",
    )
    parser.add_argument(
        "--leave-out",
        action="store_true",
        help="also run every labelled case with its runbook left out of the index: near "
        "misses made from the cases, whose right answer is no confident match",
    )
    parser.add_argument("--failures", action="store_true", help="list the cases that missed")
    parser.add_argument("--gate", type=Path, help="fail if worse than this recorded baseline")
    parser.add_argument("--record", type=Path, help="write this run's numbers as the baseline")
    args = parser.parse_args(argv)
    try:
        settings, cases, errors, split = prepare(args)
        evaluation = evaluate(
            args.corpus,
            cases,
            errors,
            settings=settings,
            ablations=args.ablations,
            leave_out=args.leave_out,
        )
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in evaluation.source_errors:
        print(f"{args.corpus}: not indexed: {problem}", file=sys.stderr)
    for case in evaluation.unknown_expected:
        print(
            f"{args.cases}:{case.line}: case {case.id} expects {case.expected}, which is not "
            "in the corpus",
            file=sys.stderr,
        )
    if args.out:
        write_outcomes(args.out, evaluation.main.outcomes)
    print(report_text(evaluation, split, failures=args.failures))
    result = summary(evaluation, split, settings)
    current = compute_metrics(cases_only(in_split(evaluation.main.outcomes, split)))
    status = 0
    if args.gate:
        try:
            recorded = json.loads(args.gate.read_text())
        except (OSError, ValueError) as exc:
            print(
                f"error: cannot read the baseline {args.gate}: {exc} (write one with --record)",
                file=sys.stderr,
            )
            return 2
        problems = check_gate(recorded, current, split)
        for problem in problems:
            print(f"gate failed: {problem}", file=sys.stderr)
        status = 1 if problems else 0
        result["gate"] = "failed" if problems else "passed"
    if args.record and status == 0:
        record = baseline(current, split, result["config"])
        args.record.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(result))
    return status


if __name__ == "__main__":
    sys.exit(main())
