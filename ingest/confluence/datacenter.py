"""Confluence Data Center and Server, REST API v1: CQL search for the listing, one content.

The listing is one CQL search per space (`type=page and space="OPS"`, and the label when
one is configured), expanding only `version`: no bodies. An empty listing asks whether the
space exists (`/rest/api/space/{key}`): a space key that does not exist is an error.
Changed pages are then read one by one with `expand=body.storage,version,metadata.labels`.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from ingest.confluence.errors import ConfluenceError
from ingest.confluence.http import ConfluenceHttp
from ingest.confluence.page import Page, PageRef
from ingest.confluence.shapes import ApiModel, Body, Labels, Links, make_page, parse, results

LISTING_LIMIT = 200


class _Version(ApiModel):
    number: int
    when: datetime


class _Content(ApiModel):
    id: str
    title: str = ""
    version: _Version


class _Metadata(ApiModel):
    labels: Labels = Field(default_factory=Labels)


class _FullContent(_Content):
    body: Body = Field(default_factory=Body)
    metadata: _Metadata = Field(default_factory=_Metadata)
    links: Links = Field(default_factory=Links, alias="_links")


class DataCenterSite:
    def __init__(self, http: ConfluenceHttp, label: str | None) -> None:
        self.http = http
        self._label = label

    def listing(self, space: str) -> list[PageRef]:
        cql = f'type=page and space="{space}"'
        if self._label:
            cql += f' and label="{self._label}"'
        params = {"cql": cql, "expand": "version", "limit": str(LISTING_LIMIT)}
        refs: list[PageRef] = []
        for body in self.http.pages("rest/api/content/search", params):
            for item in results(body):
                content = parse(_Content, item)
                refs.append(PageRef(content.id, space, content.version.number))
        if not refs and self.http.get_json(f"rest/api/space/{space}", missing_ok=True) is None:
            # CQL finds nothing in a space that does not exist: an error, not an empty
            # listing that would prune every page of the space.
            raise ConfluenceError(
                f"CONFLUENCE_SPACES names {space}, which does not exist on "
                f"{self.http.base_url} or which the token's user cannot see: check the space "
                "key, or give the user view permission on the space; nothing is pruned until "
                "it is found"
            )
        return refs

    def page(self, ref: PageRef) -> Page | None:
        body = self.http.get_json(
            f"rest/api/content/{ref.id}",
            {"expand": "body.storage,version,metadata.labels"},
            missing_ok=True,
        )
        if body is None:
            return None
        content = parse(_FullContent, body)
        version = (content.version.number, content.version.when)
        return make_page(ref, self.http.base_url, content.title, version,
                         content.metadata.labels, content.body, content.links)
