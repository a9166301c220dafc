"""Threshold calibration: sweep the confidence threshold on the dev split and suggest a value.

`python -m quality.calibrate --corpus DIR --cases FILE [--split dev] [--from 0.30] [--to 0.90]
[--step 0.01] [--global-offset X] [--plot FILE.svg]`

Each case gets ONE `Searcher.search_ranked` pass, made with the threshold at the bottom of
the sweep; every pair of bars is then applied offline by replaying `decide` (the bar, then
the clear-winner margin) on the stored ranking, with the global bar where only the
unfiltered tier answered. That reproduces `Searcher.search` exactly for the service and
global tiers (a service hit is kept only when no unfiltered document beats it, so raising
the bar moves both together). The alert-name tier is the approximation: at a high bar the
real search may leave it for a document elsewhere that scores higher. The command
therefore re-runs the real search at the suggested values and prints how many cases
agree.

Suggested value: the highest recall@1 (matched and right, over the cases expecting a
runbook) among the thresholds whose false-match rate is at most 5% and whose no-match
accuracy is at least 0.90 in every kind of case that expects no runbook (in-domain alerts
without a runbook are much harder than off-topic ones; an overall figure would hide them).
Of equally good thresholds it takes the middle of the plateau, so a small drift in scores
does not cross an edge. When no threshold meets both bounds, the best F1 of "matched"
(precision and recall@1) is suggested instead, and the output says so.

The two bars are chosen together. The sweep is repeated with the global-tier bar above the
threshold by each of OFFSETS, and a higher offset is taken only when it buys recall@1 that
no lower one reaches; that fixes the threshold. The global bar is then the middle of the
equally good bars at that threshold, for the same reason as above. With `--global-offset`
the offset is fixed instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.search.decide import Ranking, SearchConfig, decide, leads
from enricher.settings import Settings
from quality import plot
from quality.cases import Case
from quality.eval import EvalIndex, add_common_arguments, prepare, ranked_docs, run_cases
from quality.metrics import Metrics, Outcome, by_kind, compute_metrics

MAX_FALSE_MATCH = 0.05
MIN_NO_MATCH = 0.90
OFFSETS = (0.0, 0.02, 0.05, 0.08, 0.10, 0.15, 0.20)


@dataclass(frozen=True)
class Ranked:
    """One case's ranking from the single search pass (None: search was unavailable)."""

    case: Case
    ranking: Ranking | None


@dataclass(frozen=True)
class Point:
    threshold: float
    global_threshold: float
    metrics: Metrics
    #: The lowest no-match accuracy of any kind with null cases (see the module docstring).
    worst_no_match: float | None = None

    @property
    def f1(self) -> float:
        p, r = self.metrics.precision or 0.0, self.metrics.recall_at_1 or 0.0
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def feasible(self) -> bool:
        fm, nm = self.metrics.false_match_rate, self.worst_no_match
        return (fm is None or fm <= MAX_FALSE_MATCH) and (nm is None or nm >= MIN_NO_MATCH)


def outcomes_at(
    ranked: Sequence[Ranked], config: SearchConfig, threshold: float, global_threshold: float
) -> list[Outcome]:
    """What search would report at these thresholds: `decide` replayed on the stored rankings."""
    at = replace(config, threshold=threshold, global_threshold=global_threshold)
    outcomes: list[Outcome] = []
    for r in ranked:
        docs, scores = ranked_docs(r.ranking)
        chosen = decide(r.ranking, at) if r.ranking is not None else ()
        closest = leads(r.ranking, at) if r.ranking is not None and not chosen else ()
        outcomes.append(
            Outcome(
                id=r.case.id,
                kind=r.case.kind,
                split=r.case.split,
                expected=r.case.expected,
                status="matched" if chosen else "no_match",
                tier=r.ranking.tier if r.ranking is not None else None,
                docs=docs,
                scores=scores,
                top=str(chosen[0].payload[schema.F_PATH]) if chosen else None,
                leads=tuple(str(c.payload[schema.F_PATH]) for c in closest),
            )
        )
    return outcomes


def thresholds(start: float, stop: float, step: float) -> list[float]:
    count = round((stop - start) / step) + 1
    return [round(start + i * step, 4) for i in range(max(count, 1))]


def point(
    ranked: Sequence[Ranked], config: SearchConfig, threshold: float, global_threshold: float
) -> Point:
    outcomes = outcomes_at(ranked, config, threshold, global_threshold)
    kinds = [m.no_match_accuracy for m in by_kind(outcomes).values()]
    worst = min((nm for nm in kinds if nm is not None), default=None)
    return Point(threshold, round(global_threshold, 4), compute_metrics(outcomes), worst)


