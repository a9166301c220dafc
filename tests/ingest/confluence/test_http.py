"""The HTTP seam: pagination by `_links.next`, Retry-After, retries, auth errors, no leaks."""

from __future__ import annotations

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from ingest.confluence.cloud import CloudSite
from ingest.confluence.errors import ConfluenceAuthError, ConfluenceUnavailable
from ingest.confluence.http import ConfluenceHttp
from ingest.confluence.page import PageRef

TOKEN = "ATATT3xFfGF0-not-a-real-token"
CLOUD = "https://acme.atlassian.net/wiki"
DATACENTER = "https://wiki.example.com/confluence"


class Waits(list[float]):
    """Stands in for time.sleep: records each wait instead of taking it."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(base: str, waits: Waits, attempts: int = 6) -> ConfluenceHttp:
    return ConfluenceHttp(
        base, httpx.BasicAuth("bot@acme.test", TOKEN), fix_hint="set CONFLUENCE_API_TOKEN",
        attempts=attempts, max_wait_s=30, sleep=waits,
    )


class TestPagination:
    @respx.mock
    def test_cloud_next_links_are_site_relative(self) -> None:
        """Cloud's `_links.next` starts with /wiki: it is joined to the site, not the base."""
        route = respx.get(f"{CLOUD}/api/v2/spaces/1/pages")
        route.side_effect = [
            httpx.Response(200, json={
                "results": [{"id": "1"}, {"id": "2"}],
                "_links": {"next": "/wiki/api/v2/spaces/1/pages?limit=2&cursor=b2Zmc2V0PTI",
                           "base": CLOUD}}),
            httpx.Response(200, json={"results": [{"id": "3"}], "_links": {"base": CLOUD}}),
        ]
        bodies = list(client(CLOUD, Waits()).pages("api/v2/spaces/1/pages", {"limit": "2"}))
        assert [item["id"] for body in bodies for item in body["results"]] == ["1", "2", "3"]
        assert str(route.calls[1].request.url) == (
            f"{CLOUD}/api/v2/spaces/1/pages?limit=2&cursor=b2Zmc2V0PTI"
        )

    @respx.mock
    def test_a_next_link_in_a_circle_stops(self) -> None:
        """A listing whose `_links.next` repeats is an error, not an endless sync."""
        respx.get(f"{CLOUD}/api/v2/pages").respond(
            json={"results": [], "_links": {"next": "/wiki/api/v2/pages?cursor=same"}})
        with pytest.raises(ConfluenceUnavailable, match="in a circle"):
            list(client(CLOUD, Waits()).pages("api/v2/pages", {}))

    @respx.mock
    def test_datacenter_next_links_are_relative_to_the_context_path(self) -> None:
        """Data Center's `_links.next` (/rest/api/...) lives under the context path."""
        route = respx.get(f"{DATACENTER}/rest/api/content/search")
        following = "/rest/api/content/search?cql=x&start=1"
        route.side_effect = [
            httpx.Response(200, json={"results": [{"id": "1"}], "start": 0, "limit": 1, "size": 1,
                                      "_links": {"base": DATACENTER, "context": "/confluence",
                                                 "next": following}}),
            httpx.Response(200, json={"results": [{"id": "2"}], "start": 1, "limit": 1, "size": 1,
                                      "_links": {"base": DATACENTER, "context": "/confluence"}}),
        ]
        bodies = list(client(DATACENTER, Waits()).pages("rest/api/content/search", {"cql": "x"}))
        assert len(bodies) == 2
        assert route.calls[1].request.url.params["start"] == "1"

    @respx.mock
    def test_a_next_link_to_another_site_is_refused(self) -> None:
        """Our credentials never follow a link off the configured site."""
        respx.get(f"{CLOUD}/api/v2/pages").respond(
            json={"results": [], "_links": {"next": "https://evil.example/steal"}})
        elsewhere = respx.get("https://evil.example/steal")
        with pytest.raises(ConfluenceUnavailable, match="another site"):
            list(client(CLOUD, Waits()).pages("api/v2/pages", {}))
        assert elsewhere.call_count == 0


class TestRetries:
    @respx.mock
    def test_a_429_storm_waits_as_told_and_then_succeeds(self) -> None:
        """Five 429s in a row, each with Retry-After: the client waits exactly that long
        (capped at max_wait_s) and the sixth attempt's answer is used."""
        route = respx.get(f"{CLOUD}/api/v2/spaces")
        route.side_effect = [
            *(httpx.Response(429, headers={"Retry-After": str(s)}) for s in (1, 2, 5, 90, 0)),
            httpx.Response(200, json={"results": []}),
        ]
        waits = Waits()
        with capture_logs() as logs:
            assert client(CLOUD, waits).get_json("api/v2/spaces") == {"results": []}
        assert waits == [1.0, 2.0, 5.0, 30.0, 0.0]
        assert route.call_count == 6
        assert [e["event"] for e in logs].count("confluence.retry") == 5

    @respx.mock
    def test_503_without_retry_after_backs_off_exponentially(self) -> None:
        """No Retry-After: 1, 2, 4 s between attempts; timeouts count as transient too."""
        route = respx.get(f"{CLOUD}/api/v2/spaces")
        route.side_effect = [httpx.Response(503), httpx.ReadTimeout("slow"), httpx.Response(502),
                             httpx.Response(200, json={"results": []})]
        waits = Waits()
        client(CLOUD, waits).get_json("api/v2/spaces")
        assert waits == [1.0, 2.0, 4.0]

    @respx.mock
    def test_a_storm_longer_than_the_attempts_is_a_clear_error(self) -> None:
        """After the last attempt the error names the site and says the index stays served."""
        respx.get(f"{CLOUD}/api/v2/spaces").respond(429, headers={"Retry-After": "3"})
        waits = Waits()
        with pytest.raises(ConfluenceUnavailable, match=r"after 3 attempts .*stay served"):
            client(CLOUD, waits, attempts=3).get_json("api/v2/spaces")
        assert waits == [3.0, 3.0]


