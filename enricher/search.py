"""Hybrid runbook search: tiered filters, dense + BM25 fused by RRF, a calibrated threshold.

Why the threshold is not on the fused score: RRF scores encode rank only (1/(k+rank)), so a
terrible best candidate scores the same as a perfect one. Fusion picks the candidate pool;
each candidate then gets a calibrated confidence computed client-side from its returned
dense vector (cosine to the query, in 0..1 for this model) plus a bonus when the runbook
names the alert exactly. That confidence orders documents and is compared with the
threshold. docs/RETRIEVAL.md records how the numbers were fitted.

Below the bar, a top runbook can still be taken on evidence the scores cannot see: a clear
lead over every other runbook, or being the only runbook that quotes a metric of the
alert's rule expression. Neither ever reorders the candidates.

`python -m enricher.search --payload FILE` prints the result JSON for a webhook body.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog
from qdrant_client import QdrantClient, models

from enricher import index, logs
from enricher.alert import Alert
from enricher.embedding import Embedder, SparseVector
from enricher.errors import BadRequest, ConfigError, SearchUnavailable
from enricher.intake import alert_from_body
from enricher.query import Query, build_query
from enricher.result import Match, SearchResult, Tier
from enricher.settings import Settings, load_settings

log = structlog.get_logger(__name__)

Mode = Literal["hybrid", "dense", "sparse"]

#: Chunks read when looking for the runbooks that quote an alert's metrics. More quoting
#: chunks than this and the metrics are common ones, which vouch for no runbook.
QUOTE_SCAN_LIMIT = 256


@dataclass(frozen=True)
class SearchConfig:
    #: Confidence a match must reach (docs/RETRIEVAL.md: fitted on the golden dev split).
    threshold: float = 0.61
    #: Bar for the unfiltered tier, where nothing but the text vouches for the match. Fitted
    #: with `threshold` on the golden dev split: stricter, to keep in-domain alerts that have
    #: no runbook from matching a sibling runbook on wording alone.
    global_threshold: float = 0.76
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
    stale_after_days: int = 180
    #: Take a top runbook below the bar (over `margin_floor`) when it is the only runbook
    #: quoting a metric of the alert's rule. Off only as an ablation.
    metric_evidence: bool = True
    #: "dense" and "sparse" are ablations: one retriever fills the pool *and* scores it.
    mode: Mode = "hybrid"
    tiers: bool = True


@dataclass(frozen=True)
class Candidate:
    """A document as seen by one search: its best chunk and that chunk's confidence."""

    payload: dict[str, Any]
    score: float

    @property
    def doc_id(self) -> str:
        return str(self.payload[index.F_DOC_ID])


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


