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

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from enricher.index.stats import CorpusStats
from enricher.search.names import split_identifier

#: A names reading votes when its best runbook's name is at least this much spelled out by
#: the alert's rule, and by this much more than the next runbook's: a clear winner.
NAME_VOTE_COVERAGE = 0.6
NAME_VOTE_MARGIN = 0.2
#: The alignment reading votes for a runbook whose name lines up with the alert's this well,
#: and clearly better than the next one's: an acronym or a suffix away from an exact name.
ALIGN_VOTE = 0.75
ALIGN_MARGIN = 0.2
#: An alignment this high is the alert's own name, shortened or suffixed (MCC for Machine
#: Config Controller, `…Alert` added).
SAME_NAME_ALIGNMENT = 0.95
#: The most words an alert name written in words has (NetApp's EMS names reach ten).
MAX_NAME_WORDS = 10
_PROSE = re.compile(r"[:;,.!?](?:\s|$)| - ")
#: Idf weight exponent of `content_coverage`: rare words (what this alert is about) count
#: far more than words every runbook of the family shares.
COVERAGE_POWER = 2.0

#: What the reader says of a candidate (`reader_features`).
READER_FEATURES = ("reader", "reader_margin")
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
    "name_recall",
    "name_recall_margin",
    "alert_name_held",
    "name_alignment",
    "metric_share",
    "name_fit",
    "unlike_sibling",
    "unlike_others",
    "severity_sibling",
    *READER_FEATURES,
)
#: Words that grade an alert rather than say what it is about.
SEVERITY_WORDS = frozenset({"critical", "crit", "warning", "warn", "info", "major", "minor"})


@dataclass(frozen=True)
class Readings:
    """One search's view of the documents it found, by doc id."""

    #: Best chunk cosine to the query (documents in the dense pool only).
    dense: Mapping[str, float]
    #: Best chunk BM25 score (documents among the lexical hits only).
    lexical: Mapping[str, float]
    #: Share of each document's name spelled out by the rule's metrics and literals.
    names: Mapping[str, float]
    #: How well each document's name lines up with the alert's name (`name_alignment`).
    aligned: Mapping[str, float] = field(default_factory=dict)


def ranks(scores: Mapping[str, float], then: Mapping[str, float] | None = None) -> dict[str, int]:
    """1 for the best. Equal scores go by `then` (another reading of the same documents),
    then by document id: never by the order a reading returned them in, which is the
    engine's own and, for scores equal up to float32 noise, changes between calls."""
    other = then or {}
    order = sorted(scores, key=lambda doc: (-scores[doc], -other.get(doc, 0.0), doc))
    return {doc: rank for rank, doc in enumerate(order, start=1)}


def name_vote(
    names: Mapping[str, float],
    coverage: float = NAME_VOTE_COVERAGE,
    margin: float = NAME_VOTE_MARGIN,
) -> dict[str, int]:
    """A name reading's ranks, or nothing when it has no clear winner (`coverage` at
    least, by `margin` over the next)."""
    order = sorted(names, key=lambda doc: -names[doc])
    if not order or names[order[0]] < coverage:
        return {}
    second = names[order[1]] if len(order) > 1 else 0.0
    if names[order[0]] - second < margin:
        return {}
    return {doc: rank for rank, doc in enumerate(order, start=1)}


def fuse(readings: Readings, k: int) -> list[str]:
    """Documents by reciprocal rank fusion of the readings, best first."""
    fused: dict[str, float] = {}
    votes = (name_vote(readings.names), name_vote(readings.aligned, ALIGN_VOTE, ALIGN_MARGIN))
    dense, lexical = readings.dense, readings.lexical
    for ranking in (ranks(dense, lexical), ranks(lexical, dense), *votes):
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


def content_coverage(stats: CorpusStats, content: Sequence[int], doc_terms: Iterable[int]) -> float:
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


def name_recall(stats: CorpusStats, doc: str, alert_terms: Iterable[int]) -> float:
    """Share (by name idf) of the document's own name that the alert spells anywhere: in
    its name, labels, annotations or rule. A sibling runbook is named for what the alert is
    *not* (`…Critical` for a warning, `DuplicateTimestamps` for out-of-order ones), and
    that part of its name is missing from the alert; the alert's own runbook is named for
    what its annotations describe, so a renamed alert still spells most of it."""
    terms = stats.names.get(doc, ())
    mass = stats.name_mass.get(doc, 0.0)
    if not terms or mass <= 0:
        return 0.0
    held = set(alert_terms)
    return sum(stats.name_idf(t) for t in terms if t in held) / mass