class TestAuth:
    @respx.mock
    @pytest.mark.parametrize("status", [401, 403])
    def test_refused_credentials_are_not_retried_and_say_what_to_fix(self, status: int) -> None:
        """401/403 on a listing: one request, an error naming the fix, and no token in it
        or in any log line."""
        route = respx.get(f"{CLOUD}/api/v2/spaces").respond(status, json={"message": "no"})
        with capture_logs() as logs, pytest.raises(ConfluenceAuthError) as raised:
            client(CLOUD, Waits()).get_json("api/v2/spaces")
        assert route.call_count == 1
        assert "set CONFLUENCE_API_TOKEN" in str(raised.value)
        assert TOKEN not in str(raised.value) and TOKEN not in repr(logs)

    @respx.mock
    def test_basic_auth_carries_email_and_token(self) -> None:
        """Cloud auth is HTTP basic with the account's email and the API token."""
        route = respx.get(f"{CLOUD}/api/v2/spaces").respond(json={"results": []})
        client(CLOUD, Waits()).get_json("api/v2/spaces")
        expected = httpx.BasicAuth("bot@acme.test", TOKEN)._auth_header
        assert route.calls[0].request.headers["Authorization"] == expected

    @respx.mock
    @pytest.mark.parametrize("status", [403, 404])
    def test_an_unreadable_page_is_none_when_allowed(self, status: int) -> None:
        """A single page the token may not read answers None, not an error."""
        respx.get(f"{CLOUD}/api/v2/pages/7").respond(status)
        assert client(CLOUD, Waits()).get_json("api/v2/pages/7", missing_ok=True) is None

    @respx.mock
    def test_an_expired_token_on_a_page_is_still_an_auth_error(self) -> None:
        """401 is never taken for a restricted page."""
        respx.get(f"{CLOUD}/api/v2/pages/7").respond(401)
        with pytest.raises(ConfluenceAuthError):
            client(CLOUD, Waits()).get_json("api/v2/pages/7", missing_ok=True)


class TestLargePages:
    @respx.mock
    def test_a_five_megabyte_page_arrives_whole(self) -> None:
        """A 5 MB storage body comes through the client and the Cloud page shape intact."""
        storage = "<p>" + "x" * 5_000_000 + "</p><h2>The end</h2>"
        respx.get(f"{CLOUD}/api/v2/pages/9").respond(json={
            "id": "9", "status": "current", "title": "Big", "spaceId": "1",
            "version": {"number": 4, "createdAt": "2026-10-01T09:30:00.000Z"},
            "body": {"storage": {"representation": "storage", "value": storage}},
            "labels": {"results": [], "meta": {"hasMore": False, "cursor": ""}},
            "_links": {"webui": "/spaces/OPS/pages/9/Big"},
        })
        page = CloudSite(client(CLOUD, Waits()), ("OPS",), None).page(PageRef("9", "OPS", 4))
        assert page is not None
        assert page.storage == storage and page.version == 4
        assert page.url == f"{CLOUD}/spaces/OPS/pages/9/Big"


class TestCloudIds:
    @respx.mock
    def test_ids_are_looked_up_again_after_a_failed_listing(self) -> None:
        """A label made again gets a new id: the listing by the old one fails once, and the
        next listing looks the space and the label up again."""
        spaces = respx.get(f"{CLOUD}/api/v2/spaces").respond(
            json={"results": [{"id": "11", "key": "OPS"}]})
        label = respx.get(f"{CLOUD}/rest/api/label")
        label.side_effect = [httpx.Response(200, json={"label": {"id": "1", "name": "rb"}}),
                             httpx.Response(200, json={"label": {"id": "2", "name": "rb"}})]
        respx.get(f"{CLOUD}/api/v2/labels/1/pages").respond(json={"results": []})
        respx.get(f"{CLOUD}/api/v2/labels/2/pages").respond(json={"results": [
            {"id": "5", "version": {"number": 3, "createdAt": "2026-10-01T09:30:00Z"}}]})
        site = CloudSite(client(CLOUD, Waits()), ("OPS",), "rb")
        assert site.listing("OPS") == []
        respx.get(f"{CLOUD}/api/v2/labels/1/pages").respond(404)
        with pytest.raises(ConfluenceUnavailable, match="answered 404"):
            site.listing("OPS")
        assert site.listing("OPS") == [PageRef("5", "OPS", 3)]
        assert (spaces.call_count, label.call_count) == (2, 2)
