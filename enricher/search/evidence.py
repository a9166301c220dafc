"""What an alert says about each candidate runbook: the rankings and features the decision
weighs. Pure.

Three independent readings of the alert each rank the runbooks:

- **dense**: the best chunk's cosine to the alert's prose (MiniLM);
- **lexical**: the best chunk's BM25 score for the alert's words;
- **names**: how much of each runbook's *name* (title, alert names) the alert's rule
  metrics and rule literals spell out (`node_network_transmit_errs_total` spells
  NodeNetworkTransmitErrs). Runbooks are named after the alerts they serve, and metric
  names are upstream's, so this reading survives a team renaming the alert and rewording
  its annotations. It votes only when it has a clear winner.

The order is reciprocal rank fusion of the readings at document level (each document
ranked by its best chunk), as in the plain hybrid baseline of docs/RETRIEVAL.md. Fused
scores encode rank, not relevance, so they never decide anything: the decision weighs
`features`, which are ratios within the corpus (coverage weighted by the corpus's own
idf, margins over the next runbook, agreement between readings), not raw scores whose
scale moves from corpus to corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from enricher.index.stats import CorpusStats

#: A names reading votes when its best runbook's name is at least this much spelled out by
#: the alert's rule, and by this much more than the next runbook's: a clear winner.
NAME_VOTE_COVERAGE = 0.6
NAME_VOTE_MARGIN = 0.2
#: Idf weight exponent of `content_coverage`: rare words (what this alert is about) count
#: far more than words every runbook of the family shares.
COVERAGE_POWER = 2.0

#: The features, in the order the confidence model (enricher.search.confidence) reads them.
FEATURES = (
    "cosine",
    "cosine_margin",
    "lexical_share",
    "content_coverage",
    "known_share",
    "dense_first",
    "lexical_first",
    "name_coverage",
    "name_margin",
    "quotes_metric",
    "service_match",
)


@dataclass(frozen=True)
class Readings:
    """One search's view of the documents it found, by doc id."""

    #: Best chunk cosine to the query (documents in the dense pool only).
    dense: Mapping[str, float]
    #: Best chunk BM25 score (documents among the lexical hits only).
    lexical: Mapping[str, float]
    #: Share of each document's name spelled out by the rule's metrics and literals.
    names: Mapping[str, float]


def ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """1 for the best; ties keep their insertion order."""
    order = sorted(scores, key=lambda doc: -scores[doc])
    return {doc: rank for rank, doc in enumerate(order, start=1)}


def name_vote(names: Mapping[str, float]) -> dict[str, int]:
    """The names reading's ranks, or nothing when it has no clear winner."""
    order = sorted(names, key=lambda doc: -names[doc])
    if not order or names[order[0]] < NAME_VOTE_COVERAGE:
        return {}
    second = names[order[1]] if len(order) > 1 else 0.0
    if names[order[0]] - second < NAME_VOTE_MARGIN:
        return {}
    return {doc: rank for rank, doc in enumerate(order, start=1)}


def fuse(readings: Readings, k: int) -> list[str]:
    """Documents by reciprocal rank fusion of the readings, best first."""
    fused: dict[str, float] = {}
    for ranking in (ranks(readings.dense), ranks(readings.lexical), name_vote(readings.names)):
        for doc, rank in ranking.items():
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda doc: -fused[doc])


def name_coverage(stats: CorpusStats, evidence: Iterable[int]) -> dict[str, float]:
    """Doc id -> share (by name idf) of the document's name terms among `evidence`. Only the
    documents sharing a term are visited (an inverted index), so this stays cheap at 10k."""
    hits: dict[str, float] = {}
    for term in set(evidence):
        weight = stats.name_idf(term)
        for doc in stats.name_postings.get(term, ()):
            hits[doc] = hits.get(doc, 0.0) + weight
    return {doc: hit / stats.name_mass[doc] for doc, hit in hits.items() if stats.name_mass[doc]}


def content_coverage(
    stats: CorpusStats, content: Sequence[int], doc_terms: Iterable[int]
) -> float:
    """Share of the alert's wording the document holds, each known word weighted by its
    idf squared. Words no runbook uses weigh nothing (see CorpusStats.known)."""
    weights: dict[int, float] = {t: stats.idf(t) ** COVERAGE_POWER for t in stats.known(content)}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    held = set(doc_terms)
    return float(sum(w for t, w in weights.items() if t in held) / total)


def known_share(stats: CorpusStats, content: Sequence[int]) -> float:
    """Share of the alert's wording (by idf) that some runbook uses at all: an off-topic
    alert (a printer, a payments provider) speaks mostly words this corpus never does, so
    even a runbook covering its few familiar ones explains little of it."""
    terms = list(dict.fromkeys(content))
    total = sum(stats.idf(t) for t in terms)
    if total <= 0:
        return 0.0
    return sum(stats.idf(t) for t in stats.known(terms)) / total


def features(
    doc: str,
    readings: Readings,
    *,
    coverage: float,
    known: float,
    quotes_metric: bool,
    service_match: bool,
) -> dict[str, float]:
    """The decision's view of one candidate, relative to the others the search found."""
    cosine = readings.dense.get(doc, 0.0)
    other_cosine = max((v for d, v in readings.dense.items() if d != doc), default=0.0)
    best_lexical = max(readings.lexical.values(), default=0.0)
    names = readings.names.get(doc, 0.0)
    other_names = max((v for d, v in readings.names.items() if d != doc), default=0.0)
    return {
        "cosine": cosine,
        "cosine_margin": cosine - other_cosine,
        "lexical_share": readings.lexical.get(doc, 0.0) / best_lexical if best_lexical else 0.0,
        "content_coverage": coverage,
        "known_share": known,
        "dense_first": float(ranks(readings.dense).get(doc) == 1),
        "lexical_first": float(ranks(readings.lexical).get(doc) == 1),
        "name_coverage": names,
        "name_margin": names - other_names,
        "quotes_metric": float(quotes_metric),
        "service_match": float(service_match),
    }


__all__ = [
    "FEATURES",
    "Readings",
    "content_coverage",
    "features",
    "fuse",
    "known_share",
    "name_coverage",
    "name_vote",
    "ranks",
]
