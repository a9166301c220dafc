"""Confluence Cloud, REST API v2: spaces by key, a space's (or a label's) pages, one page.

A listing asks for no body: it names every page in scope with its version, which is what
tells a changed, new or deleted page. Bodies are fetched only for pages that changed, one
request each (`include-labels` brings the labels with it). Space and label ids are looked
up once per process.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from ingest.confluence.errors import ConfluenceError
from ingest.confluence.http import ConfluenceHttp
from ingest.confluence.page import Page, PageRef
from ingest.confluence.shapes import ApiModel, Body, Labels, Links, make_page, parse, results

LISTING_LIMIT = 250


class _Space(ApiModel):
    id: str
    key: str


class _Version(ApiModel):
    number: int
    created_at: datetime = Field(alias="createdAt")


class _Summary(ApiModel):
    id: str
    title: str = ""
    version: _Version


class _Page(_Summary):
    body: Body = Field(default_factory=Body)
    labels: Labels = Field(default_factory=Labels)
    links: Links = Field(default_factory=Links, alias="_links")


class _LabelInfo(ApiModel):
    id: str


class _LabelDetails(ApiModel):
    label: _LabelInfo


class CloudSite:
    def __init__(self, http: ConfluenceHttp, spaces: tuple[str, ...], label: str | None) -> None:
        self.http = http
        self._spaces = spaces
        self._label = label
        self._space_ids: dict[str, str] = {}
        self._label_id: str | None = None

    def listing(self, space: str) -> list[PageRef]:
        space_id = self._space_id(space)
        if self._label:
            label_id = self._label_id or self._find_label()
            path, params = f"api/v2/labels/{label_id}/pages", {"space-id": space_id}
        else:
            path, params = f"api/v2/spaces/{space_id}/pages", {"status": "current"}
        refs: list[PageRef] = []
        try:
            for body in self.http.pages(path, {**params, "limit": str(LISTING_LIMIT)}):
                for item in results(body):
                    summary = parse(_Summary, item)
                    refs.append(PageRef(summary.id, space, summary.version.number))
        except ConfluenceError:
            # A space or label deleted and made again has a new id: look both up next time.
            self._space_ids.clear()
            self._label_id = None
            raise
        return refs

    def page(self, ref: PageRef) -> Page | None:
        body = self.http.get_json(
            f"api/v2/pages/{ref.id}",
            {"body-format": "storage", "include-labels": "true"},
            missing_ok=True,
        )
        if body is None:
            return None
        page = parse(_Page, body)
        version = (page.version.number, page.version.created_at)
        return make_page(ref, self.http.base_url, page.title, version, page.labels, page.body,
                         page.links)

    def _space_id(self, space: str) -> str:
        """Every configured space is looked up in one request, the first time one is needed."""
        if space not in self._space_ids:
            body = self.http.get_json(
                "api/v2/spaces", {"keys": ",".join(self._spaces), "limit": str(LISTING_LIMIT)}
            )
            found = [parse(_Space, item) for item in results(body or {})]
            self._space_ids.update({item.key: item.id for item in found})
        if space not in self._space_ids:
            raise ConfluenceError(
                f"CONFLUENCE_SPACES names {space}, which the token's user cannot see: check "
                "the space key, or give the user view permission on the space"
            )
        return self._space_ids[space]

    def _find_label(self) -> str:
        """Label ids come from REST v1 (`label?name=`): v2 cannot find a label by name.
        A label that does not exist is an error, never an empty listing: read as one, it
        would prune every page of the source."""
        body = self.http.get_json("rest/api/label", {"name": str(self._label)}, missing_ok=True)
        if body is None:
            raise ConfluenceError(
                f"CONFLUENCE_LABEL {self._label!r} does not exist on {self.http.base_url}: "
                "check its spelling (a label exists once a page carries it); nothing is "
                "pruned until it is found"
            )
        self._label_id = parse(_LabelDetails, body).label.id
        return self._label_id


__all__ = ["LISTING_LIMIT", "CloudSite"]
