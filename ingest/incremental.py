"""A source that names its documents' versions before reading them (Confluence, say).

The sync hands it `current(doc_id, doc_hash)`, which says whether the index already holds
that document at that hash. The source reads only the documents that are not current and
names the others as `kept`: they count as unchanged, are never read, chunked or embedded,
and are not pruned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ingest.document import Document, SourceError

#: `current(doc_id, doc_hash)`: the index holds this document at this hash.
IsCurrent = Callable[[str, str], bool]


@dataclass(frozen=True)
class SourceScan:
    #: New and changed documents, read in full.
    documents: tuple[Document, ...]
    #: Doc ids still in the source whose indexed copy is current.
    kept: tuple[str, ...]
    errors: tuple[SourceError, ...]


class IncrementalSource(Protocol):
    #: The `source` label of its documents; the sync prunes only sources it scanned.
    name: str

    def scan(self, current: IsCurrent) -> SourceScan: ...

    def close(self) -> None: ...


__all__ = ["IncrementalSource", "IsCurrent", "SourceScan"]
