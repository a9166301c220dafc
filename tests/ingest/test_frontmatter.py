"""Front matter: splitting it off the body and validating the known keys."""

from __future__ import annotations

import re
from datetime import date

import pytest

from ingest.frontmatter import (
    FrontMatter,
    FrontMatterError,
    parse_front_matter,
    split_front_matter,
)


class TestSplitFrontMatter:
    @pytest.mark.parametrize(
        "text",
        [
            "# Title\n\nBody.\n",
            "",
            "Body only, no heading.",
            "# Title\n---\nnot: front matter\n---\n",
            " ---\ntitle: indented opener\n---\n",
        ],
    )
    def test_text_without_front_matter_is_all_body(self, text: str) -> None:
        """Without '---' as the first line there is no front matter; the body is untouched."""
        assert split_front_matter(text) == ({}, text)

    def test_valid_front_matter_is_parsed_and_removed_from_body(self) -> None:
        """The mapping between the '---' lines becomes meta; the body starts after the closer."""
        text = "---\ntitle: Disk full\nservices: [postgres]\n---\n# Disk full\n\n---\nrule\n"
        meta, body = split_front_matter(text)
        assert meta == {"title": "Disk full", "services": ["postgres"]}
        assert body == "# Disk full\n\n---\nrule\n"

    def test_crlf_and_bom_are_accepted(self) -> None:
        """A UTF-8 BOM and Windows line endings do not hide the front matter."""
        meta, body = split_front_matter("\ufeff---\r\ntitle: X\r\n---\r\nBody\r\n")
        assert meta == {"title": "X"}
        assert body == "Body\r\n"

    def test_empty_front_matter_is_an_empty_mapping(self) -> None:
        """'---' directly followed by '---' is valid and sets nothing."""
        assert split_front_matter("---\n---\nBody\n") == ({}, "Body\n")

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("---\ntitle: a: b\n---\nBody\n", "not valid YAML (line 2, column 9"),
            ("---\ntitle: [unclosed\n---\nBody\n", "not valid YAML (line 3"),
            ("---\ntitle: a\n  bad: indent\n---\n", "not valid YAML (line 3"),
            ("---\n- a\n- b\n---\nBody\n", "must be a YAML mapping of keys to values, got a list"),
            ("---\n42\n---\nBody\n", "mapping of keys to values, got a single int value"),
            ("---\njust a sentence\n---\nBody\n", "mapping of keys to values, got plain text"),
            ("---\ntitle: X\nBody without closer\n", "never closed"),
        ],
    )
    def test_bad_front_matter_raises_with_the_problem_named(self, text: str, message: str) -> None:
        """Malformed YAML, a non-mapping or a missing closer raise FrontMatterError naming it."""
        with pytest.raises(FrontMatterError, match=re.escape(message)):
            split_front_matter(text)

    def test_front_matter_error_is_a_value_error(self) -> None:
        """Callers that only know ValueError still catch front matter problems."""
        assert issubclass(FrontMatterError, ValueError)


class TestParseFrontMatter:
    def test_all_known_keys(self) -> None:
        """Every documented key is read with its type."""
        front = parse_front_matter(
            {
                "title": "Postgres replication lag",
                "alert_names": ["PostgresReplicationLag", "PostgresReplicaDown"],
                "services": ["postgres"],
                "owner": "team-db",
                "last_reviewed": date(2024, 5, 1),
                "tags": ["database", "replication"],
            }
        )
        assert front == FrontMatter(
            title="Postgres replication lag",
            alert_names=["PostgresReplicationLag", "PostgresReplicaDown"],
            services=["postgres"],
            owner="team-db",
            last_reviewed=date(2024, 5, 1),
            tags=["database", "replication"],
        )

    def test_missing_keys_have_empty_defaults(self) -> None:
        """Absent keys are None or empty lists."""
        front = parse_front_matter({})
        assert (front.title, front.alert_names, front.services) == (None, [], [])
        assert (front.owner, front.last_reviewed, front.tags) == (None, None, [])

    def test_unknown_keys_are_ignored(self) -> None:
        """Keys other tools use (layout, draft...) do not fail validation."""
        assert parse_front_matter({"layout": "runbook", "title": "X"}).title == "X"

    @pytest.mark.parametrize("key", ["alert_names", "services", "tags"])
    def test_a_single_string_counts_as_a_one_item_list(self, key: str) -> None:
        """`services: checkout` means `services: [checkout]`."""
        assert getattr(parse_front_matter({key: "checkout"}), key) == ["checkout"]

    @pytest.mark.parametrize(
        ("meta", "field", "expected"),
        [
            ({"services": [" a ", "", "a", "b"]}, "services", ["a", "b"]),
            ({"tags": None}, "tags", []),
            ({"title": "   "}, "title", None),
            ({"owner": " team-db "}, "owner", "team-db"),
            ({"last_reviewed": "2024-05-01"}, "last_reviewed", date(2024, 5, 1)),
        ],
    )
    def test_values_are_normalised(
        self, meta: dict[str, object], field: str, expected: object
    ) -> None:
        """Strings are stripped, blanks and duplicates dropped, quoted dates parsed."""
        assert getattr(parse_front_matter(meta), field) == expected

    def test_yaml_dates_from_the_file_are_accepted(self) -> None:
        """An unquoted YAML date or timestamp in the file becomes a date."""
        meta, _ = split_front_matter("---\nlast_reviewed: 2024-05-01 10:30:00\n---\nBody\n")
        assert parse_front_matter(meta).last_reviewed == date(2024, 5, 1)

    def test_numbers_in_lists_are_read_as_text(self) -> None:
        """`tags: [gateway, 429]` keeps 429 as the tag "429" instead of failing the file."""
        meta, _ = split_front_matter("---\ntags: [gateway, 429]\n---\nBody\n")
        assert parse_front_matter(meta).tags == ["gateway", "429"]

    @pytest.mark.parametrize(
        ("meta", "reason"),
        [
            ({"title": 42}, "title: Input should be a valid string"),
            ({"alert_names": {"a": 1}}, "alert_names: Input should be a valid list"),
            ({"tags": ["ok", {"k": 1}]}, "tags[1]: Input should be a valid string"),
            ({"last_reviewed": "last spring"}, "last_reviewed: Input should be a valid date"),
            ({"owner": ["a", "b"]}, "owner: Input should be a valid string"),
        ],
    )
    def test_bad_types_raise_a_short_readable_reason(
        self, meta: dict[str, object], reason: str
    ) -> None:
        """A wrong type names the field and the problem in one line."""
        with pytest.raises(FrontMatterError) as caught:
            parse_front_matter(meta)
        assert reason in str(caught.value)
        assert "\n" not in str(caught.value)
