"""The sync plan: compare what the sources hold with what the collection holds. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ingest.document import Chunk, Document


@dataclass(frozen=True)
class Indexed:
    """What the collection holds for one document."""

    doc_hash: str
    chunk_count: int
    source: str
    revision: str = ""


@dataclass(frozen=True)
class Shrink:
    doc_id: str
    keep: int  # chunks 0..keep-1 stay; the rest are stale
    stale: int


@dataclass(frozen=True)
class Plan:
    upsert: tuple[tuple[Document, tuple[Chunk, ...]], ...]
    unchanged: tuple[str, ...]
    #: Unchanged documents whose revision moved (a front-matter reformat, a checkout that
    #: became a git work tree): only the payload's revision is rewritten, nothing re-embeds.
    revised: tuple[Document, ...]
    shrink: tuple[Shrink, ...]
    removed: tuple[str, ...]


def make_plan(
    chunked: Iterable[tuple[Document, tuple[Chunk, ...]]],
    indexed: Mapping[str, Indexed],
    synced_sources: Iterable[str],
    kept: Iterable[str] = (),
) -> Plan:
    """Decide what to write and what to delete.

    Only documents of the roots in this run can be removed: syncing one root never deletes
    another root's runbooks. A document is unchanged when its hash and chunk count match
    what is indexed; anything else is re-upserted (point ids are deterministic, so this
    overwrites in place) and loses the chunks past its new length. The revision is not part
    of the hash (see ingest.sources), so an unchanged document can still need its revision
    refreshed. `kept` documents were found current by their source without being read
    (ingest.incremental): unchanged, and not removed.
    """
    upsert: list[tuple[Document, tuple[Chunk, ...]]] = []
    unchanged: list[str] = list(kept)
    revised: list[Document] = []
    shrink: list[Shrink] = []
    seen: set[str] = set(unchanged)
    for doc, chunks in chunked:
        seen.add(doc.doc_id)
        held = indexed.get(doc.doc_id)
        if held is not None and held.doc_hash == doc.doc_hash and held.chunk_count == len(chunks):
            unchanged.append(doc.doc_id)
            if held.revision != doc.revision:
                revised.append(doc)
            continue
        upsert.append((doc, chunks))
        if held is not None and held.chunk_count > len(chunks):
            shrink.append(Shrink(doc.doc_id, len(chunks), held.chunk_count - len(chunks)))
    sources = set(synced_sources)
    removed = sorted(
        doc_id for doc_id, held in indexed.items() if held.source in sources and doc_id not in seen
    )
    return Plan(tuple(upsert), tuple(unchanged), tuple(revised), tuple(shrink), tuple(removed))
