"""Apply a sync: scan roots, chunk, plan against the collection, embed, upsert, prune.

The index is the source of truth for what is indexed (one payload-only scroll per run);
Redis only caches embeddings in front of the model. A flushed Redis therefore never
corrupts anything: unchanged documents are still skipped because the index holds their
hashes, and only documents that changed are embedded again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

import structlog

from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING, AnyOf, AtLeast, Equals, Filter, Index, IndexPoint
from enricher.index.stats import CorpusStats
from enricher.search.names import name_key, split_identifier
from enricher.search.reader import BI, Reader, pack, passage_text
from enricher.settings import Settings
from enricher.sources.promql import quoted_names
from ingest.anchors import style_for
from ingest.cache import EmbeddingCache
from ingest.chunking import actionable, chunk_units, embed_text
from ingest.document import Chunk, Document, SourceError, Unit
from ingest.incremental import IncrementalSource
from ingest.migrate import claims, migrate
from ingest.naming import Root, name_roots
from ingest.plan import Held, Indexed, Page, Plan, guard_shrink, make_plan
from ingest.sources import DocumentMemo, scan_root
from ingest.units import unit_documents
from ingest.weblink import Kind, host_kinds, link_templates

log = structlog.get_logger(__name__)

UPSERT_BATCH = 64
Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    indexed_docs: int = 0
    indexed_chunks: int = 0
    skipped: int = 0
    pruned_chunks: int = 0
    removed_docs: int = 0
    embedded: int = 0
    from_cache: int = 0
    #: Pages moved to their source's name without embedding (ingest.migrate).
    migrated: int = 0
    prune_skipped: bool = False
    #: Sources whose shrunk listing did not prune what it dropped (ingest.plan.guard_shrink).
    prune_held: tuple[Held, ...] = ()
    errors: list[SourceError] = field(default_factory=list)
    #: The first error of each source that had one, by source name.
    failed: dict[str, str] = field(default_factory=dict)
    #: The sources whose runbooks are in the index: read without an error in this run, or
    #: holding documents from an earlier one.
    loaded: frozenset[str] = frozenset()

    def summary(self) -> str:
        return (
            f"indexed {self.indexed_docs} document(s) as {self.indexed_chunks} chunk(s); "
            f"skipped {self.skipped} unchanged; pruned {self.pruned_chunks} stale chunk(s); "
            f"removed {self.removed_docs} deleted document(s); "
            f"embedded {self.embedded} chunk(s) ({self.from_cache} from cache)"
            + (f"; moved {self.migrated} to their source's name" if self.migrated else "")
            + "".join(
                f"; kept {h.dropped} of {h.of} document(s) of {h.source} that its listing "
                "dropped (confirm with --allow-prune)"
                for h in self.prune_held
            )
        )

    def log_held(self, max_fraction: float) -> None:
        """One line per source whose shrink is held back, saying how to confirm it."""
        for held in self.prune_held:
            log.warning(
                "ingest.prune_held",
                source=held.source,
                dropped=held.dropped,
                of=held.of,
                max_fraction=max_fraction,
                fix="if the runbooks were really removed, run `python -m ingest "
                "--allow-prune` or raise PRUNE_MAX_FRACTION; else fix the source's scope",
            )


@dataclass(frozen=True)
class SyncOptions:
    #: Folders of runbooks: a `Root` carries its source name, a plain path is named after
    #: its folder (ingest.naming).
    roots: Sequence[Path | Root]
    #: Chunk size budget (CHUNK_MAX_CHARS / CHUNK_MIN_CHARS).
    chunk_max_chars: int
    chunk_min_chars: int
    use_git: bool = True
    prune: bool = True
    #: Sources read incrementally besides the roots (ingest.incremental: Confluence).
    sources: Sequence[IncrementalSource] = ()
    #: A source whose listing drops more than this share of its pages keeps them
    #: (PRUNE_MAX_FRACTION; ingest.plan.guard_shrink); 1 prunes whatever it dropped.
    prune_max_fraction: float = 0.5
    #: Link templates by source name, "" for every other file source (RUNBOOK_LINK_TEMPLATE,
    #: RUNBOOK_BASE_URL), and git host kinds by host name (RUNBOOK_GIT_WEB): ingest.weblink.
    links: Mapping[str, str] = field(default_factory=dict)
    kinds: Mapping[str, Kind] = field(default_factory=dict)
    #: The digest of the bi-encoder reader whose vectors the chunks carry ("" for none);
    #: set by the Syncer from its reader.
    reader_model: str = ""

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        roots: Sequence[Path | Root],
        *,
        use_git: bool = True,
        prune: bool = True,
        sources: Sequence[IncrementalSource] = (),
        allow_prune: bool = False,
    ) -> SyncOptions:
        return cls(
            roots=roots,
            chunk_max_chars=settings.chunk_max_chars,
            chunk_min_chars=settings.chunk_min_chars,
            use_git=use_git,
            prune=prune,
            sources=sources,
            prune_max_fraction=1.0 if allow_prune else settings.prune_max_fraction,
            links=link_templates(settings.runbook_link_template, settings.runbook_base_url),
            kinds=host_kinds(settings.runbook_git_web),
        )


#: Bump when embed_text() changes what is embedded for the same chunk, or when the payload
#: written for a chunk gains a field: every document is then re-indexed once (the embedding
#: cache still spares the model the texts that did not change).
#: 2: chunks carry the metric names they quote (schema.F_METRICS).
#: 3: chunks come from a CommonMark parser and carry path_key, actionable and url; first
#:    chunks carry the document's term and name sets (schema.F_DOC_TERMS, F_NAME_TERMS).
#: 4: a page with a section per alert is indexed as runbook units (ingest.units); every
#:    chunk carries its page (schema.F_PAGE_ID) and unit anchor; anchors follow the host.
#: 5: an alert section's name terms read its title as words (name_text).
#: 6: alert headings sharing one text are one unit; more heading shapes cut (ingest.units).
#: A new bi-encoder reader re-indexes the same way (its digest is part of the indexed hash):
#: each chunk stores the reader's vector of it.
INDEX_RECIPE_VERSION = 6


def _indexed_hash(doc_hash: str, options: SyncOptions) -> str:
    """The document hash as indexed: content plus the chunking settings and the index recipe,
    so changing CHUNK_MAX_CHARS re-chunks documents whose text did not change."""
    chunking = f"{options.chunk_max_chars}|{options.chunk_min_chars}"
    recipe = f"{doc_hash}|{chunking}|{INDEX_RECIPE_VERSION}"
    if options.reader_model:
        recipe += f"|reader:{options.reader_model}"
    return hashlib.sha256(recipe.encode()).hexdigest()


def read_indexed(index: Index) -> dict[str, Indexed]:
    """Page doc id -> (hash, source, revision, chunk count per unit), from one payload-only
    scroll. A page whose chunks disagree on the revision (an interrupted refresh) reports
    none, so the next plan refreshes it."""
    held: dict[str, Indexed] = {}
    units: dict[str, dict[str, int]] = {}
    offset: str | None = None
    fields = [
        schema.F_DOC_ID,
        schema.F_PAGE_ID,
        schema.F_DOC_HASH,
        schema.F_SOURCE,
        schema.F_REVISION,
    ]
    while True:
        points, offset = index.scroll(EVERYTHING, 1024, fields=fields, offset=offset)
        for point in points:
            payload = point.payload
            unit = str(payload[schema.F_DOC_ID])
            # Chunks indexed before units existed name no page: the unit is the page.
            page = str(payload.get(schema.F_PAGE_ID) or unit)
            revision = str(payload.get(schema.F_REVISION, ""))
            counts = units.setdefault(page, {})
            counts[unit] = counts.get(unit, 0) + 1
            seen = held.get(page)
            if seen is None:
                source = str(payload.get(schema.F_SOURCE, ""))
                held[page] = Indexed(str(payload[schema.F_DOC_HASH]), source, revision, counts)
            elif seen.revision != revision:
                held[page] = replace(seen, revision="")
        if offset is None:
            break
    return held


def _is_current(
    held: dict[str, Indexed], options: SyncOptions, doc_id: str, doc_hash: str
) -> bool:
    """The index holds `doc_id` whole (one revision on every chunk) at `doc_hash`."""
    indexed = held.get(doc_id)
    return (
        indexed is not None
        and indexed.revision != ""
        and indexed.doc_hash == _indexed_hash(doc_hash, options)
    )


def _of_unit(doc_id: str) -> Equals:
    """The filter condition that selects every chunk of one runbook unit."""
    return Equals(schema.F_DOC_ID, doc_id)


def path_key(path: str) -> str:
    """`kubernetes/KubePodCrashLooping.md` -> `kubernetes/kubepodcrashlooping`."""
    return path.lower().removesuffix(".md")


def name_text(doc: Document) -> str:
    """What a runbook is called: its title and its alert names, as words. A section of a
    page is titled by its alert's name alone, so its title is read as words like a file's
    ("Admin audit worker CPU throttling"): whole, the identifier is one more name term
    that no renamed alert spells, and it held a section's `name_recall` far below a file's
    (docs/RETRIEVAL.md)."""
    title = split_identifier(doc.title) if doc.unit_anchor else doc.title
    return ". ".join([title, *(split_identifier(n) for n in doc.alert_names)])


def document_text(doc: Document) -> str:
    return "\n".join([name_text(doc), doc.body])


def payload_for(
    doc: Document, chunk: Chunk, embed_model: str, terms: tuple[list[int], list[int]] | None
) -> dict[str, object]:
    """A chunk's payload; `terms` (the document's text and name term ids) go on chunk 0."""
    extra: dict[str, object] = {}
    if terms is not None:
        extra = {schema.F_DOC_TERMS: terms[0], schema.F_NAME_TERMS: terms[1]}
    return {
        **extra,
        schema.F_DOC_ID: doc.doc_id,
        schema.F_PAGE_ID: doc.page,
        schema.F_UNIT_ANCHOR: doc.unit_anchor,
        schema.F_SOURCE: doc.source,
        schema.F_PATH: doc.path,
        schema.F_TITLE: doc.title,
        schema.F_SECTION: chunk.section,
        schema.F_ANCHOR: chunk.anchor,
        schema.F_TEXT: chunk.text,
        schema.F_ALERT_NAMES: list(doc.alert_names),
        schema.F_ALERT_KEYS: sorted({name_key(n) for n in doc.alert_names}),
        schema.F_SERVICES: list(doc.services),
        schema.F_SERVICE_KEYS: sorted({name_key(s) for s in doc.services}),
        schema.F_REVISION: doc.revision,
        schema.F_DOC_HASH: doc.doc_hash,
        schema.F_LAST_UPDATED: doc.last_updated.isoformat(),
        schema.F_CHUNK_INDEX: chunk.index,
        schema.F_EMBED_MODEL: embed_model,
        schema.F_METRICS: list(quoted_names(chunk.text)),
        schema.F_PATH_KEY: path_key(doc.path),
        schema.F_ACTIONABLE: actionable(chunk.section, chunk.text),
        schema.F_URL: doc.url or "",
    }


@dataclass
class SyncMemo:
    """What a long-running sync (ingest.periodic) keeps between runs, so that a file that did
    not change is neither read nor chunked again: at 1,500 runbooks that is about 8 s of
    Python per run here, beside the serving threads."""

    documents: DocumentMemo = field(default_factory=dict)
    #: Units by indexed document hash (content, chunking settings and recipe).
    units: dict[str, tuple[Unit, ...]] = field(default_factory=dict)


class Syncer:
    def __init__(
        self,
        index: Index,
        embedder: Embedder,
        cache: EmbeddingCache,
        memo: SyncMemo | None = None,
        reader: Reader | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.cache = cache
        self.memo = memo
        #: A bi-encoder reader embeds each chunk as it reads it (passage_vectors), once.
        self.reader = reader if reader is not None and reader.kind == BI else None

    def run(self, options: SyncOptions, progress: Progress | None = None) -> SyncReport:
        # Checked before reading sources so a model mismatch writes nothing at all.
        schema.ensure_collection(self.index, self.embedder.identity)
        options = replace(options, reader_model=self.reader.digest if self.reader else "")
        report = SyncReport()
        documents: list[Document] = []
        sources: set[str] = set()
        failed = report.failed
        roots = name_roots(options.roots, [s.name for s in options.sources])
        for root in roots:
            memo = self.memo.documents if self.memo is not None else None
            scan = scan_root(
                root.path, name=root.name, use_git=options.use_git, memo=memo,
                link=options.links.get(root.name, options.links.get("")), kinds=options.kinds,
            )
            documents.extend(scan.documents)
            report.errors.extend(scan.errors)
            sources.add(root.name)
            if scan.errors:
                failed.setdefault(root.name, scan.errors[0].reason)
        held = read_indexed(self.index)
        kept: list[str] = []
        for source in options.sources:
            found = source.scan(partial(_is_current, held, options))
            documents.extend(found.documents)
            kept.extend(found.kept)
            report.errors.extend(found.errors)
            sources.add(source.name)
            if found.errors:
                failed.setdefault(source.name, found.errors[0].reason)
        for error in report.errors:
            log.error("ingest.source_error", path=error.path, reason=error.reason)

        pages = [self._page(doc, options) for doc in documents]
        if self.memo is not None:
            current = {page.doc.doc_hash for page in pages}
            self.memo.units = {h: u for h, u in self.memo.units.items() if h in current}
        report.migrated = migrate(self.index, pages, held, claims(roots, sources), failed)
        # Loaded: read without an error now, or holding documents from an earlier read.
        report.loaded = frozenset(
            (sources - failed.keys()) | {h.source for h in held.values()}
            | {page.doc.source for page in pages}
        )
        plan = make_plan(pages, held, sources, kept)
        report.skipped = len(plan.unchanged)
        self._upsert(plan, report, progress)
        self._refresh_revisions(plan)

        report.prune_skipped = bool(report.errors) or not options.prune
        if report.prune_skipped:
            if report.errors:
                log.warning(
                    "ingest.prune_skipped",
                    reason="a source failed during this run",
                    errors=len(report.errors),
                )
        else:
            plan, report.prune_held = guard_shrink(plan, held, options.prune_max_fraction)
            self._prune(plan, report)
        self._store_stats()
        return report

    def _page(self, doc: Document, options: SyncOptions) -> Page:
        """The document with its runbook units (ingest.units), chunked with the anchors of
        the host it is read on."""
        indexed = replace(doc, doc_hash=_indexed_hash(doc.doc_hash, options))
        known = self.memo.units.get(indexed.doc_hash) if self.memo is not None else None
        units = known
        if units is None:
            units = tuple(
                chunk_units(
                    doc.body,
                    max_chars=options.chunk_max_chars,
                    min_chars=options.chunk_min_chars,
                    style=style_for(doc.url, options.kinds),
                    alert_names=doc.alert_names,
                )
            )
            if self.memo is not None:
                self.memo.units[indexed.doc_hash] = units
        return Page(indexed, tuple(unit_documents(indexed, units)))

    def _upsert(self, plan: Plan, report: SyncReport, progress: Progress | None) -> None:
        pending = [(doc, chunk) for doc, chunks in plan.upsert for chunk in chunks]
        total = len(pending)
        done = 0
        model = self.embedder.identity.dense
        for start in range(0, total, UPSERT_BATCH):
            batch = pending[start : start + UPSERT_BATCH]
            texts = [embed_text(doc.title, doc.alert_names, chunk) for doc, chunk in batch]
            dense = self._dense_vectors(texts, report)
            sparse = self.embedder.sparse(texts)
            terms = self._terms([doc for doc, chunk in batch if chunk.index == 0])
            payloads = [
                payload_for(doc, chunk, model, terms.get(doc.doc_id) if chunk.index == 0 else None)
                for doc, chunk in batch
            ]
            self._read(payloads)
            points = [
                IndexPoint(
                    id=schema.point_id(doc.doc_id, chunk.index), dense=vec, sparse=sp, payload=pl
                )
                for (doc, chunk), vec, sp, pl in zip(batch, dense, sparse, payloads, strict=True)
            ]
            self.index.upsert(points)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        report.indexed_docs = plan.pages_upserted
        report.indexed_chunks = total

    def _read(self, payloads: Sequence[dict[str, object]]) -> None:
        """Each chunk's reader vector, in its payload (no reader: nothing)."""
        if self.reader is None or not payloads:
            return
        vectors = self.reader.passage_vectors([passage_text(p) for p in payloads])
        for payload, vector in zip(payloads, vectors, strict=True):
            payload[schema.F_READER_VECTOR] = pack(vector)
            payload[schema.F_READER_MODEL] = self.reader.digest

    def _terms(self, docs: Sequence[Document]) -> dict[str, tuple[list[int], list[int]]]:
        """Doc id -> (term ids of the whole document, term ids of its name). BM25 tokens,
        so they are the words the query's sparse vector is made of (stemmed, no stopwords)."""
        if not docs:
            return {}
        texts = [document_text(d) for d in docs] + [name_text(d) for d in docs]
        vectors = self.embedder.sparse(texts)
        whole, names = vectors[: len(docs)], vectors[len(docs) :]
        return {
            d.doc_id: (sorted(w.indices), sorted(n.indices))
            for d, w, n in zip(docs, whole, names, strict=True)
        }

    def _store_stats(self) -> CorpusStats:
        """Recompute the corpus statistics from the first chunk of every runbook unit: the
        units of one page are runbooks of their own, as separate files would be."""
        first = Filter(must=(Equals(schema.F_CHUNK_INDEX, 0),))
        fields = [schema.F_DOC_ID, schema.F_DOC_TERMS, schema.F_NAME_TERMS]
        rows: list[tuple[str, list[int], list[int]]] = []
        offset: str | None = None
        while True:
            points, offset = self.index.scroll(first, 1024, fields=fields, offset=offset)
            for point in points:
                payload = point.payload
                rows.append(
                    (
                        str(payload[schema.F_DOC_ID]),
                        list(payload.get(schema.F_DOC_TERMS, [])),
                        list(payload.get(schema.F_NAME_TERMS, [])),
                    )
                )
            if offset is None:
                break
        stats = CorpusStats.from_documents(rows)
        schema.write_stats(self.index, stats)
        return stats

    def _refresh_revisions(self, plan: Plan) -> None:
        for doc in plan.revised:
            self.index.set_payload(
                {schema.F_REVISION: doc.revision},
                Filter(must=(Equals(schema.F_PAGE_ID, doc.doc_id),)),
            )
        if plan.revised:
            log.info("ingest.revisions_refreshed", documents=len(plan.revised))

    def _dense_vectors(self, texts: list[str], report: SyncReport) -> list[list[float]]:
        cached = self.cache.get_many(texts)
        missing = [i for i, vec in enumerate(cached) if vec is None]
        fresh = self.embedder.dense([texts[i] for i in missing]) if missing else []
        self.cache.put_many([texts[i] for i in missing], fresh)
        vectors: list[list[float]] = []
        fresh_iter = iter(fresh)
        for vec in cached:
            vectors.append(vec if vec is not None else next(fresh_iter))
        report.embedded += len(texts)
        report.from_cache += len(texts) - len(missing)
        return vectors

    def _prune(self, plan: Plan, report: SyncReport) -> None:
        for shrink in plan.shrink:
            stale = AtLeast(schema.F_CHUNK_INDEX, shrink.keep)
            self.index.delete(Filter(must=(_of_unit(shrink.doc_id), stale)))
            report.pruned_chunks += shrink.stale
        if plan.removed:
            removed = tuple(plan.removed)
            self.index.delete(Filter(must=(AnyOf(schema.F_PAGE_ID, removed),)))
            # Chunks indexed before units existed carry no page id.
            self.index.delete(Filter(must=(AnyOf(schema.F_DOC_ID, removed),)))
            report.removed_docs = len(plan.removed)
