"""The sync plan: compare what the sources hold with what the collection holds. Pure.

Sync keeps files (pages): a page is skipped, refreshed or removed as a whole. A page with a
section per alert is indexed as several runbook units (ingest.units), each a document to
search, so the plan also prunes the units a changed page no longer has.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from ingest.document import Chunk, Document

#: One runbook unit of a page, as indexed: the unit as a document, and its chunks.
UnitChunks = tuple[Document, tuple[Chunk, ...]]


@dataclass(frozen=True)
class Page:
    """A scanned file: the document as read, and its units (itself when not cut)."""

    doc: Document
    units: tuple[UnitChunks, ...]


@dataclass(frozen=True)
class Indexed:
    """What the collection holds for one page."""

    doc_hash: str
    source: str
    revision: str = ""
    #: Unit doc id -> its chunk count (the page itself when it was not cut).
    units: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Shrink:
    #: The unit whose chunks past `keep` are stale (all of them when `keep` is 0).
    doc_id: str
    keep: int  # chunks 0..keep-1 stay; the rest are stale
    stale: int


@dataclass(frozen=True)
class Plan:
    #: The units of every new or changed page.
    upsert: tuple[UnitChunks, ...]
    #: Page doc ids.
    unchanged: tuple[str, ...]
    #: Unchanged pages whose revision moved (a front-matter reformat, a checkout that
    #: became a git work tree): only the payload's revision is rewritten, nothing re-embeds.
    revised: tuple[Document, ...]
    shrink: tuple[Shrink, ...]
    #: Page doc ids.
    removed: tuple[str, ...]
    #: How many pages `upsert` holds the units of.
    pages_upserted: int = 0


def make_plan(
    pages: Iterable[Page],
    indexed: Mapping[str, Indexed],
    synced_sources: Iterable[str],
    kept: Iterable[str] = (),
) -> Plan:
    """Decide what to write and what to delete.

    Only pages of the roots in this run can be removed: syncing one root never deletes
    another root's runbooks. A page is unchanged when its hash and the chunk count of each
    of its units match what is indexed; anything else is re-upserted (point ids are
    deterministic, so this overwrites in place), and its units lose the chunks past their
    new length; a unit the page no longer has loses them all. The revision is not part of
    the hash (see ingest.sources), so an unchanged page can still need its revision
    refreshed. `kept` pages were found current by their source without being read
    (ingest.incremental): unchanged, and not removed.
    """
    upsert: list[UnitChunks] = []
    unchanged: list[str] = list(kept)
    revised: list[Document] = []
    shrink: list[Shrink] = []
    seen: set[str] = set(unchanged)
    changed = 0
    for page in pages:
        doc = page.doc
        seen.add(doc.doc_id)
        held = indexed.get(doc.doc_id)
        counts = {unit.doc_id: len(chunks) for unit, chunks in page.units}
        if held is not None and held.doc_hash == doc.doc_hash and dict(held.units) == counts:
            unchanged.append(doc.doc_id)
            if held.revision != doc.revision:
                revised.append(doc)
            continue
        upsert.extend(page.units)
        changed += 1
        for unit_id, count in (held.units if held is not None else {}).items():
            keep = counts.get(unit_id, 0)
            if count > keep:
                shrink.append(Shrink(unit_id, keep, count - keep))
    sources = set(synced_sources)
    removed = sorted(
        doc_id for doc_id, held in indexed.items() if held.source in sources and doc_id not in seen
    )
    return Plan(
        tuple(upsert), tuple(unchanged), tuple(revised), tuple(shrink), tuple(removed), changed
    )


#: A listing that drops this many pages of a source or fewer is never held back: deleting a
#: runbook or two is editing. A label lost or a site being reindexed drops them by the dozen.
PRUNE_FLOOR = 2


@dataclass(frozen=True)
class Held:
    """Pages of one source kept although its listing no longer names them."""

    source: str
    #: The pages its listing dropped, and the pages the index holds for it.
    dropped: int
    of: int


def guard_shrink(
    plan: Plan, indexed: Mapping[str, Indexed], max_fraction: float
) -> tuple[Plan, tuple[Held, ...]]:
    """The plan without the removals of any source whose listing shrank by more than
    `max_fraction` of its pages (PRUNE_MAX_FRACTION), and those sources. A source that
    suddenly lists far less (a Confluence reindex, a scope that lost its pages) keeps
    what it had until the shrink is confirmed."""
    dropped = Counter(indexed[doc_id].source for doc_id in plan.removed)
    totals = Counter(held.source for held in indexed.values())
    held = tuple(
        Held(source, count, totals[source])
        for source, count in sorted(dropped.items())
        if count > PRUNE_FLOOR and count > max_fraction * totals[source]
    )
    kept = {h.source for h in held}
    removed = tuple(d for d in plan.removed if indexed[d].source not in kept)
    return replace(plan, removed=removed), held
