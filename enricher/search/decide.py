"""The match decision: which candidates are confident enough to show. Pure.

Why the threshold is not on the fused score: RRF scores encode rank only (1/(k+rank)), so a
terrible best candidate scores the same as a perfect one. Fusion picks the candidate pool;
each candidate then gets a calibrated confidence computed client-side from its returned
dense vector (cosine to the query, in 0..1 for this model) plus a bonus when the runbook
names the alert exactly (enricher.search.searcher). That confidence orders documents and is
compared with the threshold here. docs/RETRIEVAL.md records how the numbers were fitted.

Below the bar, a top runbook can still be taken on evidence the scores cannot see: a clear
lead over every other runbook, or being the only runbook that quotes a metric of the
alert's rule expression. Neither ever reorders the candidates.

Everything here is pure, so the eval and the calibration replay it over stored rankings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from enricher.index import schema
from enricher.result import Tier
from enricher.settings import Settings

Mode = Literal["hybrid", "dense", "sparse"]


@dataclass(frozen=True)
class SearchConfig:
    """How candidates are scored and decided. The bars come from `Settings` (`from_settings`);
    the rest are the retrieval recipe, documented where they are used."""

    #: Confidence a match must reach (SCORE_THRESHOLD).
    threshold: float
    #: Bar for the unfiltered tier, where nothing but the text vouches for the match
    #: (GLOBAL_SCORE_THRESHOLD): stricter, to keep in-domain alerts that have no runbook
    #: from matching a sibling runbook on wording alone.
    global_threshold: float
    #: A runbook older than this gets a stale warning (STALE_AFTER_DAYS).
    stale_after_days: int
    #: Added to the confidence of runbooks that list the alert name exactly.
    name_bonus: float = 0.3
    #: Subtracted in proportion to how far a runbook's BM25 score trails the best one:
    #: a runbook the words of the alert do not support is less likely to be the answer.
    lexical_penalty: float = 0.25
    #: A top runbook below the bar is still taken when it clears `margin_floor` and leads
    #: every other runbook by `margin`: a clear winner, not one of several near-ties.
    margin_floor: float = 0.45
    margin: float = 0.15
    top_k: int = 3
    #: On "no confident match", up to this many runbooks at or above `margin_floor` are
    #: still named as leads, marked as not confident (0: none). The right runbook is in the
    #: top three for nearly every golden case that misses the bar (docs/RETRIEVAL.md).
    max_leads: int = 2
    #: Candidates each retriever contributes before fusion (wider than top_k on purpose).
    prefetch_limit: int = 24
    #: How many BM25 hits to read for the lexical evidence.
    lexical_limit: int = 64
    #: RRF constant. Qdrant's default is 2, which lets one retriever's top hit dominate;
    #: 60 is the value from the original RRF paper and flattens rank differences.
    rrf_k: int = 60
    #: Take a top runbook below the bar (over `margin_floor`) when it is the only runbook
    #: quoting a metric of the alert's rule. Off only as an ablation.
    metric_evidence: bool = True
    #: "dense" and "sparse" are ablations: one retriever fills the pool *and* scores it.
    mode: Mode = "hybrid"
    tiers: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> SearchConfig:
        return cls(
            threshold=settings.score_threshold,
            global_threshold=settings.global_score_threshold,
            stale_after_days=settings.stale_after_days,
        )


@dataclass(frozen=True)
class Candidate:
    """A document as seen by one search: its best chunk and that chunk's confidence."""

    payload: dict[str, Any]
    score: float

    @property
    def doc_id(self) -> str:
        return str(self.payload[schema.F_DOC_ID])


@dataclass(frozen=True)
class Ranking:
    """Documents ordered by confidence, before the decision."""

    candidates: tuple[Candidate, ...]
    tier: Tier
    #: Confidence of the best *other* runbook in the unfiltered search (0 when none).
    runner_up: float = 0.0
    #: Runbooks that are the only one quoting some metric of the alert's rule expression,
    #: with those metrics.
    vouched: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def decide(ranking: Ranking, config: SearchConfig) -> tuple[Candidate, ...]:
    """The candidates confident enough to show, best first (empty: "no confident match").

    Pure, so calibration can replay it over stored rankings with other settings.
    """
    if not ranking.candidates:
        return ()
    bar = config.global_threshold if ranking.tier == "global" else config.threshold
    confident = tuple(c for c in ranking.candidates if c.score >= bar)[: config.top_k]
    if confident:
        return confident
    top = ranking.candidates[0]
    clear_winner = top.score - ranking.runner_up >= config.margin
    vouched = config.metric_evidence and top.doc_id in ranking.vouched
    if ranking.tier in ("service", "global") and top.score >= config.margin_floor:
        return (top,) if clear_winner or vouched else ()
    return ()


def leads(ranking: Ranking, config: SearchConfig) -> tuple[Candidate, ...]:
    """The runbooks worth a look when nothing is confident: over the floor, best first.

    Below `margin_floor` a runbook's wording is no evidence (off-topic alerts score there),
    so nothing is named rather than something random.
    """
    over = (c for c in ranking.candidates if c.score >= config.margin_floor)
    return tuple(over)[: max(config.max_leads, 0)]



def sole_quoters(
    metrics: Sequence[str], payloads: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[str, ...]]:
    """Doc id -> the metrics that, among the chunk `payloads`, only that document quotes
    (in the order of `metrics`)."""
    quoted_by: dict[str, set[str]] = {metric: set() for metric in metrics}
    for payload in payloads:
        for metric in payload.get(schema.F_METRICS, []):
            if metric in quoted_by:
                quoted_by[metric].add(str(payload[schema.F_DOC_ID]))
    sole: dict[str, tuple[str, ...]] = {}
    for metric, docs in quoted_by.items():
        if len(docs) == 1:
            (doc,) = docs
            sole[doc] = (*sole.get(doc, ()), metric)
    return sole


def runner_up(ranked: Sequence[Candidate]) -> float:
    return ranked[1].score if len(ranked) > 1 else 0.0


