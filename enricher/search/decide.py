"""The match decision: which candidates are confident enough to show. Pure.

Every candidate carries a probability (enricher.search.confidence) computed from what the
alert says about it (enricher.search.evidence); the decision compares it with a bar, and
never reorders (the searcher puts the scored candidates in `most_probable_first` order
before it decides). Two tiers decide on identity instead of scores: an alert whose
`runbook_url` resolves to an indexed runbook ("runbook_url"), and one whose name a runbook
lists exactly ("alert_name", "alert_name+service"). A runbook written for the alert is
the answer whatever its wording.

Pure, so the eval and the calibration replay it over stored rankings with other bars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from enricher.index import schema
from enricher.result import Tier
from enricher.settings import Settings

Mode = Literal["hybrid", "dense", "sparse"]
#: Tiers decided by identity: the runbook is named by the alert.
NAMED_TIERS: frozenset[str] = frozenset({"runbook_url", "alert_name", "alert_name+service"})
#: Tiers shown without a bar: the named ones, and runbooks on-call confirmed for the alert's
#: name (enricher.search.feedback), which count as an alias would.
IDENTITY_TIERS: frozenset[str] = NAMED_TIERS | {"feedback"}


@dataclass(frozen=True)
class SearchConfig:
    """How candidates are retrieved and decided. The bars come from `Settings`
    (`from_settings`); the rest is the retrieval recipe, documented where it is used."""

    #: Probability a match needs (SCORE_THRESHOLD).
    threshold: float
    #: Probability a match needs when no service label vouches for it either
    #: (GLOBAL_SCORE_THRESHOLD).
    global_threshold: float
    #: A runbook older than this gets a stale warning (STALE_AFTER_DAYS).
    stale_after_days: int
    top_k: int = 3
    #: On "no confident match", up to this many runbooks are still named as leads, marked
    #: as not confident (0: none), when the best of them reaches the model's lead floor.
    max_leads: int = 3
    #: Below the bar, a first lead at or above this probability is named "likely" (one in
    #: five or better: worth reading first, not yet worth calling the match).
    likely: float = 0.2
    #: Candidates each retriever contributes (wider than top_k on purpose).
    prefetch_limit: int = 24
    #: How many BM25 hits to read for the lexical reading.
    lexical_limit: int = 64
    #: Candidates the confidence model scores; the rest are ranked only.
    scored: int = 5
    #: Of those, how many the reader reads with the alert (READER_TOP_K), when there is one.
    reader_top_k: int = 3
    #: RRF constant of the document-level fusion. 60 is the value from the original RRF
    #: paper and flattens rank differences (Qdrant's default of 2 lets one reading's top
    #: hit dominate).
    rrf_k: int = 60
    #: The rule's metrics count (quoting runbooks, the names reading). Off only as an ablation.
    metric_evidence: bool = True
    #: "dense" and "sparse" are ablations: one retriever ranks, the model still decides.
    mode: Mode = "hybrid"
    tiers: bool = True
    #: Where the runbooks are published (RUNBOOK_BASE_URL): a `runbook_url` under it names
    #: a runbook by its path.
    runbook_base_url: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchConfig:
        return cls(
            threshold=settings.score_threshold,
            global_threshold=settings.global_score_threshold,
            stale_after_days=settings.stale_after_days,
            reader_top_k=settings.reader_top_k,
            runbook_base_url=settings.runbook_base_url,
        )


@dataclass(frozen=True)
class Candidate:
    """A document as seen by one search: its best chunk and the probability it is the one."""

    payload: dict[str, Any]
    score: float
    #: What the score was computed from (enricher.search.evidence.FEATURES); empty for
    #: candidates decided by identity and for those ranked too low to be scored.
    features: Mapping[str, float] = field(default_factory=dict)
    #: What on-call's votes did to it (enricher.search.feedback), "" when nothing.
    feedback: str = ""

    @property
    def doc_id(self) -> str:
        return str(self.payload[schema.F_DOC_ID])


@dataclass(frozen=True)
class Ranking:
    """Documents in the page's order (the scored ones most probable first, then the
    reader's order of those it read), each scored, before the decision names a match."""

    candidates: tuple[Candidate, ...]
    tier: Tier
    #: Runbooks that are the only one quoting some metric of the alert's rule expression,
    #: with those metrics.
    vouched: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Below this probability a runbook is not named even as a lead (the model's floor).
    lead_floor: float = 1.0
    #: The alert's runbook_url, when it named no indexed runbook (the page says so).
    unresolved_url: str | None = None


def decide(ranking: Ranking, config: SearchConfig) -> tuple[Candidate, ...]:
    """The candidates confident enough to show, best first (empty: "no confident match")."""
    top = ranking.candidates[: config.top_k]
    if ranking.tier in IDENTITY_TIERS:
        return top
    bar = config.global_threshold if ranking.tier == "global" else config.threshold
    return tuple(c for c in top if c.score >= bar)


def leads(ranking: Ranking, config: SearchConfig) -> tuple[Candidate, ...]:
    """The runbooks worth a look when nothing is confident: the best few, in fused order,
    each at or above the model's lead floor. Below it a runbook's evidence is no better
    than an off-topic alert's (the probability says it is wrong 19 times in 20), so it is
    not named at all rather than named as one more equal lead."""
    top = ranking.candidates[: max(config.max_leads, 0)]
    return tuple(c for c in top if c.score >= ranking.lead_floor)


def likely(ranking: Ranking, config: SearchConfig) -> bool:
    """Whether the first lead is *likely* the alert's runbook, though below the bar: the
    page then names it as such, with its probability and what to do, instead of as one of
    several equal leads."""
    found = leads(ranking, config)
    return bool(found) and found[0] is ranking.candidates[0] and found[0].score >= config.likely


def most_probable_first(indices: Sequence[int], probability: Sequence[float]) -> list[int]:
    """`indices` (given in fused order) with the most probable first; ties keep their
    given order. The page's order of the scored candidates, in the searcher and in the
    harness that replays it (quality.reading)."""
    return sorted(indices, key=lambda i: -probability[i])


def quoted_by(
    metrics: Sequence[str], payloads: Sequence[Mapping[str, Any]]
) -> dict[str, frozenset[str]]:
    """Doc id -> the metrics of `metrics` that its chunks among `payloads` quote."""
    wanted = set(metrics)
    out: dict[str, set[str]] = {}
    for payload in payloads:
        found = wanted.intersection(payload.get(schema.F_METRICS, []))
        if found:
            out.setdefault(str(payload[schema.F_DOC_ID]), set()).update(found)
    return {doc: frozenset(found) for doc, found in out.items()}


def sole_quoters(
    metrics: Sequence[str], payloads: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[str, ...]]:
    """Doc id -> the metrics that, among the chunk `payloads`, only that document quotes
    (in the order of `metrics`)."""
    docs_of: dict[str, set[str]] = {metric: set() for metric in metrics}
    for doc, found in quoted_by(metrics, payloads).items():
        for metric in found:
            docs_of[metric].add(doc)
    sole: dict[str, tuple[str, ...]] = {}
    for metric, docs in docs_of.items():
        if len(docs) == 1:
            (doc,) = docs
            sole[doc] = (*sole.get(doc, ()), metric)
    return sole


__all__ = [
    "IDENTITY_TIERS",
    "NAMED_TIERS",
    "Candidate",
    "Mode",
    "Ranking",
    "SearchConfig",
    "decide",
    "leads",
    "likely",
    "most_probable_first",
    "quoted_by",
    "sole_quoters",
]
