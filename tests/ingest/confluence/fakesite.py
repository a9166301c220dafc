"""A Confluence site in memory, served through respx with Atlassian's documented shapes.

`FakeSite` holds spaces and pages; `serve_cloud` answers REST v2 (spaces, space and label
page listings with cursor pagination, one page with its storage body and labels) and
`serve_datacenter` answers REST v1 (CQL content search with start/limit paging, one content
with `body.storage,version,metadata.labels`). Tests edit, delete and restrict pages between
syncs and count the requests per route.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import quote_plus

import httpx
import respx

CLOUD = "https://acme.atlassian.net"
DATACENTER = "https://confluence.example.com"
#: Pinned: nothing depends on today's date.
EPOCH = datetime(2026, 10, 1, 9, 30, tzinfo=UTC)
LABEL_ID = "720897"
_AUTHOR = "5b10ac8d82e05b22cc7d4ef5"


@dataclass
class FakePage:
    id: str
    space: str
    title: str
    storage: str
    version: int = 1
    labels: tuple[str, ...] = ("runbook",)
    #: Listed, but its body is refused (a page restriction the token's user is not in).
    restricted: bool = False

    @property
    def when(self) -> datetime:
        return EPOCH + timedelta(days=self.version)


@dataclass
class FakeSite:
    spaces: dict[str, str] = field(default_factory=lambda: {"OPS": "98306", "SRE": "98307"})
    pages: dict[str, FakePage] = field(default_factory=dict)
    #: Answer every request with this status (an expired token: 401).
    status: int | None = None
    #: Answer this many of the next requests with 429 and `Retry-After: 2`.
    throttle: int = 0

    def add(self, page: FakePage) -> FakePage:
        self.pages[page.id] = page
        return page

    def edit(self, page_id: str, storage: str) -> None:
        page = self.pages[page_id]
        page.storage = storage
        page.version += 1

    def delete(self, page_id: str) -> None:
        del self.pages[page_id]

    def in_space(self, key: str, label: str | None) -> list[FakePage]:
        found = [p for p in self.pages.values() if p.space == key]
        if label is not None:
            found = [p for p in found if label in p.labels]
        return sorted(found, key=lambda p: int(p.id))


def _page_of(items: list[FakePage], start: int, limit: int) -> tuple[list[FakePage], bool]:
    return items[start : start + limit], start + limit < len(items)


def _refused(site: FakeSite) -> httpx.Response | None:
    if site.throttle > 0:
        site.throttle -= 1
        return httpx.Response(429, headers={"Retry-After": "2"}, json={"message": "Rate limited"})
    if site.status is None:
        return None
    return httpx.Response(site.status, json={"statusCode": site.status, "message": "refused"})


def _cloud_version(page: FakePage) -> dict[str, object]:
    return {
        "createdAt": page.when.isoformat().replace("+00:00", "Z"),
        "message": "",
        "number": page.version,
        "minorEdit": False,
        "authorId": _AUTHOR,
    }


def _cloud_page(site: FakeSite, page: FakePage, with_body: bool) -> dict[str, object]:
    webui = f"/spaces/{page.space}/pages/{page.id}/{quote_plus(page.title)}"
    item: dict[str, object] = {
        "id": page.id,
        "status": "current",
        "title": page.title,
        "spaceId": site.spaces[page.space],
        "parentId": "65538",
        "parentType": "page",
        "position": 0,
        "authorId": _AUTHOR,
        "ownerId": _AUTHOR,
        "lastOwnerId": None,
        "createdAt": EPOCH.isoformat().replace("+00:00", "Z"),
        "version": _cloud_version(page),
        "body": {},
        "_links": {"webui": webui, "editui": f"/pages/resumedraft.action?draftId={page.id}",
                   "tinyui": f"/x/{page.id}"},
    }
    if with_body:
        item["body"] = {"storage": {"representation": "storage", "value": page.storage}}
        item["labels"] = {
            "results": [{"id": str(1000 + i), "name": n, "prefix": "global"}
                        for i, n in enumerate(page.labels)],
            "meta": {"hasMore": False, "cursor": ""},
            "_links": {"self": f"{CLOUD}/wiki/api/v2/pages/{page.id}/labels"},
        }
    return item


def serve_cloud(router: respx.MockRouter, site: FakeSite, *, limit: int = 250) -> None:
    """REST v2 under `CLOUD/wiki`. Cursors are the offset, opaque to the client."""
    api = f"{CLOUD}/wiki/api/v2"

    def spaces(request: httpx.Request) -> httpx.Response:
        keys = request.url.params.get("keys", "").split(",")
        found = [
            {"id": sid, "key": key, "name": f"{key} space", "type": "global", "status": "current",
             "authorId": _AUTHOR, "createdAt": EPOCH.isoformat(), "homepageId": "65538",
             "description": None, "icon": None, "_links": {"webui": f"/spaces/{key}"}}
            for key, sid in site.spaces.items() if key in keys
        ]
        return _refused(site) or httpx.Response(
            200, json={"results": found, "_links": {"base": f"{CLOUD}/wiki"}}
        )

    def listing(request: httpx.Request, pages: list[FakePage], path: str) -> httpx.Response:
        start = int(request.url.params.get("cursor", "0"))
        size = min(int(request.url.params.get("limit", "25")), limit)
        chunk, more = _page_of(pages, start, size)
        links: dict[str, str] = {"base": f"{CLOUD}/wiki"}
        if more:
            query = {k: v for k, v in request.url.params.items() if k != "cursor"}
            query["cursor"] = str(start + size)
            links["next"] = f"/wiki/api/v2/{path}?" + "&".join(f"{k}={v}" for k, v in query.items())
        body = {"results": [_cloud_page(site, p, False) for p in chunk], "_links": links}
        return _refused(site) or httpx.Response(200, json=body)

    def space_pages(request: httpx.Request, space_id: str) -> httpx.Response:
        key = next(k for k, v in site.spaces.items() if v == space_id)
        return listing(request, site.in_space(key, None), f"spaces/{space_id}/pages")

    def label_pages(request: httpx.Request, label_id: str) -> httpx.Response:
        space_id = request.url.params["space-id"]
        key = next(k for k, v in site.spaces.items() if v == space_id)
        return listing(request, site.in_space(key, "runbook"), f"labels/{label_id}/pages")

    def label_info(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("name") != "runbook":
            return httpx.Response(404, json={"statusCode": 404, "message": "No label found"})
        label = {"prefix": "global", "name": "runbook", "id": LABEL_ID, "label": "runbook"}
        return _refused(site) or httpx.Response(
            200, json={"label": label, "associatedContents": {"results": [], "start": 0,
                                                             "limit": 25, "size": 0}}
        )

    def one_page(request: httpx.Request, page_id: str) -> httpx.Response:
        page = site.pages.get(page_id)
        if page is None or page.restricted:
            return _refused(site) or httpx.Response(
                404, json={"errors": [{"status": 404, "code": "NOT_FOUND", "title": "Not Found"}]}
            )
        return _refused(site) or httpx.Response(200, json=_cloud_page(site, page, True))

    router.get(f"{api}/spaces", name="spaces").mock(side_effect=spaces)
    router.get(url__regex=rf"^{re.escape(api)}/spaces/(?P<space_id>\d+)/pages",
               name="listing").mock(side_effect=space_pages)
    router.get(url__regex=rf"^{re.escape(api)}/labels/(?P<label_id>\d+)/pages",
               name="label_listing").mock(side_effect=label_pages)
    router.get(f"{CLOUD}/wiki/rest/api/label", name="label").mock(side_effect=label_info)
    router.get(url__regex=rf"^{re.escape(api)}/pages/(?P<page_id>\d+)",
               name="page").mock(side_effect=one_page)


def _dc_version(page: FakePage) -> dict[str, object]:
    return {
        "by": {"type": "known", "username": "oncall", "userKey": "8a7f8081",
               "displayName": "On call"},
        "when": page.when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "message": "",
        "number": page.version,
        "minorEdit": False,
        "_links": {
            "self": f"{DATACENTER}/rest/experimental/content/{page.id}/version/{page.version}"
        },
    }


def _dc_content(page: FakePage, with_body: bool) -> dict[str, object]:
    item: dict[str, object] = {
        "id": page.id,
        "type": "page",
        "status": "current",
        "title": page.title,
        "version": _dc_version(page),
        "_links": {"webui": f"/display/{page.space}/{quote_plus(page.title)}",
                   "self": f"{DATACENTER}/rest/api/content/{page.id}", "tinyui": f"/x/{page.id}"},
        "_expandable": {"container": f"/rest/api/space/{page.space}", "ancestors": "",
                        "children": f"/rest/api/content/{page.id}/child"},
    }
    if with_body:
        item["body"] = {"storage": {"value": page.storage, "representation": "storage",
                                    "_expandable": {"content": f"/rest/api/content/{page.id}"}},
                        "_expandable": {"view": "", "export_view": ""}}
        labels = [{"prefix": "global", "name": n, "id": str(2000 + i)}
                  for i, n in enumerate(page.labels)]
        item["metadata"] = {"labels": {"results": labels, "start": 0, "limit": 200,
                                       "size": len(labels)}, "_expandable": {"properties": ""}}
        links = dict(item["_links"])  # type: ignore[call-overload]
        item["_links"] = {**links, "base": DATACENTER, "context": ""}
    return item


_CQL = re.compile(r'type=page and space="(?P<space>[^"]+)"(?: and label="(?P<label>[^"]+)")?$')


def serve_datacenter(router: respx.MockRouter, site: FakeSite, *, limit: int = 200) -> None:
    """REST v1 at `DATACENTER` (no context path)."""

    def search(request: httpx.Request) -> httpx.Response:
        match = _CQL.match(request.url.params.get("cql", ""))
        if match is None:
            return httpx.Response(400, json={"statusCode": 400, "message": "Could not parse cql"})
        pages = site.in_space(match["space"], match["label"])
        start = int(request.url.params.get("start", "0"))
        size = min(int(request.url.params.get("limit", "25")), limit)
        chunk, more = _page_of(pages, start, size)
        links: dict[str, str] = {"base": DATACENTER, "context": "",
                                 "self": f"{DATACENTER}/rest/api/content/search"}
        if more:
            query = {k: v for k, v in request.url.params.items() if k != "start"}
            query["start"] = str(start + size)
            links["next"] = "/rest/api/content/search?" + str(httpx.QueryParams(query))
        body = {"results": [_dc_content(p, False) for p in chunk], "start": start,
                "limit": size, "size": len(chunk), "totalSize": len(pages),
                "cqlQuery": match.group(0), "searchDuration": 12, "_links": links}
        return _refused(site) or httpx.Response(200, json=body)

    def content(request: httpx.Request, page_id: str) -> httpx.Response:
        page = site.pages.get(page_id)
        if page is None or page.restricted:
            return _refused(site) or httpx.Response(
                404, json={"statusCode": 404, "data": {"authorized": False, "valid": True,
                           "errors": [], "successful": False},
                           "message": f"No content found with id: ContentId{{id={page_id}}}"}
            )
        return _refused(site) or httpx.Response(200, json=_dc_content(page, True))

    def space(request: httpx.Request, key: str) -> httpx.Response:
        if key not in site.spaces:
            return _refused(site) or httpx.Response(
                404, json={"statusCode": 404, "message": f"No space with key : {key}"}
            )
        body = {"id": int(site.spaces[key]), "key": key, "name": key, "type": "global"}
        return _refused(site) or httpx.Response(200, json=body)

    router.get(f"{DATACENTER}/rest/api/content/search", name="listing").mock(side_effect=search)
    router.get(url__regex=rf"^{re.escape(DATACENTER)}/rest/api/space/(?P<key>[^/?]+)$",
               name="space").mock(side_effect=space)
    router.get(url__regex=rf"^{re.escape(DATACENTER)}/rest/api/content/(?P<page_id>\d+)",
               name="page").mock(side_effect=content)