def name_fit(stats: CorpusStats, doc: str, alert_name_terms: Iterable[int]) -> float:
    """Share (by name idf) of the alert name's *naming* words that the document's name
    holds. A naming word is one some runbook of this corpus is named with; the alert's
    other words (a team's own `Payments…TooOften`) say nothing either way. A near miss is
    usually named like its siblings, in the corpus's own vocabulary, and the word that sets
    it apart (`Warning` beside `…Critical`, `Down` beside `…Errors`) names no part of the
    sibling: that is evidence against it. 1 when the alert's name has no naming word."""
    naming = [t for t in dict.fromkeys(alert_name_terms) if stats.name_df.get(t, 0) > 0]
    total = sum(stats.name_idf(t) for t in naming)
    if total <= 0:
        return 1.0
    own = set(stats.names.get(doc, ()))
    return sum(stats.name_idf(t) for t in naming if t in own) / total


@functools.lru_cache(maxsize=16384)
def name_words(name: str) -> tuple[str, ...]:
    """A name as lower-case words (`MCCDrainError` -> mcc, drain, error). Cached: the same
    runbook names come back in every search."""
    return tuple(w.lower() for w in split_identifier(name).split())


@functools.lru_cache(maxsize=16384)
def _joined_spans(name: tuple[str, ...]) -> tuple[dict[str, int], ...]:
    """Per position j of `name`, what one alert word can stand for from there: the initials
    of 2-5 words from j (`mcc` / machine config controller) or 2-3 of them run together
    (`mdscpu` / mds cpu, which a run of capitals makes), mapped to the longest such run."""
    tables: list[dict[str, int]] = []
    for j in range(len(name)):
        table: dict[str, int] = {}
        for span in range(2, min(5, len(name) - j) + 1):
            words = name[j : j + span]
            table["".join(w[0] for w in words)] = span
            if span <= 3:
                table["".join(words)] = span
        tables.append(table)
    return tuple(tables)


def _aligned(alert: Sequence[str], name: tuple[str, ...]) -> tuple[int, int]:
    """(alert words matched, name words matched) by the best in-order alignment (a small
    dynamic programme, row by row; names are a few words): a word matches the same word or
    one it starts (4+ letters: `replica` / `replicas`), or a run of name words it stands
    for (`_joined_spans`), the way teams shorten long names; a word that is the first of
    that run stands for itself only (`on` in OnOSDNodes is not the initials of `on non`).
    Unmatched words on either side are skipped. Of options with the same total, the first
    in the order skip-alert, skip-name, same word, run is kept."""
    spans = _joined_spans(name)
    width = len(name)
    below: list[tuple[int, int]] = [(0, 0)] * (width + 1)
    for word in reversed(alert):
        row: list[tuple[int, int]] = [(0, 0)] * (width + 1)
        long = len(word) >= 4
        for j in range(width - 1, -1, -1):
            best = below[j]
            right = row[j + 1]
            if right[0] + right[1] > best[0] + best[1]:
                best = right
            other = name[j]
            if word == other or (
                long and len(other) >= 4 and (word.startswith(other) or other.startswith(word))
            ):
                a, b = below[j + 1]
                if a + b + 2 > best[0] + best[1]:
                    best = (a + 1, b + 1)
            span = 0 if other == word else spans[j].get(word, 0)
            if span:
                a, b = below[j + span]
                if a + b + 1 + span > best[0] + best[1]:
                    best = (a + 1, b + span)
            row[j] = best
        below = row
    return below[0]


def name_alignment(
    alert_name: str, names: Iterable[str], names_in_words: Iterable[str] = ()
) -> float:
    """How well the alert's name and the runbook's best name line up word for word, in
    0..1 (the harmonic mean of the two sides' matched shares): 1 for the same words in the
    same order, high for `SouthboundStale` / `SouthboundStaleAlert` or an acronym of the
    runbook's name, low for a sibling that shares the family's first words only.

    A title with spaces is lined up only when it reads as a name, not a sentence
    (`_is_worded_name`), and only with the alert names a runbook lists in words
    (`names_in_words`: NetApp's `NVMe Namespace Offline`, a Grafana rule's title). A
    PagerDuty incident titled by its summary is prose: lined up with a runbook's name, it
    shares a few words with its own runbook's and none with the others, which read as a
    sibling's name and counted against the right runbook. A corpus that names its alerts
    in words, though, has siblings in words (`…Offline` beside `…Online`), and an alert
    named that way is read like any other name."""
    best = 0.0
    if len(alert_name.split()) > 1:
        if not _is_worded_name(alert_name):
            return best
        names = [n for n in names_in_words if len(n.split()) > 1]
    alert = name_words(alert_name)
    if not alert:
        return best
    for name in names:
        words = name_words(name)
        if not words:
            continue
        hit_alert, hit_name = _aligned(alert, words)
        if hit_alert and hit_name:
            a, b = hit_alert / len(alert), hit_name / len(words)
            best = max(best, 2 * a * b / (a + b))
    return best


