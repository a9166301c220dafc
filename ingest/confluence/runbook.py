"""A Confluence page as a runbook `Document`. Pure.

The title is the runbook's name; Page Properties rows and labels are its front matter; the
version number is its revision and the version's date its `last_updated` (unless a
"Last reviewed" property says otherwise); the page's web link is its URL.

`doc_hash` is made from the page's space, id and version alone, so a listing (which carries
no body) tells whether the indexed copy is current: Confluence saves a new version for every
edit of the title or body.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, time

from ingest.confluence.page import Page
from ingest.confluence.storage import CONVERTER_VERSION, convert_storage
from ingest.document import Document, SourceError
from ingest.frontmatter import FrontMatterError, parse_front_matter

__all__ = ["page_doc_id", "page_document", "page_hash"]

#: Bump when a field of the Document made from the same page version changes.
PAGE_HASH_VERSION = 1

#: Page Properties keys (lowercased, spaces and dashes as underscores) to front matter keys.
_PROPERTY_KEYS = {
    "title": "title",
    "alert_names": "alert_names",
    "alert_name": "alert_names",
    "alerts": "alert_names",
    "alert": "alert_names",
    "services": "services",
    "service": "services",
    "owner": "owner",
    "last_reviewed": "last_reviewed",
    "tags": "tags",
}
_LISTS = ("alert_names", "services", "tags")


def page_doc_id(source: str, page_id: str) -> str:
    return f"{source}:{page_id}"


def page_hash(source: str, space: str, page_id: str, version: int) -> str:
    recipe = f"{PAGE_HASH_VERSION}|{CONVERTER_VERSION}|{source}|{space}|{page_id}|{version}"
    return hashlib.sha256(recipe.encode()).hexdigest()


def page_document(
    page: Page, source: str, scope_label: str | None
) -> Document | SourceError | None:
    """None for a page without text (a parent page that only lists its children, say): it is
    no runbook, and no error either, which would hold back every prune."""
    path = f"{page.space}/{page.id}"
    converted = convert_storage(page.storage)
    if not converted.markdown.strip():
        return None
    meta: dict[str, object] = {}
    for key, value in converted.properties.items():
        field = _PROPERTY_KEYS.get(key.strip().lower().replace(" ", "_").replace("-", "_"))
        if field is not None and value.strip():
            meta[field] = _split(value) if field in _LISTS else value
    try:
        front = parse_front_matter(meta)
    except FrontMatterError as exc:
        return SourceError(path=path, reason=f"Page Properties: {exc}")
    labels = [label for label in page.labels if label != scope_label]
    tags = tuple(dict.fromkeys([*front.tags, *labels]))
    if front.last_reviewed is not None:
        last_updated = datetime.combine(front.last_reviewed, time(), tzinfo=UTC)
    else:
        last_updated = page.when.astimezone(UTC)
    title = front.title or page.title.strip() or path
    return Document(
        doc_id=page_doc_id(source, page.id),
        source=source,
        path=path,
        title=title,
        alert_names=tuple(front.alert_names) or (title,),
        services=tuple(front.services),
        owner=front.owner,
        tags=tags,
        last_updated=last_updated,
        revision=str(page.version),
        body=converted.markdown,
        doc_hash=page_hash(source, page.space, page.id, page.version),
        url=page.url,
    )


def _split(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]