def sweep(
    ranked: Sequence[Ranked], config: SearchConfig, values: Sequence[float], global_offset: float
) -> list[Point]:
    return [point(ranked, config, t, t + global_offset) for t in values]


def suggest(points: Sequence[Point], key: str = "threshold") -> tuple[Point, str]:
    """The point the module docstring describes, and the rule that picked it."""
    feasible = [p for p in points if p.feasible]
    if not feasible:
        return max(points, key=lambda p: p.f1), "best F1 (no value met the bounds)"
    best = max(p.metrics.recall_at_1 or 0.0 for p in feasible)
    plateau = [p for p in feasible if (p.metrics.recall_at_1 or 0.0) >= best - 1e-9]
    plateau.sort(key=lambda p: getattr(p, key))
    return plateau[(len(plateau) - 1) // 2], (
        f"max recall@1 with false-match ≤ {MAX_FALSE_MATCH:.0%} and no-match accuracy "
        f"≥ {MIN_NO_MATCH:.2f} in every kind (middle of {len(plateau)} equal value(s))"
    )


def rank_once(
    idx: EvalIndex, cases: Sequence[Case], base: SearchConfig, lowest: float
) -> list[Ranked]:
    """The single search pass; only the tier choice depends on the (lowest) threshold."""
    searcher = idx.searcher(replace(base, threshold=lowest))
    return [Ranked(case, searcher.search_ranked(case.alert)[1]) for case in cases]


def agreement(
    idx: EvalIndex,
    cases: Sequence[Case],
    ranked: Sequence[Ranked],
    base: SearchConfig,
    point: Point,
) -> int:
    """Cases where the real search at `point` reports what the offline sweep predicted."""
    config = replace(base, threshold=point.threshold, global_threshold=point.global_threshold)
    real = run_cases(idx.searcher(config), cases)
    offline = outcomes_at(ranked, base, point.threshold, point.global_threshold)
    return sum((a.status, a.top) == (b.status, b.top) for a, b in zip(real, offline, strict=True))


def _fmt(value: float | None) -> str:
    return "    –" if value is None else f"{value:5.3f}"


def sweep_table(points: Sequence[Point], chosen: Point) -> str:
    lines = [
        f"{'threshold':>9} {'global':>6} {'matched':>7} {'prec':>5} {'R@1':>5} {'F1':>5} "
        f"{'noMatch':>7} {'worstNM':>7} {'falseM':>6}"
    ]
    for p in points:
        m = p.metrics
        mark = "  <- suggested" if p is chosen else ""
        lines.append(
            f"{p.threshold:9.2f} {p.global_threshold:6.2f} {m.matched:7d} "
            f"{_fmt(m.precision)} {_fmt(m.recall_at_1)} {p.f1:5.3f} "
            f"{_fmt(m.no_match_accuracy):>7} {_fmt(p.worst_no_match):>7} "
            f"{_fmt(m.false_match_rate):>6}{mark}"
        )
    return "\n".join(lines)


def render_svg(points: Sequence[Point], chosen: Point) -> str:
    """The sweep as a chart: precision, recall@1, no-match accuracy, false-match."""
    series: list[tuple[str, str, Callable[[Metrics], float | None]]] = [
        ("precision", "#1f77b4", lambda m: m.precision),
        ("recall@1", "#2ca02c", lambda m: m.recall_at_1),
        ("no-match accuracy", "#9467bd", lambda m: m.no_match_accuracy),
        ("false-match rate", "#d62728", lambda m: m.false_match_rate),
    ]
    lines = [
        plot.Series(name, colour, [(p.threshold, get(p.metrics)) for p in points])
        for name, colour, get in series
    ]
    lo, hi = points[0].threshold, points[-1].threshold
    ticks = thresholds(lo, hi, max(round((hi - lo) / 6, 2), 0.01))
    return plot.line_chart(
        lines, x_range=(lo, hi), x_ticks=ticks, x_label="threshold", marker=chosen.threshold
    )


def suggest_pair(
    ranked: Sequence[Ranked],
    config: SearchConfig,
    values: Sequence[float],
    offsets: Sequence[float],
) -> tuple[list[Point], Point, str]:
    """The sweep at the chosen global offset, its suggested point, and the rule.

    Offsets are tried in increasing order; a later one wins only with strictly higher
    recall@1 among feasible points (or, when none is feasible anywhere, a higher F1).
    """
    best: tuple[list[Point], Point, str] | None = None
    for offset in sorted(offsets):
        points = sweep(ranked, config, values, offset)
        chosen, rule = suggest(points)
        if best is None or _better(chosen, best[1]):
            best = (points, chosen, rule)
    if best is None:
        raise ValueError("no global offset to sweep")
    return best


