"""Documents whose id changes while their content does not: moved, never embedded again.

Before sources had names (ingest.naming), a folder's documents were `<folder name>:<path>`:
two folders named alike shared ids, and a git checkout took its folder's name. A document is
now `<source name>:<path>`. Where a source's name is not the one its documents were indexed
under (its `legacy` name, its folder's), the pages held under the legacy name move:

- a legacy page is copied, vectors and payload, to the new id of each source that claims
  the legacy name and holds the same path at the same indexed hash; the plan then finds
  those pages unchanged, so nothing is read twice or embedded;
- the legacy copies are then deleted; so is whatever else the legacy name held, once every
  source claiming it was read without an error (it is in none of them: a page edited or
  deleted while the service was being upgraded).

A legacy name that a configured source still uses is left alone: those are its documents.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass

import structlog

from enricher.index import schema
from enricher.index.engine import Equals, Filter, Index, IndexPoint
from ingest.naming import Root
from ingest.plan import Indexed, Page

log = structlog.get_logger(__name__)

__all__ = ["claims", "migrate"]


@dataclass(frozen=True)
class _Claim:
    legacy: str
    #: The sources that were indexed under `legacy`.
    sources: frozenset[str]


def claims(roots: Iterable[Root], names: Collection[str]) -> list[_Claim]:
    """The legacy names that configured roots were indexed under and no source uses now."""
    by_legacy: dict[str, set[str]] = {}
    for root in roots:
        if root.legacy != root.name and root.legacy not in names:
            by_legacy.setdefault(root.legacy, set()).add(root.name)
    return [_Claim(legacy, frozenset(sources)) for legacy, sources in sorted(by_legacy.items())]


def migrate(
    index: Index,
    pages: Iterable[Page],
    held: MutableMapping[str, Indexed],
    legacy: Iterable[_Claim],
    failed: Collection[str],
) -> int:
    """Move the legacy pages to their new ids, updating `held` to match; the count moved."""
    claimed = list(legacy)
    if not claimed:
        return 0
    by_page = {page.doc.doc_id: page for page in pages}
    moved = 0
    for claim in claimed:
        prefix = f"{claim.legacy}:"
        old_pages = sorted(i for i, h in held.items() if h.source == claim.legacy)
        for old in old_pages:
            path = old.removeprefix(prefix)
            for source in sorted(claim.sources):
                new = f"{source}:{path}"
                page = by_page.get(new)
                if new in held or page is None or page.doc.doc_hash != held[old].doc_hash:
                    continue
                held[new] = _copy(index, old, new, source, held[old])
                moved += 1
        if not claim.sources & set(failed):
            gone = old_pages
        else:  # a claimant may have missed files: only what was copied goes
            gone = [o for o in old_pages if any(f"{s}:{o.removeprefix(prefix)}" in held
                                                 for s in claim.sources)]
        for old in gone:
            index.delete(Filter(must=(Equals(schema.F_PAGE_ID, old),)))
            del held[old]
        log.info(
            "ingest.migrated", legacy=claim.legacy, sources=sorted(claim.sources),
            held=len(old_pages), deleted=len(gone),
        )
    return moved


def _copy(index: Index, old: str, new: str, source: str, indexed: Indexed) -> Indexed:
    """The chunks of page `old` written again as page `new` of `source`, vectors as they are."""
    points = index.points(Filter(must=(Equals(schema.F_PAGE_ID, old),)))
    copies: list[IndexPoint] = []
    for point in points:
        unit = new + str(point.payload[schema.F_DOC_ID]).removeprefix(old)
        payload: Mapping[str, object] = {
            **point.payload,
            schema.F_DOC_ID: unit,
            schema.F_PAGE_ID: new,
            schema.F_SOURCE: source,
        }
        chunk = int(point.payload[schema.F_CHUNK_INDEX])
        copies.append(IndexPoint(schema.point_id(unit, chunk), point.dense, point.sparse, payload))
    index.upsert(copies)
    units = {new + unit.removeprefix(old): count for unit, count in indexed.units.items()}
    return Indexed(indexed.doc_hash, source, indexed.revision, units)
