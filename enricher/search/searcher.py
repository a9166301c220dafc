"""Hybrid runbook search: tiered filters, dense + BM25 fused by RRF, scored per document.

The Qdrant side of the search: it builds the query, runs the tiers and turns points into
scored candidates (`Ranking`); enricher.search.decide then says which are confident.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
import structlog
from qdrant_client import QdrantClient, models

from enricher.alert import Alert
from enricher.errors import SearchUnavailable
from enricher.index import schema
from enricher.index.embedding import Embedder, SparseVector
from enricher.result import Match, SearchResult, Tier
from enricher.search.decide import (
    Candidate,
    Ranking,
    SearchConfig,
    decide,
    leads,
    runner_up,
    sole_quoters,
)
from enricher.search.query import Query, build_query
from enricher.settings import Settings

log = structlog.get_logger(__name__)

#: Chunks read when looking for the runbooks that quote an alert's metrics. More quoting
#: chunks than this and the metrics are common ones, which vouch for no runbook.
QUOTE_SCAN_LIMIT = 256


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
            return Ranking(tuple(unfiltered), "global", runner_up(unfiltered))
        if query.alert_key:
            by_name = models.FieldCondition(
                key=schema.F_ALERT_KEYS, match=models.MatchValue(value=query.alert_key)
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
        second = runner_up(unfiltered)
        vouched = self._sole_quoters(alert.metrics)
        if query.service_keys:
            by_service = models.FieldCondition(
                key=schema.F_SERVICE_KEYS, match=models.MatchAny(any=list(query.service_keys))
            )
            scoped = retrieve(models.Filter(must=[by_service]))
            if scoped and (not unfiltered or scoped[0].score >= unfiltered[0].score):
                return Ranking(tuple(scoped), "service", second, vouched)
        return Ranking(tuple(unfiltered), "global", second, vouched)

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
            key=schema.F_METRICS, match=models.MatchAny(any=list(metrics))
        )
        try:
            points, _ = self.client.scroll(
                self.collection,
                scroll_filter=models.Filter(must=[quoting]),
                limit=QUOTE_SCAN_LIMIT,
                with_payload=[schema.F_DOC_ID, schema.F_METRICS],
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
                using=schema.SPARSE,
                limit=self.config.lexical_limit,
                with_payload=[schema.F_DOC_ID],
            )
        except Exception as exc:  # any transport or server fault means "search is down"
            raise _unavailable(exc) from exc
        best: dict[str, float] = {}
        for point in response.points:
            doc_id = str((point.payload or {})[schema.F_DOC_ID])
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
        dense_pf = models.Prefetch(query=dense, using=schema.DENSE, limit=limit, filter=flt)
        sparse_pf = models.Prefetch(
            query=models.SparseVector(indices=sparse.indices, values=sparse.values),
            using=schema.SPARSE,
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
                    with_vectors=[schema.DENSE],
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
                    with_vectors=[schema.DENSE],
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
            doc_id = str(payload[schema.F_DOC_ID])
            vectors = point.vector if isinstance(point.vector, dict) else {}
            vec = np.asarray(vectors.get(schema.DENSE, []), dtype=np.float32)
            if self.config.mode == "sparse":  # ablation: BM25 evidence alone
                score = lexical.get(doc_id, 0.0)
            else:
                norm = float(np.linalg.norm(vec) * np.linalg.norm(q)) or 1.0
                score = float(vec @ q) / norm if vec.size else 0.0
            if self.config.mode == "hybrid":
                score -= self.config.lexical_penalty * (1.0 - lexical.get(doc_id, 0.0))
            if query.alert_key in payload.get(schema.F_ALERT_KEYS, []):
                score += self.config.name_bonus
            score = max(0.0, min(1.0, score))
            if doc_id not in best or score > best[doc_id].score:
                best[doc_id] = Candidate(payload=payload, score=score)
        return sorted(best.values(), key=lambda c: -c.score)

    def _match(
        self, candidate: Candidate, now: datetime, vouched: Mapping[str, tuple[str, ...]]
    ) -> Match:
        p = candidate.payload
        updated = datetime.fromisoformat(str(p[schema.F_LAST_UPDATED]))
        age_days = max(0, (now - updated).days)
        return Match(
            doc_id=candidate.doc_id,
            title=str(p[schema.F_TITLE]),
            section=str(p[schema.F_SECTION]),
            source=str(p[schema.F_SOURCE]),
            path=str(p[schema.F_PATH]),
            score=round(candidate.score, 3),
            stale=age_days > self.config.stale_after_days,
            age_days=age_days,
            text=str(p[schema.F_TEXT]),
            revision=str(p.get(schema.F_REVISION, "")),
            anchor=str(p.get(schema.F_ANCHOR, "")),
            quoted_metrics=tuple(vouched.get(candidate.doc_id, ())),
        )


def _unavailable(exc: Exception) -> SearchUnavailable:
    log.warning("search.unavailable", error=type(exc).__name__, detail=str(exc)[:200])
    return SearchUnavailable(f"Qdrant query failed: {type(exc).__name__}")


def _has_service(candidate: Candidate, query: Query) -> bool:
    keys = set(candidate.payload.get(schema.F_SERVICE_KEYS, []))
    return any(k in keys for k in query.service_keys)


def build_searcher(settings: Settings, client: QdrantClient, embedder: Embedder) -> Searcher:
    """The searcher the service uses, configured from settings."""
    config = SearchConfig.from_settings(settings)
    return Searcher(client, settings.qdrant_collection, embedder, config)
