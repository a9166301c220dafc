"""Hybrid runbook search: the Qdrant side. Retrieve, read, score; decide.py decides.

One search, in order:

1. `runbook_url`: when the alert links a runbook that is indexed, that runbook is the
   match (tier "runbook_url"); a link to nothing indexed is noted and the search goes on.
   A `#fragment` picks the section of a page with a section per alert.
2. The alert's exact name: runbooks listing it are the match ("alert_name", or
   "alert_name+service" when the service agrees).
3. Otherwise a hybrid Qdrant query (dense + BM25 prefetch fused by RRF, once unfiltered and
   once pre-filtered by the service label) fills the pool, one BM25 query reads the
   lexical scores, and the corpus statistics give the names reading. enricher.search.
   evidence fuses them per document and computes each top candidate's features; the
   confidence model turns those into the probability the page shows.

Everything here works on runbook units (ingest.units): a page with a section per alert is
one unit per alert, so sibling sections compete as sibling files do, and what to do comes
only from inside the matched unit.

Backend faults raise SearchUnavailable inside (enricher.search.reads) and come back as
status "unavailable". Resolving a `runbook_url` is enricher.search.links.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np
import structlog

from enricher.alert import Alert
from enricher.errors import SearchUnavailable
from enricher.index import schema
from enricher.index.embedding import Embedder, SparseVector
from enricher.index.engine import AnyOf, Condition, Equals, Filter, Hit, Index
from enricher.index.schema import Actionable
from enricher.index.stats import EMPTY, CorpusStats
from enricher.result import Match, SearchResult, Section, Tier
from enricher.search import evidence, links, reads
from enricher.search.confidence import Model, load_model
from enricher.search.decide import (
    Candidate,
    Ranking,
    SearchConfig,
    decide,
    leads,
    likely,
    most_probable_first,
    quoted_by,
    sole_quoters,
)
from enricher.search.feedback import NO_FEEDBACK, Tallies, rerank
from enricher.search.query import Query, build_query
from enricher.search.reader import READER_DIR, Reader, reading_order, reorders, unpack
from enricher.search.reader import texts as reader_texts
from enricher.settings import Settings

log = structlog.get_logger(__name__)

#: Chunks read when looking for the runbooks that quote an alert's metrics. More quoting
#: chunks than this and the metrics are common ones, which vouch for no runbook.
QUOTE_SCAN_LIMIT = 256
#: How often a long-running searcher re-reads the corpus statistics a sync rewrote.
STATS_REFRESH_S = 30.0
#: Chunks of one runbook unit read when looking for its first actionable section.
SECTION_SCAN_LIMIT = 64


class Steps(NamedTuple):
    """What a page shows of a runbook's actionable part beside the matched chunk."""

    #: The unit's first actionable section, when the matched chunk is not one.
    section: Section | None
    #: Nothing in the unit says what to do: the page says so, and borrows nothing.
    absent: bool


#: The matched chunk itself says what to do.
NO_STEPS_NEEDED = Steps(None, absent=False)


