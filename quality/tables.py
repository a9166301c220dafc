"""The eval's text tables over scored outcomes: per kind, per split, the lead line and the
failure list. Pure (quality.eval runs the cases; this only lays the numbers out)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from quality.metrics import Metrics, Outcome, by_kind, compute_metrics, in_split, lead_counts

#: The row of the left-out runs: every labelled case again without its runbook.
LEFT_OUT = "left-out near miss"


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def metrics_row(label: str, m: Metrics, width: int) -> str:
    return (
        f"{label:<{width}} {m.cases:>4} {m.expecting:>4} {m.null:>4}  "
        f"{_fmt(m.recall_at_1):>5} {_fmt(m.recall_at_3):>5} {_fmt(m.mrr_at_5, 3):>6} "
        f"{_fmt(m.precision):>5} {_fmt(m.no_match_accuracy):>7} {_fmt(m.false_match_share):>6} "
        f"{_fmt(m.lead_recall):>5} {_fmt(m.actionable_share):>5}"
    )


def metrics_table(rows: Sequence[tuple[str, Metrics]]) -> str:
    width = max([len(label) for label, _ in rows] + [12])
    head = (
        f"{'':<{width}} {'n':>4} {'exp':>4} {'null':>4}  {'R@1':>5} {'R@3':>5} "
        f"{'MRR@5':>6} {'prec':>5} {'noMatch':>7} {'falseM':>6} {'leads':>5} {'steps':>5}"
    )
    return "\n".join([head, *(metrics_row(label, m, width) for label, m in rows)])


def cases_only(outcomes: Iterable[Outcome]) -> list[Outcome]:
    """The cases as labelled (not their left-out near-miss runs)."""
    return [o for o in outcomes if o.left_out is None]


def left_out_only(outcomes: Iterable[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.left_out is not None]


def kind_rows(outcomes: Sequence[Outcome]) -> list[tuple[str, Metrics]]:
    """Per kind, then the left-out near misses (when run), then overall (cases only)."""
    cases = cases_only(outcomes)
    rows = list(by_kind(cases).items())
    if left := left_out_only(outcomes):
        rows.append((LEFT_OUT, compute_metrics(left)))
    return [*rows, ("overall", compute_metrics(cases))]


def splits(outcomes: Iterable[Outcome]) -> list[str]:
    return [*sorted({o.split for o in outcomes if o.split is not None}), "all"]


def leads_line(split: str, outcomes: Iterable[Outcome]) -> str:
    c = lead_counts(in_split(outcomes, split))
    return (
        f"  {split:8} right runbook among the leads {c.found}/{c.missed} of the missed cases; "
        f"leads shown on {c.shown}/{c.quiet} pages that expect no runbook"
    )


def failure_line(o: Outcome) -> str:
    got = f"matched {o.top}" if o.status == "matched" else o.status
    ranked = ", ".join(f"{d} {s:.3f}" for d, s in zip(o.docs[:3], o.scores[:3], strict=True))
    return (
        f"  {o.id} [{o.kind}] expected {o.expected or 'no match'}: {got} "
        f"(tier {o.tier}, rank {o.rank or '-'}; {ranked})"
    )
