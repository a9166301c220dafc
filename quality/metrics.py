"""Retrieval-quality metrics over case outcomes, and the CI gate. Pure.

The definitions of the metrics are in the quality.eval docstring and docs/RETRIEVAL.md;
quality.eval runs the cases through the search and reports what this module computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from enricher.result import Status, Tier

RANK_DEPTH = 5
#: Metrics the CI gate holds, with the direction that is better.
GATED: tuple[tuple[str, int], ...] = (
    ("recall@1", 1),
    ("recall@3", 1),
    ("no_match_accuracy", 1),
    ("false_match_share", -1),
)
GATE_TOLERANCE = 0.02


@dataclass(frozen=True)
class Outcome:
    """What the search returned for one case: one line of `--out`."""

    id: str
    kind: str
    split: str | None
    expected: str | None
    status: Status
    tier: Tier | None
    #: Candidate documents, best first (before the threshold), at most RANK_DEPTH.
    docs: tuple[str, ...]
    scores: tuple[float, ...]
    #: Path of the top reported match when status is "matched".
    top: str | None = None
    #: With "no_match": paths of the runbooks named as leads (not confident), best first.
    leads: tuple[str, ...] = ()
    #: The case was run with its expected runbook left out of the index: a near miss made
    #: from a labelled case (`expected` is then None; `left_out` names the runbook).
    left_out: str | None = None
    #: For a matched page whose runbook has a section saying what to do: whether the page
    #: shows one. None otherwise.
    actionable: bool | None = None
    #: Each reported match: (path, its alert section's anchor or "", the anchor of the
    #: actionable section the page shows for it or "").
    shown: tuple[tuple[str, str, str], ...] = ()
    #: Some match shows an actionable part from outside its own runbook unit (another
    #: alert's section of the same page). None when no match shows one.
    foreign_steps: bool | None = None

    @property
    def rank(self) -> int | None:
        if self.expected is None or self.expected not in self.docs:
            return None
        return self.docs.index(self.expected) + 1

    @property
    def right(self) -> bool:
        return self.status == "matched" and self.expected is not None and self.top == self.expected

    @property
    def ok(self) -> bool:
        """The answer on-call should get: the right runbook, or "no match" when none fits."""
        return self.right or (self.expected is None and self.status == "no_match")

    @property
    def wrong(self) -> bool:
        return self.status == "matched" and self.top != self.expected

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "tier": self.tier,
            "docs": list(self.docs),
            "scores": [round(s, 4) for s in self.scores],
            "expected": self.expected,
            "kind": self.kind,
            "split": self.split,
            "leads": list(self.leads),
            "left_out": self.left_out,
            "actionable": self.actionable,
            "matches": [
                {"doc": doc, "section": section, "steps_section": steps}
                for doc, section, steps in self.shown
            ],
            "foreign_steps": self.foreign_steps,
        }


@dataclass(frozen=True)
class Metrics:
    cases: int
    expecting: int
    null: int
    matched: int
    recall_at_1: float | None
    recall_at_3: float | None
    mrr_at_5: float | None
    precision: float | None
    no_match_accuracy: float | None
    false_match_rate: float | None
    #: Of the cases expecting a runbook that got "no_match": the right one among the leads.
    lead_recall: float | None = None
    #: Of the cases expecting none that got "no_match": pages that still named leads.
    null_leads_shown: float | None = None
    #: Wrong top runbooks over all matched answers (1 - precision): what makes on-call stop
    #: trusting the bot.
    false_match_share: float | None = None
    #: Matched pages whose runbook has an actionable section that show one.
    actionable_share: float | None = None
    #: Pages showing an actionable part from another alert's section (the target is 0).
    foreign_steps: int = 0

    def to_json(self) -> dict[str, Any]:
        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return {
            "cases": self.cases,
            "expecting": self.expecting,
            "null": self.null,
            "matched": self.matched,
            "recall@1": r(self.recall_at_1),
            "recall@3": r(self.recall_at_3),
            "mrr@5": r(self.mrr_at_5),
            "precision": r(self.precision),
            "no_match_accuracy": r(self.no_match_accuracy),
            "false_match_rate": r(self.false_match_rate),
            "lead_recall": r(self.lead_recall),
            "null_leads_shown": r(self.null_leads_shown),
            "false_match_share": r(self.false_match_share),
            "actionable_share": r(self.actionable_share),
            "foreign_steps": self.foreign_steps,
        }


def _ratio(hits: float, total: int) -> float | None:
    return hits / total if total else None


@dataclass(frozen=True)
class LeadCounts:
    """How the leads of no-match pages did (enricher.search.leads)."""

    #: Cases expecting a runbook that got "no_match", and those whose runbook was a lead.
    missed: int
    found: int
    #: Cases expecting none that got "no_match", and those whose page named any lead.
    quiet: int
    shown: int


def lead_counts(outcomes: Iterable[Outcome]) -> LeadCounts:
    no_match = [o for o in outcomes if o.status == "no_match"]
    missed = [o for o in no_match if o.expected is not None]
    quiet = [o for o in no_match if o.expected is None]
    return LeadCounts(
        missed=len(missed),
        found=sum(o.expected in o.leads for o in missed),
        quiet=len(quiet),
        shown=sum(bool(o.leads) for o in quiet),
    )


def compute_metrics(outcomes: Sequence[Outcome]) -> Metrics:
    expecting = [o for o in outcomes if o.expected is not None]
    null = [o for o in outcomes if o.expected is None]
    matched = [o for o in outcomes if o.status == "matched"]
    ranks = [o.rank for o in expecting]
    leads = lead_counts(outcomes)
    return Metrics(
        cases=len(outcomes),
        expecting=len(expecting),
        null=len(null),
        matched=len(matched),
        recall_at_1=_ratio(sum(o.right for o in expecting), len(expecting)),
        recall_at_3=_ratio(sum(r is not None and r <= 3 for r in ranks), len(expecting)),
        mrr_at_5=_ratio(sum(1 / r for r in ranks if r is not None and r <= 5), len(expecting)),
        precision=_ratio(sum(o.right for o in matched), len(matched)),
        no_match_accuracy=_ratio(sum(o.status == "no_match" for o in null), len(null)),
        false_match_rate=_ratio(sum(o.wrong for o in outcomes), len(outcomes)),
        lead_recall=_ratio(leads.found, leads.missed),
        null_leads_shown=_ratio(leads.shown, leads.quiet),
        false_match_share=_ratio(sum(o.wrong for o in matched), len(matched)),
        actionable_share=_ratio(
            sum(o.actionable is True for o in outcomes),
            sum(o.actionable is not None for o in outcomes),
        ),
        foreign_steps=sum(o.foreign_steps is True for o in outcomes),
    )


def in_split(outcomes: Iterable[Outcome], split: str) -> list[Outcome]:
    return [o for o in outcomes if split == "all" or o.split == split]


def by_kind(outcomes: Sequence[Outcome]) -> dict[str, Metrics]:
    kinds = sorted({o.kind for o in outcomes})
    return {k: compute_metrics([o for o in outcomes if o.kind == k]) for k in kinds}


# --- gate ----------------------------------------------------------------------------------


def check_gate(
    recorded: Mapping[str, Any], current: Metrics, split: str, tolerance: float = GATE_TOLERANCE
) -> list[str]:
    """Reasons the gate fails (empty when it passes): a gated metric dropped too far."""
    if recorded.get("split", split) != split:
        return [
            f"baseline was recorded on split {recorded.get('split')!r}, this run "
            f"measured {split!r}: rerun with --split {recorded.get('split')}"
        ]
    numbers = recorded.get("metrics", {})
    now = current.to_json()
    failures: list[str] = []
    for name, better in GATED:
        before = numbers.get(name)
        if before is None:
            continue
        if now[name] is None:
            failures.append(f"{name}: recorded {before:.3f}, now not measurable (no such cases)")
        elif (before - now[name]) * better > tolerance:
            moved = "fell" if better > 0 else "rose"
            failures.append(
                f"{name} on the {split} split {moved} to {now[name]:.3f} from the "
                f"recorded {before:.3f} (allowed change {tolerance:.2f})"
            )
    return failures


def baseline(current: Metrics, split: str, config: Mapping[str, Any]) -> dict[str, Any]:
    return {"split": split, "metrics": current.to_json(), "config": dict(config)}
