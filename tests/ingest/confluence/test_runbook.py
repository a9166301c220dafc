"""A page as a runbook (pure), and the CONFLUENCE_* settings that describe the source."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from enricher.errors import ConfigError
from enricher.settings import load_settings
from ingest.confluence.page import Page
from ingest.confluence.runbook import page_document, page_hash
from ingest.document import Document, SourceError

WHEN = datetime(2026, 10, 2, 9, 30, tzinfo=UTC)


def page(storage: str, *, title: str = "Redis memory high", version: int = 3,
         labels: tuple[str, ...] = ("runbook", "cache")) -> Page:
    return Page(id="77", space="SRE", title=title, version=version, when=WHEN, labels=labels,
                storage=storage, url="https://acme.atlassian.net/wiki/spaces/SRE/pages/77")


def properties(*rows: tuple[str, str]) -> str:
    cells = "".join(f"<tr><th>{key}</th><td>{value}</td></tr>" for key, value in rows)
    return ('<ac:structured-macro ac:name="details"><ac:rich-text-body><table><tbody>'
            f"{cells}</tbody></table></ac:rich-text-body></ac:structured-macro>")


class TestPageDocument:
    def test_properties_and_labels_are_front_matter(self) -> None:
        """Page Properties rows set the fields; labels other than the scope label are tags."""
        storage = properties(("Alert", "RedisMemoryHigh, RedisEvictions"), ("Service", "redis"),
                             ("Owner", "team-cache"), ("Tags", "memory")) + "<p>Evict.</p>"
        doc = page_document(page(storage), "confluence@acme", "runbook")
        assert isinstance(doc, Document)
        assert doc.alert_names == ("RedisMemoryHigh", "RedisEvictions")
        assert doc.services == ("redis",)
        assert doc.owner == "team-cache"
        assert doc.tags == ("memory", "cache")
        assert (doc.revision, doc.last_updated) == ("3", WHEN)
        assert doc.doc_hash == page_hash("confluence@acme", "SRE", "77", 3)

    def test_without_properties_the_title_is_the_alert_name(self) -> None:
        """No Page Properties: the title names the runbook and its alert, no service."""
        doc = page_document(page("<p>Evict.</p>"), "confluence@acme", None)
        assert isinstance(doc, Document)
        assert (doc.title, doc.alert_names, doc.services) == (
            "Redis memory high", ("Redis memory high",), ())
        assert doc.tags == ("runbook", "cache")

    def test_a_bad_property_is_a_source_error_naming_it(self) -> None:
        """A "Last reviewed" that is no date is reported like bad front matter."""
        result = page_document(page(properties(("Last reviewed", "soon")) + "<p>x</p>"),
                               "confluence@acme", None)
        assert isinstance(result, SourceError)
        assert result.path == "SRE/77" and "last_reviewed" in result.reason

    def test_a_page_without_text_is_no_runbook(self) -> None:
        """A parent page that only lists its children is skipped, not an error."""
        storage = '<ac:structured-macro ac:name="children" />'
        assert page_document(page(storage), "confluence@acme", None) is None

    def test_the_hash_moves_with_the_version_and_the_space(self) -> None:
        """A new version, or a move to another space, makes the indexed copy stale."""
        base = page_hash("s", "OPS", "1", 1)
        assert base != page_hash("s", "OPS", "1", 2)
        assert base != page_hash("s", "SRE", "1", 1)


class TestSettings:
    @pytest.mark.parametrize(
        ("env", "message"),
        [
            ({"CONFLUENCE_URL": "https://acme.atlassian.net"}, "CONFLUENCE_SPACES is empty"),
            ({"CONFLUENCE_URL": "https://acme.atlassian.net", "CONFLUENCE_SPACES": "OPS"},
             "one kind of credentials"),
            ({"CONFLUENCE_URL": "https://w.example.com", "CONFLUENCE_SPACES": "OPS",
              "CONFLUENCE_PERSONAL_TOKEN": "secret-pat-1", "CONFLUENCE_EMAIL": "a@b.c",
              "CONFLUENCE_API_TOKEN": "secret-api-1"}, "not both"),
            ({"CONFLUENCE_URL": "w.example.com", "CONFLUENCE_SPACES": "OPS",
              "CONFLUENCE_PERSONAL_TOKEN": "secret-pat-1"}, "http"),
            ({"CONFLUENCE_LABEL": 'run"book'}, "one word"),
        ],
        ids=["no-spaces", "no-credentials", "both-credentials", "not-a-url", "quoted-label"],
    )
    def test_misconfiguration_fails_at_start_without_showing_secrets(
        self, env: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Each incomplete CONFLUENCE_* set is a ConfigError that says what to set, and no
        token value appears in it."""
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=message) as raised:
            load_settings()
        assert "secret-" not in str(raised.value)
