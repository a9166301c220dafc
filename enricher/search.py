"""Hybrid runbook search: tiered filters, dense + BM25 fused by RRF, a calibrated threshold.

Why the threshold is not on the fused score: RRF scores encode rank only (1/(k+rank)), so a
terrible best candidate scores the same as a perfect one. Fusion picks the candidate pool;
each candidate then gets a calibrated confidence computed client-side from its returned
dense vector (cosine to the query, in 0..1 for this model) plus a bonus when the runbook
names the alert exactly. That confidence orders documents and is compared with the
threshold. docs/RETRIEVAL.md records how the numbers were fitted.

`python -m enricher.search --payload FILE` prints the result JSON for a webhook body.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog
from qdrant_client import QdrantClient, models

from enricher import index, logs
from enricher.alert import Alert
from enricher.embedding import Embedder
from enricher.errors import BadRequest, ConfigError, SearchUnavailable
from enricher.intake import alert_from_body
from enricher.query import Query, build_query
from enricher.result import Match, SearchResult, Tier
from enricher.settings import Settings, load_settings

log = structlog.get_logger(__name__)

Mode = Literal["hybrid", "dense", "sparse"]


@dataclass(frozen=True)
class SearchConfig:
    #: Calibrated confidence a match must reach (docs/RETRIEVAL.md).
    threshold: float = 0.5
    #: The unfiltered tier needs a stricter bar: nothing vouches for the match but the text.
    global_threshold: float = 0.55
    #: Added to the confidence of runbooks that list the alert name exactly.
    name_bonus: float = 0.3
    top_k: int = 3
    #: Candidates each retriever contributes before fusion (wider than top_k on purpose).
    prefetch_limit: int = 24
    #: RRF constant. Qdrant's default is 2, which lets one retriever's top hit dominate;
    #: 60 is the value from the original RRF paper and flattens rank differences.
    rrf_k: int = 60
    stale_after_days: int = 180
    mode: Mode = "hybrid"
    tiers: bool = True


@dataclass(frozen=True)
class Candidate:
    """A document as seen by one search: its best chunk and that chunk's confidence."""

    payload: dict[str, Any]
    score: float
    sections: tuple[str, ...] = field(default=())


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
        query = build_query(alert)
        try:
            ranked, tier = self._ranked(query)
        except SearchUnavailable as exc:
            return SearchResult(status="unavailable", tier=None, reason=str(exc))
        threshold = self.config.global_threshold if tier == "global" else self.config.threshold
        confident = [c for c in ranked if c.score >= threshold][: self.config.top_k]
        if not confident:
            return SearchResult(status="no_match", tier=tier)
        when = now or datetime.now(UTC)
        return SearchResult(
            status="matched", tier=tier, matches=tuple(self._match(c, when) for c in confident)
        )

    def candidates(self, alert: Alert) -> tuple[list[Candidate], Tier]:
        """Ranked documents before the threshold (for eval and calibration)."""
        return self._ranked(build_query(alert))

    def _ranked(self, query: Query) -> tuple[list[Candidate], Tier]:
        dense = self.embedder.dense_query(query.text)
        sparse = self.embedder.sparse_query(query.text)
        if not self.config.tiers:
            return self._retrieve(query, dense, sparse, None), "global"
        by_name = models.FieldCondition(
            key=index.F_ALERT_KEYS, match=models.MatchValue(value=query.alert_key)
        )
        by_service = models.FieldCondition(
            key=index.F_SERVICE_KEYS, match=models.MatchAny(any=list(query.service_keys))
        )
        if query.alert_key:
            named = self._retrieve(query, dense, sparse, models.Filter(must=[by_name]))
            named = [c for c in named if c.score >= self.config.threshold]
            if named:
                service_hit = any(_has_service(c, query) for c in named[:1])
                return named, "alert_name+service" if service_hit else "alert_name"
        # Without an exact name, the service filter and the global search compete: a wrong or
        # unusual service label must not hide a clearly better runbook elsewhere.
        unfiltered = self._retrieve(query, dense, sparse, None)
        if query.service_keys:
            scoped = self._retrieve(query, dense, sparse, models.Filter(must=[by_service]))
            if (
                scoped
                and scoped[0].score >= self.config.threshold
                and (not unfiltered or scoped[0].score >= unfiltered[0].score)
            ):
                return scoped, "service"
        return unfiltered, "global"

    def _retrieve(
        self,
        query: Query,
        dense: list[float],
        sparse: Any,
        flt: models.Filter | None,
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
            log.warning("search.unavailable", error=type(exc).__name__, detail=str(exc)[:200])
            raise SearchUnavailable(f"Qdrant query failed: {type(exc).__name__}") from exc
        return self._by_document(query, dense, response.points)

    def _by_document(
        self, query: Query, dense: Sequence[float], points: Sequence[models.ScoredPoint]
    ) -> list[Candidate]:
        """One candidate per document: its best chunk, ordered by confidence (stable on ties)."""
        q = np.asarray(dense, dtype=np.float32)
        best: dict[str, Candidate] = {}
        for point in points:
            payload = point.payload or {}
            vectors = point.vector if isinstance(point.vector, dict) else {}
            vec = np.asarray(vectors.get(index.DENSE, []), dtype=np.float32)
            norm = float(np.linalg.norm(vec) * np.linalg.norm(q)) or 1.0
            cosine = float(vec @ q) / norm if vec.size else 0.0
            named = query.alert_key in payload.get(index.F_ALERT_KEYS, [])
            score = max(0.0, min(1.0, cosine + (self.config.name_bonus if named else 0.0)))
            doc_id = str(payload[index.F_DOC_ID])
            if doc_id not in best or score > best[doc_id].score:
                best[doc_id] = Candidate(payload=payload, score=score)
        return sorted(best.values(), key=lambda c: -c.score)

    def _match(self, candidate: Candidate, now: datetime) -> Match:
        p = candidate.payload
        updated = datetime.fromisoformat(str(p[index.F_LAST_UPDATED]))
        age_days = max(0, (now - updated).days)
        return Match(
            doc_id=str(p[index.F_DOC_ID]),
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
        )


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