def severity_sibling(alert_name: str, names: Iterable[str]) -> bool:
    """Whether a runbook is named as the alert but for a severity word: `…Warning` for a
    `…Critical` alert, `…Expiring` for `…ExpiringWarning`. That is the runbook of the same
    rule at another severity, written because the two are handled apart; the alert's own
    one is missing (an alert its runbook names exactly never gets here: the name tier
    answers it). Across sixteen corpora no such runbook ranked first was the right one
    (docs/RETRIEVAL.md)."""
    alert = name_words(alert_name)
    core = [w for w in alert if w not in SEVERITY_WORDS]
    if not core:
        return False
    for name in names:
        words = name_words(name)
        if words != alert and [w for w in words if w not in SEVERITY_WORDS] == core:
            return True
    return False


def _is_worded_name(title: str) -> bool:
    """A name written in words (`Disk Shelf Power Supply Removed`): a few words, no
    sentence punctuation. An incident titled `<alert>: <summary>` or by a sentence is not."""
    return len(title.split()) <= MAX_NAME_WORDS and not _PROSE.search(title)


def unlike(alignment: float) -> float:
    """Evidence from how the alert's name lines up with a runbook's: full for its own name
    (`SAME_NAME_ALIGNMENT` up), and otherwise the less alike the better. An alert named in
    the corpus's own style, most words shared with a runbook but not all, is a sibling of
    that runbook: another alert of the family (`…Warning` beside `…Critical`), whose own
    runbook is missing. A team's own name for the alert shares few words with any runbook
    and leaves the decision to what the alert says."""
    return 1.0 if alignment >= SAME_NAME_ALIGNMENT else 1.0 - alignment


def features(
    doc: str,
    readings: Readings,
    *,
    coverage: float,
    known: float,
    quotes_metric: bool,
    service_match: bool,
    recall: Mapping[str, float] | None = None,
    alert_name_held: float = 0.0,
    alignment: float = 0.0,
    metric_share: float = 0.0,
    fit: float = 0.0,
    severity_sibling: bool = False,
) -> dict[str, float]:
    """The decision's view of one candidate, relative to the others the search found.
    `recall`: `name_recall` of every scored candidate, for this one's margin over the
    best sibling."""
    recall = recall or {}
    own_recall = recall.get(doc, 0.0)
    other_recall = max((v for d, v in recall.items() if d != doc), default=0.0)
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
        "dense_first": float(ranks(readings.dense, readings.lexical).get(doc) == 1),
        "lexical_first": float(ranks(readings.lexical, readings.dense).get(doc) == 1),
        "name_coverage": names,
        "name_margin": names - other_names,
        "quotes_metric": float(quotes_metric),
        "service_match": float(service_match),
        "name_recall": own_recall,
        "name_recall_margin": own_recall - other_recall,
        "alert_name_held": alert_name_held,
        "name_alignment": alignment,
        "metric_share": metric_share,
        "name_fit": fit,
        "unlike_sibling": unlike(alignment),
        "unlike_others": 1.0
        - max((v for d, v in readings.aligned.items() if d != doc), default=0.0),
        "severity_sibling": float(severity_sibling),
    }


def reader_features(logits: Sequence[float]) -> list[dict[str, float]]:
    """What the reader (enricher.search.reader) says of each candidate it read, in order:
    `reader`, its logit as a probability, and `reader_margin`, that probability's lead over
    the best other candidate read. The margin is what tells a renamed alert's runbook from
    its sibling's, which the reader may both find likely; an off-topic alert's candidates
    are all unlikely, and no margin makes one of them likely."""
    read = [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, v)))) for v in logits]
    out: list[dict[str, float]] = []
    for i, own in enumerate(read):
        other = max((v for j, v in enumerate(read) if j != i), default=0.0)
        out.append({"reader": own, "reader_margin": own - other})
    return out


__all__ = [
    "FEATURES",
    "READER_FEATURES",
    "Readings",
    "content_coverage",
    "features",
    "fuse",
    "known_share",
    "name_alignment",
    "name_coverage",
    "name_fit",
    "name_recall",
    "name_vote",
    "name_words",
    "ranks",
    "reader_features",
    "unlike",
]
