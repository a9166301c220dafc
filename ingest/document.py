"""Plain data for what ingestion reads and writes: documents and their chunks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Document:
    """One runbook file, with its metadata resolved (front matter wins over the path)."""

    #: Unique across sources: "<source>:<path>".
    doc_id: str
    #: The name of the source it came from (ingest.naming): what a page shows.
    source: str
    #: Path relative to the root, with forward slashes: "<service>/<alert_name>.md".
    path: str
    title: str
    alert_names: tuple[str, ...]
    services: tuple[str, ...]
    owner: str | None
    tags: tuple[str, ...]
    #: From front matter `last_reviewed`, else the file's last git commit, else mtime (UTC).
    last_updated: datetime
    #: `<commit>:<blob>` (its last commit, its blob) when the file is committed as it is,
    #: else the sha256 of the file content.
    revision: str
    #: Markdown body without the front matter.
    body: str
    #: sha256 over everything that influences the index (metadata + body).
    doc_hash: str
    #: Where a person reads it (a git host's blob URL, ingest.weblink); None when unknown.
    url: str | None = None
    #: For a unit of a page with a section per alert (ingest.units): the page's doc id.
    #: Empty for a page itself.
    page_id: str = ""
    #: For an alert's section of such a page: its heading's anchor. Empty otherwise.
    unit_anchor: str = ""

    @property
    def page(self) -> str:
        """The doc id of the file this runbook is read from: what sync keeps or prunes."""
        return self.page_id or self.doc_id


@dataclass(frozen=True)
class Chunk:
    """One section (or part of a long section) of a document."""

    index: int
    #: Heading path, joined with " › ", e.g. "Mitigation › Scale up". Empty for preamble.
    section: str
    #: Anchor of the deepest heading ("scale-up") as the page's host makes it (ingest.anchors);
    #: for a preamble, that of the alert section it opens, else empty.
    anchor: str
    #: The markdown text shown to people (heading line not repeated).
    text: str


@dataclass(frozen=True)
class Unit:
    """A page's chunks for one runbook on it (ingest.units): an alert's section, or the
    page's text outside such sections (the whole page when it has none)."""

    #: The alert heading's anchor; empty for the page's own text.
    anchor: str
    #: The alert heading as written; empty for the page's own text.
    heading: str
    chunks: tuple[Chunk, ...]
    #: The alert headings after `heading` that share its text (``## FooDown`` straight
    #: above ``## BarDown``, then one text for both), as written.
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceError:
    """A file that could not be read or parsed. It marks the run as errored."""

    path: str
    reason: str
