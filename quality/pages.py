"""What the pages said, scored the way on-call reads them. Pure.

A page either matches (a runbook shown as the alert's, with its probability) or says "no
confident match", naming the closest runbooks as leads. On-call reads the first runbook on
the page whichever it is, so besides "matched and right" this scores "first on the page
right" (matched, or the leading lead), and whether the shown probability means what it
says: the expected calibration error (ECE) of the first runbook's probability over 10
equal-width bins, and the bins themselves for a reliability diagram.

Kinds of case are those of the golden sets and the real dev slices (golden/README.md,
../shared/data/*/README.md): exact names, renamed alerts, renamed and reworded ones, near
misses (a real alert with no runbook), noise (another domain). Every labelled case also
runs with its runbook left out of the index (`left_out`), the near miss of an alert whose
runbook nobody wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quality.metrics import Outcome

RENAMED = frozenset({"paraphrase", "renamed", "renamed_upstream"})
REWORDED = frozenset({"paraphrase_rewritten", "reworded"})
NEAR_MISS = frozenset({"near_miss", "no_runbook"})
NOISE = frozenset({"noise", "off_topic"})
ECE_BINS = 10


@dataclass(frozen=True)
class Page:
    """One search as its page showed it."""

    outcome: Outcome
    #: The first runbook's shown probability (None: the page named no runbook at all).
    probability: float | None
    matched: bool
    #: The first runbook of the ranking is named on the page (a match, or the first lead).
    shown: bool

    @property
    def first_right(self) -> bool:
        return first_right(self.outcome)


def first_right(outcome: Outcome) -> bool:
    return outcome.expected is not None and outcome.docs[:1] == (outcome.expected,)


def from_outcome(outcome: Outcome) -> Page:
    """The page a search's outcome stands for (quality.eval's `--out` rows)."""
    if not outcome.docs or outcome.status == "unavailable":
        return Page(outcome, None, False, False)
    matched = outcome.status == "matched"
    shown = matched or outcome.leads[:1] == outcome.docs[:1]
    return Page(outcome, outcome.scores[0] if outcome.scores else None, matched, shown)


@dataclass(frozen=True)
class Scores:
    positives: int
    right: float | None
    first: float | None
    renamed: float | None
    reworded: float | None
    false_match: float | None
    near_miss: float | None
    left_out: float | None
    noise: float | None
    ece: float | None

    def cells(self) -> tuple[float | None, ...]:
        return (
            self.right,
            self.first,
            self.renamed,
            self.reworded,
            self.false_match,
            self.near_miss,
            self.left_out,
            self.noise,
            self.ece,
        )

    def row(self) -> str:
        return " ".join(f"{_fmt(v):>6}" for v in self.cells())

    def to_json(self) -> dict[str, float | int | None]:
        names = (
            "matched_right",
            "first_on_page",
            "renamed",
            "reworded",
            "false_match",
            "near_miss_no_match",
            "left_out_no_match",
            "noise_no_match",
            "ece",
        )
        values = {
            n: None if v is None else round(v, 4) for n, v in zip(names, self.cells(), strict=True)
        }
        return {"positives": self.positives, **values}


HEADER = " ".join(
    f"{h:>6}"
    for h in ("right", "first", "renam", "rewrd", "falseM", "nearM", "leftO", "noise", "ECE")
)
LEGEND = (
    "right: positives matched and right; first: first runbook on the page right (match or "
    "lead);\nrenam / rewrd: renamed / renamed and reworded alerts matched and right; falseM: "
    "wrong runbooks\nover matched answers; nearM / leftO / noise: no-match on near misses, "
    "left-out near misses,\nnoise; ECE: calibration error of the first runbook's probability"
)


def _share(hits: Iterable[bool]) -> float | None:
    values = list(hits)
    return sum(values) / len(values) if values else None


def score(shown: Sequence[Page]) -> Scores:
    cases = [p for p in shown if p.outcome.left_out is None]
    positives = [p for p in cases if p.outcome.expected is not None]

    def right(page: Page) -> bool:
        return page.matched and page.first_right

    def of(kinds: frozenset[str]) -> list[Page]:
        return [p for p in positives if p.outcome.kind in kinds]

    return Scores(
        positives=len(positives),
        right=_share(right(p) for p in positives),
        first=_share(p.shown and p.first_right for p in positives),
        renamed=_share(right(p) for p in of(RENAMED)),
        reworded=_share(right(p) for p in of(REWORDED)),
        false_match=_share(not p.first_right for p in cases if p.matched),
        near_miss=_share(not p.matched for p in cases if p.outcome.kind in NEAR_MISS),
        left_out=_share(not p.matched for p in shown if p.outcome.left_out is not None),
        noise=_share(not p.matched for p in cases if p.outcome.kind in NOISE),
        ece=calibration_error(shown),
    )


def reliability(shown: Sequence[Page], bins: int = ECE_BINS) -> list[tuple[float, float, int]]:
    """(mean probability, share right, pages) per non-empty equal-width bin of the first
    runbook's probability."""
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for page in shown:
        if page.probability is not None:
            b = min(int(page.probability * bins), bins - 1)
            grouped[b].append((page.probability, page.first_right))
    return [
        (sum(q for q, _ in g) / len(g), sum(r for _, r in g) / len(g), len(g)) for g in grouped if g
    ]


def calibration_error(shown: Sequence[Page], bins: int = ECE_BINS) -> float | None:
    """Expected calibration error: |mean probability - share right| per bin, weighted by
    the bin's share of the pages."""
    table = reliability(shown, bins)
    total = sum(n for _, _, n in table)
    if not total:
        return None
    return sum(n / total * abs(p - r) for p, r, n in table)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


__all__ = [
    "HEADER",
    "LEGEND",
    "Page",
    "Scores",
    "calibration_error",
    "first_right",
    "from_outcome",
    "reliability",
    "score",
]