class Searcher:
    def __init__(
        self, client: QdrantClient, collection: str, embedder: Embedder, config: SearchConfig
    ) -> None:
        self.client = client
        self.collection = collection
        self.embedder = embedder
        self.config = config

    def search(self, alert: Alert, now: datetime | None = None) -> SearchResult:
        """Never raises for backend faults: those come back as status "unavailable"."""
        return self.search_ranked(alert, now)[0]

    def search_ranked(
        self, alert: Alert, now: datetime | None = None
    ) -> tuple[SearchResult, Ranking | None]:
        """The result and the ranking it was decided on (None when search was unavailable)."""
        try:
            ranking = self.rank(alert)
        except SearchUnavailable as exc:
            return SearchResult(status="unavailable", tier=None, reason=str(exc)), None
        confident = decide(ranking, self.config)
        when = now or datetime.now(UTC)
        if not confident:
            closest = leads(ranking, self.config)
            hints = tuple(self._match(c, when, ranking.vouched) for c in closest)
            return SearchResult(status="no_match", tier=ranking.tier, leads=hints), ranking
        matches = tuple(self._match(c, when, ranking.vouched) for c in confident)
        return SearchResult(status="matched", tier=ranking.tier, matches=matches), ranking

    def rank(self, alert: Alert) -> Ranking:
        """Candidates with their confidence and tier, before the decision (also for eval)."""
        query = build_query(alert)
        dense = self.embedder.dense_query(query.dense_text)
        sparse = self.embedder.sparse_query(query.sparse_text)
        lexical = self._lexical(sparse)

        def retrieve(flt: models.Filter | None) -> list[Candidate]:
            return self._retrieve(query, dense, sparse, flt, lexical)

        if not self.config.tiers:
            unfiltered = retrieve(None)
            return Ranking(tuple(unfiltered), "global", _runner_up(unfiltered))
        if query.alert_key:
            by_name = models.FieldCondition(
                key=index.F_ALERT_KEYS, match=models.MatchValue(value=query.alert_key)
            )
            named = [
                c
                for c in retrieve(models.Filter(must=[by_name]))
                if c.score >= self.config.threshold
            ]
            if named:
                tier: Tier = "alert_name+service" if _has_service(named[0], query) else "alert_name"
                return Ranking(tuple(named), tier)
        # Without an exact name, the service filter and the global search compete: a wrong or
        # unusual service label must not hide a clearly better runbook elsewhere.
        unfiltered = retrieve(None)
        runner_up = _runner_up(unfiltered)
        vouched = self._sole_quoters(alert.metrics)
        if query.service_keys:
            by_service = models.FieldCondition(
                key=index.F_SERVICE_KEYS, match=models.MatchAny(any=list(query.service_keys))
            )
            scoped = retrieve(models.Filter(must=[by_service]))
            if scoped and (not unfiltered or scoped[0].score >= unfiltered[0].score):
                return Ranking(tuple(scoped), "service", runner_up, vouched)
        return Ranking(tuple(unfiltered), "global", runner_up, vouched)

    def _sole_quoters(self, metrics: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Runbooks that are the only one quoting one of `metrics`, with those metrics.

        A metric quoted by one runbook points at it the way an alert name does; one quoted
        by several (`up`, a shared request counter) says nothing about which of them applies.
        One scroll reads the quoting chunks. On the embedded engine it scans the collection
        (0.16 s at 10k chunks on 2 cores, docs/PERFORMANCE.md); the server uses its index.
        """
        if not (self.config.metric_evidence and metrics):
            return {}
        quoting = models.FieldCondition(
            key=index.F_METRICS, match=models.MatchAny(any=list(metrics))
        )
        try:
            points, _ = self.client.scroll(
                self.collection,
                scroll_filter=models.Filter(must=[quoting]),
                limit=QUOTE_SCAN_LIMIT,
                with_payload=[index.F_DOC_ID, index.F_METRICS],
                with_vectors=False,
            )
        except Exception as exc:  # any transport or server fault means "search is down"
            raise _unavailable(exc) from exc
        if len(points) >= QUOTE_SCAN_LIMIT:  # quoted everywhere: evidence for nothing
            return {}
        return sole_quoters(metrics, [p.payload or {} for p in points])

    def _lexical(self, sparse: SparseVector) -> dict[str, float]:
        """Each runbook's best BM25 score relative to the best runbook's, in 0..1."""
        if not sparse.indices:
            return {}
        try:
            response = self.client.query_points(
                self.collection,
                query=models.SparseVector(indices=sparse.indices, values=sparse.values),
                using=index.SPARSE,
                limit=self.config.lexical_limit,
                with_payload=[index.F_DOC_ID],
            )
        except Exception as exc:  # any transport or server fault means "search is down"
            raise _unavailable(exc) from exc
        best: dict[str, float] = {}
        for point in response.points:
            doc_id = str((point.payload or {})[index.F_DOC_ID])
            best[doc_id] = max(best.get(doc_id, 0.0), point.score)
        top = max(best.values(), default=0.0)
        return {doc_id: score / top for doc_id, score in best.items()} if top > 0 else {}

    def _retrieve(
        self,
        query: Query,
        dense: list[float],
        sparse: SparseVector,
        flt: models.Filter | None,
        lexical: dict[str, float],
    ) -> list[Candidate]:
        limit = self.config.prefetch_limit
        dense_pf = models.Prefetch(query=dense, using=index.DENSE, limit=limit, filter=flt)
        sparse_pf = models.Prefetch(
            query=models.SparseVector(indices=sparse.indices, values=sparse.values),
            using=index.SPARSE,
            limit=limit,
            filter=flt,
        )
        try:
            if self.config.mode == "hybrid":
                response = self.client.query_points(
                    self.collection,
                    prefetch=[dense_pf, sparse_pf],
                    query=models.RrfQuery(rrf=models.Rrf(k=self.config.rrf_k)),
                    limit=limit,
                    with_payload=True,
                    with_vectors=[index.DENSE],
                )
            else:
                single = dense_pf if self.config.mode == "dense" else sparse_pf
                response = self.client.query_points(
                    self.collection,
                    query=single.query,
                    using=single.using,
                    query_filter=flt,
                    limit=limit,
                    with_payload=True,
                    with_vectors=[index.DENSE],
                )
        except Exception as exc:  # any transport or server fault means "search is down"
            raise _unavailable(exc) from exc
        return self._by_document(query, dense, response.points, lexical)

    def _by_document(
        self,
        query: Query,
        dense: Sequence[float],
        points: Sequence[models.ScoredPoint],
        lexical: dict[str, float],
    ) -> list[Candidate]:
        """One candidate per document: its best chunk, ordered by confidence (stable on ties)."""
        q = np.asarray(dense, dtype=np.float32)
        best: dict[str, Candidate] = {}
        for point in points:
            payload = point.payload or {}
            doc_id = str(payload[index.F_DOC_ID])
            vectors = point.vector if isinstance(point.vector, dict) else {}
            vec = np.asarray(vectors.get(index.DENSE, []), dtype=np.float32)
            if self.config.mode == "sparse":  # ablation: BM25 evidence alone
                score = lexical.get(doc_id, 0.0)
            else:
                norm = float(np.linalg.norm(vec) * np.linalg.norm(q)) or 1.0
                score = float(vec @ q) / norm if vec.size else 0.0
            if self.config.mode == "hybrid":
                score -= self.config.lexical_penalty * (1.0 - lexical.get(doc_id, 0.0))
            if query.alert_key in payload.get(index.F_ALERT_KEYS, []):
                score += self.config.name_bonus
            score = max(0.0, min(1.0, score))
            if doc_id not in best or score > best[doc_id].score:
                best[doc_id] = Candidate(payload=payload, score=score)
        return sorted(best.values(), key=lambda c: -c.score)

    def _match(
        self, candidate: Candidate, now: datetime, vouched: Mapping[str, tuple[str, ...]]
    ) -> Match:
        p = candidate.payload
        updated = datetime.fromisoformat(str(p[index.F_LAST_UPDATED]))
        age_days = max(0, (now - updated).days)
        return Match(
            doc_id=candidate.doc_id,
            title=str(p[index.F_TITLE]),
            section=str(p[index.F_SECTION]),
            source=str(p[index.F_SOURCE]),
            path=str(p[index.F_PATH]),
            score=round(candidate.score, 3),
            stale=age_days > self.config.stale_after_days,
            age_days=age_days,
            text=str(p[index.F_TEXT]),
            revision=str(p.get(index.F_REVISION, "")),
            anchor=str(p.get(index.F_ANCHOR, "")),
            quoted_metrics=tuple(vouched.get(candidate.doc_id, ())),
        )


def sole_quoters(
    metrics: Sequence[str], payloads: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[str, ...]]:
    """Doc id -> the metrics that, among the chunk `payloads`, only that document quotes
    (in the order of `metrics`)."""
    quoted_by: dict[str, set[str]] = {metric: set() for metric in metrics}
    for payload in payloads:
        for metric in payload.get(index.F_METRICS, []):
            if metric in quoted_by:
                quoted_by[metric].add(str(payload[index.F_DOC_ID]))
    sole: dict[str, tuple[str, ...]] = {}
    for metric, docs in quoted_by.items():
        if len(docs) == 1:
            (doc,) = docs
            sole[doc] = (*sole.get(doc, ()), metric)
    return sole


def _unavailable(exc: Exception) -> SearchUnavailable:
    log.warning("search.unavailable", error=type(exc).__name__, detail=str(exc)[:200])
    return SearchUnavailable(f"Qdrant query failed: {type(exc).__name__}")


def _runner_up(ranked: Sequence[Candidate]) -> float:
    return ranked[1].score if len(ranked) > 1 else 0.0


def _has_service(candidate: Candidate, query: Query) -> bool:
    keys = set(candidate.payload.get(index.F_SERVICE_KEYS, []))
    return any(k in keys for k in query.service_keys)


def build_searcher(settings: Settings, client: QdrantClient, embedder: Embedder) -> Searcher:
    """The searcher the service uses, configured from settings."""
    config = SearchConfig(
        threshold=settings.score_threshold,
        global_threshold=settings.global_score_threshold,
        stale_after_days=settings.stale_after_days,
    )
    return Searcher(client, settings.qdrant_collection, embedder, config)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m enricher.search",
        description="Show what the webhook would find for a payload (Alertmanager or PagerDuty).",
    )
    parser.add_argument("--payload", type=Path, required=True, help="webhook body as JSON")
    args = parser.parse_args(argv)
    logs.configure(json=False)
    settings = load_settings()
    try:
        alert = alert_from_body(args.payload.read_bytes())
    except BadRequest as exc:
        print(f"error: {args.payload}: {exc.reason}", file=sys.stderr)
        return 2
    if alert is None:
        print("not an incident event: the webhook would acknowledge and ignore it", file=sys.stderr)
        return 0
    try:
        embedder = Embedder(settings)
        client = index.open_client(settings)
        index.verify_collection(client, settings.qdrant_collection, embedder.identity)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = build_searcher(settings, client, embedder).search(alert)
    client.close()
    print(json.dumps(result.to_json(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
