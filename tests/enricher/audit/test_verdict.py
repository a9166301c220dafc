"""A rule is `linked` only when its runbook_url opens the runbook the page found, by the link
the page makes for it; Confluence links open their page in each of their forms. Pure."""

from __future__ import annotations

import base64

import pytest

from enricher.audit.rules import Rule
from enricher.audit.verdict import judge, opens
from enricher.index import schema
from enricher.result import Match, SearchResult
from enricher.search.links import confluence_page, url_keys

CONFLUENCE = "confluence@wiki.example.com:201819180"


def match(path: str, url: str = "", doc_id: str = "") -> Match:
    return Match(
        doc_id=doc_id or f"runbooks:{path}", title="t", section="", source="runbooks",
        path=path, score=0.9, stale=False, age_days=1, text="", url=url,
    )


def rule(url: str) -> Rule:
    return Rule("PostgresDiskFull", "up == 0", {}, {"runbook_url": url}, "r.yml", "g")


def tiny(page_id: int) -> str:
    encoded = base64.b64encode(page_id.to_bytes(8, "little")).decode()
    return encoded.replace("/", "-").replace("+", "_").rstrip("A=")


class TestLinked:
    def test_a_link_to_a_file_of_that_name_in_another_folder_is_broken(self) -> None:
        """The page's search finds postgres/PostgresDiskFull.md by the link's last segment,
        but the link itself (kafka/...) 404s: the audit says broken, naming what it found."""
        found = match("postgres/PostgresDiskFull.md")
        result = SearchResult(status="matched", tier="runbook_url", matches=(found,))
        url = "https://runbooks.example.com/kafka/PostgresDiskFull.md"
        verdict = judge(rule(url), result, "https://runbooks.example.com")
        assert verdict.kind == "broken" and verdict.runbook is not None
        assert verdict.runbook.path == "postgres/PostgresDiskFull.md"
        right = "https://runbooks.example.com/postgres/PostgresDiskFull.md#mitigation"
        assert judge(rule(right), result, "https://runbooks.example.com").kind == "linked"

    @pytest.mark.parametrize(
        ("url", "base", "link", "expected"),
        [
            ("https://GitHub.com/acme/ops/blob/main/rb/postgres/PostgresDiskFull.md/", None,
             "https://github.com/acme/ops/blob/main/rb/postgres/PostgresDiskFull.md", True),
            ("https://github.com/acme/ops/blob/dev/rb/postgres/PostgresDiskFull.md", None,
             "https://github.com/acme/ops/blob/main/rb/postgres/PostgresDiskFull.md", False),
            ("https://runbooks.example.com/postgres/postgresdiskfull", None, "", True),
            ("https://runbooks.example.com/kafka/postgresdiskfull", None, "", False),
            ("https://docs.example.com/rb/postgres/PostgresDiskFull.md",
             "https://docs.example.com/rb", "", True),
        ],
    )
    def test_the_page_link_decides(
        self, url: str, base: str | None, link: str, expected: bool
    ) -> None:
        assert opens(url, match("postgres/PostgresDiskFull.md", link), base) is expected


class TestConfluenceLinks:
    @pytest.mark.parametrize(
        "url",
        [
            "https://wiki.example.com/wiki/spaces/OPS/pages/201819180/Disk+full",
            "https://wiki.example.com/pages/viewpage.action?pageId=201819180",
            f"https://wiki.example.com/x/{tiny(201819180)}",
            "https://wiki.example.com/x/LIQHD",
        ],
    )
    def test_every_form_names_the_page_and_opens_it(self, url: str) -> None:
        assert confluence_page(url) == CONFLUENCE
        assert url_keys(url)[0] == (schema.F_DOC_ID, CONFLUENCE)
        page = match("OPS/201819180", "https://wiki.example.com/wiki/spaces/OPS/pages/"
                     "201819180/Disk+full", CONFLUENCE)
        assert opens(url, page, "https://runbooks.example.com")

    def test_another_page_or_site_does_not_open_it(self) -> None:
        page = match("OPS/201819180", "", CONFLUENCE)
        assert not opens("https://wiki.example.com/x/LIQHE", page, None)
        assert not opens("https://other.example.com/x/LIQHD", page, None)
        assert confluence_page("https://runbooks.example.com/postgres/Disk.md") is None