class Searcher:
    def __init__(
        self,
        index: Index,
        embedder: Embedder,
        config: SearchConfig,
        model: Model | None = None,
        reader: Reader | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.config = config
        self.model = (model or load_model()).reads(reader is not None)
        self.reader = reader
        self._stats: CorpusStats = EMPTY
        self._stats_read = float("-inf")

    # --- the result contract ---

    def search(
        self, alert: Alert, now: datetime | None = None, *, feedback: Tallies = NO_FEEDBACK
    ) -> SearchResult:
        """Never raises for backend faults: those come back as status "unavailable"."""
        return self.search_ranked(alert, now, feedback=feedback)[0]

    def search_ranked(
        self,
        alert: Alert,
        now: datetime | None = None,
        *,
        exclude: str | None = None,
        feedback: Tallies = NO_FEEDBACK,
    ) -> tuple[SearchResult, Ranking | None]:
        """The result and the ranking it was decided on (None when search was unavailable).

        `exclude`: a doc id searched as if it were not indexed (the eval's near misses).
        `feedback`: on-call's votes for the alert's name (enricher.search.feedback).
        """
        try:
            ranking = rerank(self.rank(alert, exclude=exclude), feedback)
            when = now or datetime.now(UTC)
            confident = decide(ranking, self.config)
            if not confident:
                closest = leads(ranking, self.config)
                first = likely(ranking, self.config)
                hints = tuple(
                    self._match(
                        c, when, ranking.vouched, self._steps(c) if first and i == 0 else None
                    )
                    for i, c in enumerate(closest)
                )
                result = SearchResult(
                    status="no_match",
                    tier=ranking.tier,
                    leads=hints,
                    unresolved_url=ranking.unresolved_url,
                    likely=first,
                )
                return result, ranking
            matches = tuple(
                self._match(c, when, ranking.vouched, self._steps(c)) for c in confident
            )
        except SearchUnavailable as exc:
            return SearchResult(status="unavailable", tier=None, reason=str(exc)), None
        result = SearchResult(
            status="matched",
            tier=ranking.tier,
            matches=matches,
            unresolved_url=ranking.unresolved_url,
        )
        return result, ranking

    # --- ranking ---

    def rank(self, alert: Alert, *, exclude: str | None = None) -> Ranking:
        """Candidates with their probabilities, in the page's order (`_decided`), before
        the decision names a match."""
        query = build_query(alert)
        keep = _without(exclude)
        unresolved: str | None = None
        if alert.runbook_url and self.config.tiers:
            base = self.config.runbook_base_url
            linked, indexed = links.linked(self.index, alert.runbook_url, base, keep)
            if linked is not None:
                return Ranking((Candidate(linked, 1.0),), "runbook_url")
            unresolved = None if indexed else alert.runbook_url
        stats = self._corpus_stats()
        dense = self.embedder.dense_query(query.dense_text)
        sparse = self.embedder.sparse_query(query.sparse_text)
        if query.alert_key and self.config.tiers:
            named = self._named(query, dense, sparse, keep)
            if named:
                tier: Tier = "alert_name+service" if _has_service(named[0], query) else "alert_name"
                return Ranking(tuple(named), tier, unresolved_url=unresolved)
        pool = self._pool(query, dense, sparse, keep)
        lexical = reads.lexical(
            self.index, sparse, Filter(must_not=keep), limit=self.config.lexical_limit
        )
        names: dict[str, float] = {}
        if self.config.metric_evidence:
            evidence_terms = self.embedder.sparse_query(query.evidence_text).indices
            names = evidence.name_coverage(stats, evidence_terms)
            names.pop(exclude or "", None)
        mode = self.config.mode
        found = {doc: payload for doc, (_, payload) in (*lexical.items(), *pool.items())}
        readings = evidence.Readings(
            dense={doc: cos for doc, (cos, _) in pool.items()} if mode != "sparse" else {},
            lexical={doc: s for doc, (s, _) in lexical.items()} if mode != "dense" else {},
            names=names,
            aligned={
                doc: evidence.name_alignment(
                    alert.alert_name, _names(payload), payload.get(schema.F_ALERT_NAMES, [])
                )
                for doc, payload in found.items()
            },
        )
        order = evidence.fuse(readings, self.config.rrf_k)
        if not order:
            return Ranking((), "global", unresolved_url=unresolved)
        scored = order[: self.config.scored]
        firsts = reads.first_chunks(self.index, scored)
        quoting = self._quoting(alert.metrics) if self.config.metric_evidence else []
        vouched = sole_quoters(alert.metrics, quoting)
        quoted = quoted_by(alert.metrics, quoting)
        content = self.embedder.sparse_query(query.content_text).indices
        known = evidence.known_share(stats, content)
        alert_terms = self.embedder.sparse_query(query.alert_text).indices
        name_terms = self.embedder.sparse_query(query.name_text).indices
        recall = {doc: evidence.name_recall(stats, doc, alert_terms) for doc in scored}
        candidates: list[Candidate] = []
        for doc in order:
            payload = _best_payload(doc, pool, lexical, firsts)
            if payload is None:
                continue
            if doc not in scored:
                candidates.append(Candidate(payload, 0.0))
                continue
            doc_terms = firsts.get(doc, {}).get(schema.F_DOC_TERMS, [])
            values = evidence.features(
                doc,
                readings,
                coverage=evidence.content_coverage(stats, content, doc_terms),
                known=known,
                quotes_metric=doc in vouched,
                service_match=_has_service_payload(payload, query),
                recall=recall,
                alert_name_held=evidence.content_coverage(stats, name_terms, doc_terms),
                alignment=readings.aligned.get(doc, 0.0),
                metric_share=_share(quoted.get(doc, frozenset()), alert.metrics),
                fit=evidence.name_fit(stats, doc, name_terms),
                severity_sibling=evidence.severity_sibling(alert.alert_name, _names(payload)),
            )
            candidates.append(Candidate(payload, 0.0, values))
        candidates = self._decided(query, candidates)
        served = bool(candidates) and _has_service(candidates[0], query)
        return Ranking(
            tuple(candidates),
            "service" if served else "global",
            vouched,
            self.model.lead_floor,
            unresolved,
        )

    def _decided(self, query: Query, found: Sequence[Candidate]) -> list[Candidate]:
        """The candidates with their probabilities, in the page's order. The scored ones
        go first, most probable first (ties keep the fused order): the probability is the
        decision's estimate that a candidate is the alert's runbook, and on corpora the
        decision never saw it puts that runbook first more often than the fusion does
        (docs/RETRIEVAL.md, "The most probable first"). Then the reader, when there is
        one, reads the alert with each of the first `reader_top_k` of them. An alert the
        corpus barely speaks of is not read: its probability is 0 whatever the reader says
        (confidence.Model.known_floor), and an off-topic page need not wait for it. A
        reader that reorders (Reader.reorders) puts the candidates it read in its own
        order (reader.reading_order). Unscored candidates follow in fused order."""
        values = [dict(c.features) for c in found]
        probs = [self.model.probability(v) if v else 0.0 for v in values]
        scored = most_probable_first([i for i, c in enumerate(found) if c.features], probs)
        order = scored + [i for i, c in enumerate(found) if not c.features]
        read = scored[: self.config.reader_top_k]
        known = bool(read) and values[read[0]].get("known_share", 1.0) >= self.model.known_floor
        if self.reader is not None and known and self._worth_reading(probs, read):
            pairs = [reader_texts(query, found[i].payload) for i in read]
            logits = self.reader.score(pairs, [self._stored(found[i].payload) for i in read])
            for i, extra in zip(read, evidence.reader_features(logits), strict=True):
                values[i].update(extra)
                probs[i] = self.model.probability(values[i])
            ranked = reading_order(logits, self.reader.rerank_penalty)
            order[: len(read)] = [read[j] for j in ranked]
        return [
            replace(found[i], score=probs[i], features=values[i]) if found[i].features else found[i]
            for i in order
        ]

    def _worth_reading(self, probs: Sequence[float], read: Sequence[int]) -> bool:
        """Whether what the reader says can change the page: always when the decision
        weighs it; otherwise only when a candidate it would read is shown, as a match or
        a lead. Below both bars the page names none of them in any order, so it does not
        wait for the reader (about 9 ms at 10k chunks, docs/PERFORMANCE.md)."""
        if self.model.weighs_reader:
            return True
        floor = min(self.model.lead_floor, self.config.threshold, self.config.global_threshold)
        return any(probs[i] >= floor for i in read)

    def _stored(self, payload: Mapping[str, Any]) -> np.ndarray | None:
        """The chunk's passage vector as ingest stored it, when this reader made it."""
        if self.reader is None or payload.get(schema.F_READER_MODEL) != self.reader.digest:
            return None
        return unpack(payload.get(schema.F_READER_VECTOR))

    # --- index reads ---

    def _named(
        self, query: Query, dense: list[float], sparse: SparseVector, keep: tuple[Condition, ...]
    ) -> list[Candidate]:
        """Runbooks listing the alert's exact name, in fused order, each one the answer."""
        by_name = AnyOf(schema.F_ALERT_KEYS, query.name_keys)
        points = self._hybrid(dense, sparse, Filter(must=(by_name,), must_not=keep))
        best = reads.best_by_doc(points, dense)
        order = sorted(best, key=lambda doc: -best[doc][0])
        return [Candidate(best[doc][1], 1.0) for doc in order]

    def _pool(
        self, query: Query, dense: list[float], sparse: SparseVector, keep: tuple[Condition, ...]
    ) -> dict[str, tuple[float, dict[str, Any]]]:
        """Doc id -> (best chunk cosine, that chunk's payload) over the unfiltered search and
        the one pre-filtered by the alert's service, so a service's own runbooks are always
        in the pool and a wrong or unusual service label hides nothing."""
        points = self._hybrid(dense, sparse, Filter(must_not=keep))
        if query.service_keys and self.config.tiers:
            by_service = AnyOf(schema.F_SERVICE_KEYS, tuple(query.service_keys))
            points += self._hybrid(dense, sparse, Filter(must=(by_service,), must_not=keep))
        return reads.best_by_doc(points, dense)

    def _hybrid(self, dense: list[float], sparse: SparseVector, flt: Filter) -> list[Hit]:
        limit, rrf_k = self.config.prefetch_limit, self.config.rrf_k
        return reads.hybrid(self.index, dense, sparse, flt, limit=limit, rrf_k=rrf_k)

    def _quoting(self, metrics: Sequence[str]) -> list[dict[str, Any]]:
        """The chunks quoting one of `metrics` (none when they are quoted everywhere: such
        metrics are evidence for nothing)."""
        if not metrics:
            return []
        quoting = AnyOf(schema.F_METRICS, tuple(metrics))
        points = reads.scroll(self.index, Filter(must=(quoting,)), QUOTE_SCAN_LIMIT)
        if len(points) >= QUOTE_SCAN_LIMIT:
            return []
        return [p.payload for p in points]

    def _steps(self, candidate: Candidate) -> Steps:
        """The unit's first actionable section when the matched chunk is not one: a
        symptom-worded alert matches Meaning or Background, and on-call needs what to do.
        Read from the matched unit only: on a page with a section per alert, another
        alert's fix is never shown."""
        matched = candidate.payload.get(schema.F_ACTIONABLE, 0)
        if matched == Actionable.HEADING:
            return NO_STEPS_NEEDED
        of_unit = Equals(schema.F_DOC_ID, candidate.doc_id)
        points = reads.scroll(self.index, Filter(must=(of_unit,)), SECTION_SCAN_LIMIT)
        chunks = sorted((p.payload for p in points), key=lambda p: p[schema.F_CHUNK_INDEX])
        best = max((c.get(schema.F_ACTIONABLE, 0) for c in chunks), default=0)
        if best <= matched:
            return Steps(None, absent=best == Actionable.NONE)
        first = next(c for c in chunks if c.get(schema.F_ACTIONABLE, 0) == best)
        section = Section(
            section=str(first[schema.F_SECTION]),
            anchor=str(first.get(schema.F_ANCHOR, "")),
            text=str(first[schema.F_TEXT]),
        )
        return Steps(section, absent=False)

    def _corpus_stats(self) -> CorpusStats:
        """The statistics the last sync stored, re-read every STATS_REFRESH_S."""
        now = time.monotonic()
        if now - self._stats_read >= STATS_REFRESH_S:
            try:
                stored = schema.read_stats(self.index)
            except Exception as exc:  # any transport or engine fault means "search is down"
                raise reads.unavailable(exc) from exc
            if stored is None:
                log.warning(
                    "search.no_corpus_stats",
                    collection=self.index.name,
                    fix="run a sync (`make ingest`) to compute them; until then the "
                    "decision has no coverage evidence",
                )
            self._stats = stored or EMPTY
            self._stats_read = now
        return self._stats

    def refresh(self) -> None:
        """Re-read the corpus statistics on the next search (after a sync)."""
        self._stats_read = float("-inf")

    def _match(
        self,
        candidate: Candidate,
        now: datetime,
        vouched: Mapping[str, tuple[str, ...]],
        steps: Steps | None,
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
            unit_anchor=str(p.get(schema.F_UNIT_ANCHOR, "")),
            url=str(p.get(schema.F_URL, "")),
            actionable=p.get(schema.F_ACTIONABLE, 0) == Actionable.HEADING,
            quoted_metrics=tuple(vouched.get(candidate.doc_id, ())),
            steps=steps.section if steps else None,
            no_steps=steps.absent if steps else False,
            feedback=candidate.feedback,
        )


def _without(doc_id: str | None) -> tuple[Condition, ...]:
    if doc_id is None:
        return ()
    return (Equals(schema.F_DOC_ID, doc_id),)


def _best_payload(
    doc: str,
    pool: Mapping[str, tuple[float, dict[str, Any]]],
    lexical: Mapping[str, tuple[float, dict[str, Any]]],
    firsts: Mapping[str, dict[str, Any]],
) -> dict[str, Any] | None:
    """The chunk a page shows for `doc`: the best dense one, else the best lexical one,
    else its first (a document found by its name alone)."""
    if doc in pool:
        return pool[doc][1]
    if doc in lexical:
        return lexical[doc][1]
    return firsts.get(doc)


def _share(found: frozenset[str], wanted: Sequence[str]) -> float:
    return len(found) / len(wanted) if wanted else 0.0


def _names(payload: Mapping[str, Any]) -> list[str]:
    """What a runbook is called: its file name (unless it is an alert's section of a page,
    named by its heading alone), title and listed alert names."""
    names = [str(payload.get(schema.F_TITLE, "")), *payload.get(schema.F_ALERT_NAMES, [])]
    if payload.get(schema.F_UNIT_ANCHOR):
        return names
    stem = str(payload.get(schema.F_PATH, "")).rsplit("/", 1)[-1].removesuffix(".md")
    return [stem, *names]


def _has_service_payload(payload: Mapping[str, Any], query: Query) -> bool:
    keys = set(payload.get(schema.F_SERVICE_KEYS, []))
    return any(k in keys for k in query.service_keys)


def _has_service(candidate: Candidate, query: Query) -> bool:
    return _has_service_payload(candidate.payload, query)


def build_searcher(
    settings: Settings, index: Index, embedder: Embedder, config: SearchConfig | None = None
) -> Searcher:
    """The searcher the service uses, configured from settings (`config`: another recipe
    under the same decision and reader, as the eval's ablations use)."""
    config = config or SearchConfig.from_settings(settings)
    model = load_model()
    return Searcher(index, embedder, config, model, load_reader(settings, model))


def load_reader(settings: Settings, model: Model) -> Reader | None:
    """The reader READER_ENABLED asks for: unset, the one in READER_DIR when its model is
    there and it has a use, the decision weighing what it says or the reader ordering the
    candidates it reads (its config's rerank_penalty; a page should not wait for a reader
    nobody listens to). Asked for or present, a model that does not load stops the start
    (ConfigError, which names the folder and the fix)."""
    folder = settings.reader_dir or READER_DIR
    if settings.reader_enabled is False:
        return None
    weighed = model.weighs_reader
    present = (folder / "model.onnx").is_file()
    if settings.reader_enabled is None and not (present and (weighed or reorders(folder))):
        return None
    reader = Reader(folder)
    log.info(
        "search.reader",
        folder=str(folder),
        kind=reader.kind,
        digest=reader.digest,
        weighed=weighed,
        rerank_penalty=reader.rerank_penalty,
        collection=str(reader.provenance.get("collection_sha256") or "")[:12],
    )
    return reader
