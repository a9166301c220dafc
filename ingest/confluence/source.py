"""The Confluence source: the configured spaces of one site, read incrementally.

Each scan lists every space (no bodies: ids and versions), and reads only the pages whose
version the index does not hold. A page the token cannot read (403/404 on the page) or one
without text is skipped and counted, and not asked for again until its version moves.
A space that cannot be listed becomes a `SourceError`: the sync then prunes nothing, so the
pages indexed before stay served.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import Protocol

import httpx
import structlog

from enricher.errors import ConfigError
from enricher.settings import Settings
from ingest.confluence.cloud import CloudSite
from ingest.confluence.datacenter import DataCenterSite
from ingest.confluence.errors import ConfluenceAuthError, ConfluenceError
from ingest.confluence.http import ConfluenceHttp
from ingest.confluence.page import Page, PageRef
from ingest.confluence.runbook import page_doc_id, page_document, page_hash
from ingest.document import Document, SourceError
from ingest.incremental import IsCurrent, SourceScan

log = structlog.get_logger(__name__)

__all__ = ["ConfluenceSource", "Site", "from_settings"]


class Site(Protocol):
    http: ConfluenceHttp

    def listing(self, space: str) -> list[PageRef]: ...

    def page(self, ref: PageRef) -> Page | None: ...


class ConfluenceSource:
    def __init__(
        self, site: Site, spaces: tuple[str, ...], *, name: str, label: str | None = None
    ) -> None:
        self.site = site
        self.spaces = spaces
        self.name = name
        self._label = label
        #: Pages skipped (unreadable or empty) by id, at the version they were skipped at.
        self._skipped: dict[str, int] = {}

    def close(self) -> None:
        self.site.http.close()

    def scan(self, current: IsCurrent) -> SourceScan:
        documents: list[Document] = []
        kept: list[str] = []
        errors: list[SourceError] = []
        for space in self.spaces:
            try:
                refs = self.site.listing(space)
            except ConfluenceAuthError as exc:
                # Refused credentials refuse every space alike: one error for the source.
                errors.append(SourceError(path=self.name, reason=str(exc)))
                break
            except ConfluenceError as exc:
                errors.append(SourceError(path=f"{self.name}/{space}", reason=str(exc)))
                continue
            counts = {"listed": len(refs), "unchanged": 0, "read": 0, "skipped": 0}
            for ref in refs:
                doc_id = page_doc_id(self.name, ref.id)
                if current(doc_id, page_hash(self.name, space, ref.id, ref.version)):
                    kept.append(doc_id)
                    counts["unchanged"] += 1
                elif self._skipped.get(ref.id) == ref.version:
                    counts["skipped"] += 1
                else:
                    try:
                        result = self._read(ref)
                    except ConfluenceError as exc:
                        errors.append(SourceError(path=f"{self.name}/{space}", reason=str(exc)))
                        break
                    if isinstance(result, Document):
                        documents.append(result)
                        counts["read"] += 1
                    elif isinstance(result, SourceError):
                        errors.append(result)
                    else:
                        counts["skipped"] += 1
            log.info("confluence.scanned", source=self.name, space=space, **counts)
        return SourceScan(tuple(documents), tuple(kept), tuple(errors))

    def _read(self, ref: PageRef) -> Document | SourceError | None:
        page = self.site.page(ref)
        if page is None:
            log.warning("confluence.page_unreadable", page=ref.id, space=ref.space)
            self._skipped[ref.id] = ref.version
            return None
        result = page_document(page, self.name, self._label)
        if result is None:
            self._skipped[ref.id] = ref.version
        return result


class _Bearer(httpx.Auth):
    """A Data Center personal access token."""

    def __init__(self, token: str) -> None:
        self._header = f"Bearer {token}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


_CLOUD_FIX = (
    "create an API token at id.atlassian.com (Security > API tokens) for the account of "
    "CONFLUENCE_EMAIL and set CONFLUENCE_API_TOKEN"
)
_DATACENTER_FIX = (
    "create a personal access token (your profile > Personal Access Tokens) for a user "
    "who can view the spaces and set CONFLUENCE_PERSONAL_TOKEN"
)


def from_settings(
    settings: Settings, *, sleep: Callable[[float], None] = time.sleep
) -> ConfluenceSource | None:
    """The source CONFLUENCE_* describe (checked by Settings), or None without CONFLUENCE_URL."""
    url = settings.confluence_url
    if url is None:
        return None
    spaces, label = settings.confluence_spaces, settings.confluence_label
    timeout_s = settings.confluence_timeout_s
    site: Site
    if settings.confluence_personal_token is not None:
        auth: httpx.Auth = _Bearer(settings.confluence_personal_token.get_secret_value())
        http = ConfluenceHttp(url, auth, fix_hint=_DATACENTER_FIX, timeout_s=timeout_s, sleep=sleep)
        site = DataCenterSite(http, label)
    elif settings.confluence_api_token is not None and settings.confluence_email is not None:
        token = settings.confluence_api_token.get_secret_value()
        auth = httpx.BasicAuth(settings.confluence_email, token)
        base = url.rstrip("/")
        base = base if base.endswith("/wiki") else f"{base}/wiki"
        http = ConfluenceHttp(base, auth, fix_hint=_CLOUD_FIX, timeout_s=timeout_s, sleep=sleep)
        site = CloudSite(http, spaces, label)
    else:
        raise ConfigError(
            "CONFLUENCE_URL is set without credentials: set CONFLUENCE_EMAIL and "
            "CONFLUENCE_API_TOKEN (Cloud) or CONFLUENCE_PERSONAL_TOKEN (Data Center)"
        )
    return ConfluenceSource(site, spaces, name=f"confluence@{httpx.URL(url).host}", label=label)