def _better(candidate: Point, incumbent: Point) -> bool:
    if candidate.feasible != incumbent.feasible:
        return candidate.feasible
    if candidate.feasible:
        recall = (candidate.metrics.recall_at_1 or 0.0, incumbent.metrics.recall_at_1 or 0.0)
        return recall[0] > recall[1] + 1e-9
    return candidate.f1 > incumbent.f1 + 1e-9


@dataclass(frozen=True)
class Calibration:
    ranked: tuple[Ranked, ...]
    #: The threshold sweep at the chosen global offset (the chart and the main table).
    points: tuple[Point, ...]
    chosen: Point
    rule: str
    #: The suggested threshold with each global-tier bar of OFFSETS, and the one suggested.
    by_offset: tuple[Point, ...]
    suggested: Point
    #: Cases where the real search at `suggested` agrees with the offline sweep.
    agree: int

    def to_json(self, split: str) -> dict[str, Any]:
        return {
            "split": split,
            "threshold": self.suggested.threshold,
            "global_threshold": self.suggested.global_threshold,
            "rule": self.rule,
            "metrics": self.suggested.metrics.to_json(),
            "agreement": [self.agree, len(self.ranked)],
        }


def calibrate(
    corpus: Path,
    cases: Sequence[Case],
    *,
    settings: Settings,
    values: Sequence[float],
    global_offset: float | None = None,
    embedder: Embedder | None = None,
) -> Calibration:
    """Sweep, suggest, and check the suggestion against the real search (one index)."""
    with EvalIndex(corpus, settings, embedder) as idx:
        base = idx.searcher().config
        offsets = OFFSETS if global_offset is None else (global_offset,)
        ranked = rank_once(idx, cases, base, min(values))
        points, chosen, rule = suggest_pair(ranked, base, values, offsets)
        by_offset = [point(ranked, base, chosen.threshold, chosen.threshold + o) for o in offsets]
        suggested, _ = suggest(by_offset, key="global_threshold")
        agree = agreement(idx, cases, ranked, base, suggested)
    return Calibration(
        tuple(ranked), tuple(points), chosen, rule, tuple(by_offset), suggested, agree
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quality.calibrate",
        description="Sweep the confidence threshold on the dev split and suggest a value.",
    )
    add_common_arguments(parser, "dev")
    parser.add_argument("--from", dest="start", type=float, default=0.30)
    parser.add_argument("--to", dest="stop", type=float, default=0.90)
    parser.add_argument("--step", type=float, default=0.01)
    parser.add_argument(
        "--global-offset",
        type=float,
        help="fix the unfiltered-tier bar minus the threshold (default: try each of "
        + ", ".join(f"{o:g}" for o in OFFSETS)
        + ")",
    )
    parser.add_argument("--plot", type=Path, help="write the sweep as an SVG line chart")
    args = parser.parse_args(argv)
    try:
        settings, cases, _, split = prepare(args)
        selected = [c for c in cases if split == "all" or c.split == split]
        if not selected:
            print(f"error: no usable cases in split {split!r} of {args.cases}", file=sys.stderr)
            return 2
        result = calibrate(
            args.corpus,
            selected,
            settings=settings,
            values=thresholds(args.start, args.stop, args.step),
            global_offset=args.global_offset,
        )
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    chosen = result.chosen
    tiers = Counter(r.ranking.tier if r.ranking else "unavailable" for r in result.ranked)
    print(
        f"split {split}: {len(selected)} case(s); tiers at the lowest bar: "
        + ", ".join(f"{t} {n}" for t, n in sorted(tiers.items()))
    )
    offset = chosen.global_threshold - chosen.threshold
    print(f"threshold sweep, global-tier bar = threshold + {offset:.2f}:")
    print(sweep_table(result.points, chosen))
    suggested = result.suggested
    print(
        f"\nsuggested threshold {suggested.threshold:.2f} "
        f"(global {suggested.global_threshold:.2f}): {result.rule}"
    )
    print(f"\nglobal-tier bar at threshold {suggested.threshold:.2f}:")
    print(sweep_table(result.by_offset, suggested))
    print(
        f"\noffline sweep agrees with Searcher.search at the suggestion on "
        f"{result.agree}/{len(selected)} case(s)"
    )
    if args.plot:
        args.plot.write_text(render_svg(result.points, chosen))
    print(json.dumps(result.to_json(split)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
