"""Chunking markdown along headings, sizes and fences; identifiers and embed text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enricher.index.schema import Actionable
from enricher.search.names import split_identifier
from enricher.settings import Settings
from ingest.chunking import (
    actionable,
    chunk_markdown,
    document_title,
    embed_text,
)
from ingest.document import Chunk

#: The product's chunk sizes (CHUNK_MAX_CHARS / CHUNK_MIN_CHARS), unless a test says otherwise.
PRODUCT = Settings()


def chunk(
    body: str,
    *,
    max_chars: int = PRODUCT.chunk_max_chars,
    min_chars: int = PRODUCT.chunk_min_chars,
) -> list[Chunk]:
    return chunk_markdown(body, max_chars=max_chars, min_chars=min_chars)


RUNBOOK = """# Postgres replication lag

The replica falls behind the primary and serves stale reads to the checkout service.

## Symptoms

- `pg_replication_lag_seconds` above 300 for five minutes
- Checkout shows orders from minutes ago

## Diagnosis

Compare the LSNs on the primary and the replica:

```sql
-- # not a heading either
SELECT client_addr, state, sent_lsn, replay_lsn FROM pg_stat_replication;
```

```bash
# Look at the WAL receiver
kubectl exec -it pg-replica-0 -- psql -c 'select * from pg_stat_wal_receiver'
## still not a heading
```

## Mitigation

Pick the first step that applies.

### Scale up

Give the replica more IO: move it to the `pg-io` node pool and raise its disk to
premium SSD. Replay usually catches up within ten minutes after that.

### Rebuild the replica

When the lag keeps growing, rebuild from a fresh base backup:

~~~bash
pg_basebackup -h primary -D /var/lib/postgresql/data -X stream -P
~~~

## Escalation

Page the database team when the lag exceeds thirty minutes.
"""


def sections(chunks: list[Chunk]) -> list[str]:
    return [chunk.section for chunk in chunks]


def content_lines(body: str) -> list[str]:
    """Lines a reader needs: everything except headings (outside fences) and blank lines."""
    lines = []
    fenced = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.strip() and (fenced or not line.startswith("#")):
            lines.append(line)
    return lines


class TestHeadings:
    def test_each_heading_starts_a_section(self) -> None:
        """Every heading with content becomes its own chunk when nothing is tiny."""
        body = "## Symptoms\nLag grows.\n\n## Diagnosis\nCheck WAL.\n\n## Mitigation\nRestart.\n"
        chunks = chunk(body, min_chars=0)
        assert [(c.section, c.text) for c in chunks] == [
            ("Symptoms", "Lag grows."),
            ("Diagnosis", "Check WAL."),
            ("Mitigation", "Restart."),
        ]

    def test_heading_path_follows_nesting(self) -> None:
        """A section's path lists its ancestors, and a shallower heading closes deeper ones."""
        body = (
            "## Mitigation\nPick one.\n### Scale up\nMore IO.\n#### On AWS\nUse io2.\n"
            "### Rebuild\nBase backup.\n## Escalation\nPage DBA.\n"
        )
        assert sections(chunk(body, min_chars=0)) == [
            "Mitigation",
            "Mitigation › Scale up",
            "Mitigation › Scale up › On AWS",
            "Mitigation › Rebuild",
            "Escalation",
        ]

    def test_single_h1_is_the_title_not_a_path_element(self) -> None:
        """The only H1, when it comes first, is left out of paths; its text is the preamble."""
        body = "# Disk full\nThe volume is full.\n\n## Mitigation\nGrow it.\n"
        chunks = chunk(body, min_chars=0)
        assert [(c.section, c.anchor, c.text) for c in chunks] == [
            ("", "", "The volume is full."),
            ("Mitigation", "mitigation", "Grow it."),
        ]

    def test_several_h1_are_sections(self) -> None:
        """When H1s are used as sections they stay in the path."""
        body = "# Diagnosis\nLook.\n## Logs\nRead them.\n# Mitigation\nFix.\n"
        assert sections(chunk(body, min_chars=0)) == [
            "Diagnosis",
            "Diagnosis › Logs",
            "Mitigation",
        ]

    def test_text_before_first_heading_is_preamble(self) -> None:
        """Preamble chunks have an empty section and anchor."""
        chunks = chunk("Intro text.\n\n## Steps\nDo it.\n", min_chars=0)
        assert (chunks[0].section, chunks[0].anchor, chunks[0].text) == ("", "", "Intro text.")

    @pytest.mark.parametrize(
        ("line", "is_heading"),
        [
            ("## Steps", True),
            ("   ## Steps", True),
            ("## Steps ##", True),
            ("##\tSteps", True),
            ("####### Seven", False),
            ("#hashtag", False),
            ("    ## indented code", False),
            ("Steps ##", False),
        ],
    )
    def test_what_counts_as_an_atx_heading(self, line: str, is_heading: bool) -> None:
        """Only 1-6 '#' followed by a space, indented at most three spaces, start a section."""
        chunks = chunk(f"Intro.\n\n{line}\nBody.\n", min_chars=0)
        assert (len(chunks) == 2) is is_heading
        if is_heading:
            assert chunks[1].section == "Steps"

    @pytest.mark.parametrize(
        ("body", "expected"),
        [
            ("# Disk full\n\n## A\nx\n", "Disk full"),
            ("Intro\n\n## A\n# Real title\n", "Real title"),
            ("```\n# not a title\n```\n\n# Title\n", "Title"),
            ("## Only sections\nx\n", None),
        ],
    )
    def test_document_title_is_the_first_h1_outside_fences(
        self, body: str, expected: str | None
    ) -> None:
        """document_title finds the first H1 that is a real heading."""
        assert document_title(body) == expected


class TestCommonMark:
    """What a CommonMark reader (and GitHub) sees as a heading or a block, the chunker sees."""

    def test_setext_headings_start_sections(self) -> None:
        """Underlined headings are headings: "===" an H1, "---" an H2."""
        body = "Disk full\n=========\n\nIntro.\n\nMitigation\n----------\nGrow it.\n"
        chunks = chunk(body, min_chars=0)
        assert [(c.section, c.text) for c in chunks] == [("", "Intro."), ("Mitigation", "Grow it.")]
        assert document_title(body) == "Disk full"

    def test_indented_code_is_not_a_heading(self) -> None:
        """Four-space indented code is a code block: its '#' lines start no section."""
        body = "## Fix\nRun this:\n\n    # comment\n    ## not a heading\n    restart.sh\n\nDone.\n"
        chunks = chunk(body, min_chars=0)
        assert sections(chunks) == ["Fix"]
        assert "    ## not a heading" in chunks[0].text

    def test_html_blocks_hide_headings(self) -> None:
        """A '#' line inside an HTML block (a <details> fold) is part of that block."""
        body = "## Fix\n<details>\n# not a heading\n</details>\n\n## Next\nx\n"
        assert sections(chunk(body, min_chars=0)) == ["Fix", "Next"]

    def test_a_fence_inside_a_long_list_is_never_cut(self) -> None:
        """A long list is cut between its lines, but never inside a fence nested in an item."""
        fence = "   ```bash\n" + "\n".join(f"   step {n}" for n in range(40)) + "\n   ```"
        items = "\n".join(f"1. check item {n} on the node pool" for n in range(20))
        body = f"## Diagnosis\n{items}\n1. run:\n\n{fence}\n"
        chunks = chunk(body, max_chars=400, min_chars=0)
        holding = [c for c in chunks if "step 0" in c.text]
        assert len(holding) == 1
        assert all(f"step {n}" in holding[0].text for n in range(40))

    def test_tables_stay_one_block(self) -> None:
        """A table is one block: its rows are not split into paragraphs."""
        body = "## Contacts\n| team | channel |\n|---|---|\n| db | #db |\n| net | #net |\n"
        (only,) = chunk(body, min_chars=0)
        assert only.text == "| team | channel |\n|---|---|\n| db | #db |\n| net | #net |"


class TestActionable:
    @pytest.mark.parametrize(
        ("section", "text", "level"),
        [
            ("Mitigation", "Scale out.", Actionable.HEADING),
            ("Diagnosis › Slow disk", "Look at iostat.", Actionable.HEADING),
            ("What to do", "Page the DBA.", Actionable.HEADING),
            ("Meaning", "The replica is behind.", Actionable.NONE),
            ("Meaning", "Behind.\n\n**Steps**\n\nRestart it.", Actionable.HEADING),
            ("Background", "Run:\n\n```bash\nkubectl get pods\n```", Actionable.COMMANDS),
            ("Impact", "- `kubectl get pods`", Actionable.COMMANDS),
            ("Prefix rules", "Nothing to do here.", Actionable.NONE),
            # Alert-rule references name the fix "Solution", as a heading or a list label.
            ("Possible solutions", "Retry the batch.", Actionable.HEADING),
            ("", "* Description:\n\n  Broken.\n\n* Solution:\n\n  Retry.", Actionable.HEADING),
            ("Meaning", "- Disk full: the volume has no room.", Actionable.NONE),
        ],
    )
    def test_levels(self, section: str, text: str, level: int) -> None:
        """A heading (or a heading merged in as a bold line) that says what to do beats a
        chunk that only holds commands."""
        assert actionable(section, text) == level


class TestAnchors:
    def test_chunk_anchor_is_the_deepest_heading(self) -> None:
        """A nested section's anchor is its own heading's slug."""
        chunks = chunk("## Mitigation\nx\n### Scale up!\ny\n", min_chars=0)
        assert [c.anchor for c in chunks] == ["mitigation", "scale-up"]

    def test_repeated_headings_get_numbered_anchors(self) -> None:
        """The second 'Steps' heading gets 'steps-1', as GitHub numbers duplicates."""
        body = "## A\n### Steps\nx\n## B\n### Steps\ny\n"
        assert [c.anchor for c in chunk(body, min_chars=0)] == ["steps", "steps-1"]


class TestFences:
    @pytest.mark.parametrize(
        "fence",
        [
            "```bash\n# restart\n## not a section\n```",
            "~~~\n# restart\n~~~",
            "````md\n```\n# nested example\n```\n````",
            "  ```\n  # in a list item\n  ```",
        ],
    )
    def test_hash_lines_inside_fences_are_not_headings(self, fence: str) -> None:
        """Comment lines in code blocks never start sections."""
        chunks = chunk(f"## Fix\nRun:\n\n{fence}\n\nDone.\n", min_chars=0)
        assert len(chunks) == 1
        assert chunks[0].section == "Fix"
        assert fence in chunks[0].text

    def test_unclosed_fence_runs_to_the_end(self) -> None:
        """Headings after a fence that never closes are code, as GitHub renders them."""
        chunks = chunk("## Fix\n```\n# a\n## b\n", min_chars=0)
        assert sections(chunks) == ["Fix"]

    def test_backticks_in_info_string_are_not_a_fence(self) -> None:
        """'```x```' on one line is inline code, so the next heading still counts."""
        chunks = chunk("## A\n```x```\n## B\ny\n", min_chars=0)
        assert sections(chunks) == ["A", "B"]

    def test_oversized_fence_stays_whole_in_one_chunk(self) -> None:
        """A 6000-character fence is never cut, even though max_chars is 1500."""
        step = "&& kubectl get pods -n shop-prod -o wide"
        code = "\n".join(f"echo step {n:04d} {step}" for n in range(110))
        fence = f"```bash\n{code}\n```"
        assert len(fence) > 6000
        body = f"## Fix\nRun this:\n\n{fence}\n\nThen check the dashboard.\n"
        chunks = chunk(body)
        holding = [c for c in chunks if fence in c.text]
        assert len(holding) == 1
        assert holding[0].text.startswith("Run this:")
        assert all("```" not in c.text for c in chunks if c is not holding[0])

    def test_fence_fitting_in_size_is_not_cut_by_blank_lines(self) -> None:
        """Blank lines inside a fence are not paragraph boundaries."""
        fence = "```\n" + "\n\n".join(f"line {n} " + "x" * 60 for n in range(30)) + "\n```"
        body = "## Fix\n" + "Intro paragraph. " * 20 + "\n\n" + fence + "\n"
        chunks = chunk(body, max_chars=2000, min_chars=0)
        assert any(fence in c.text for c in chunks)


class TestSizes:
    def test_long_prose_is_split_at_paragraphs_within_max_chars(self) -> None:
        """A long section becomes several chunks of at most max_chars, each with the path."""
        paragraphs = [f"Paragraph {n}:" + " the replica falls behind." * 12 for n in range(20)]
        body = "## Diagnosis\n\n" + "\n\n".join(paragraphs) + "\n"
        chunks = chunk(body, max_chars=1000, min_chars=100)
        assert len(chunks) > 3
        assert all(len(c.text) <= 1000 for c in chunks)
        assert set(sections(chunks)) == {"Diagnosis"}
        for paragraph in paragraphs:
            assert sum(paragraph in c.text for c in chunks) == 1

    def test_long_paragraph_is_split_at_lines(self) -> None:
        """A paragraph over max_chars is cut between lines, never inside one."""
        lines = [f"- item {n:03d}: check the node pool and the disk pressure" for n in range(100)]
        chunks = chunk("## Checklist\n" + "\n".join(lines) + "\n", max_chars=500)
        assert all(len(c.text) <= 500 for c in chunks)
        assert [line for c in chunks for line in c.text.splitlines()] == lines

    def test_over_long_line_is_cut_at_spaces(self) -> None:
        """A single line longer than max_chars is cut at word boundaries."""
        words = [f"word{n}" for n in range(300)]
        chunks = chunk("## Notes\n" + " ".join(words) + "\n", max_chars=200, min_chars=0)
        assert all(len(c.text) <= 200 for c in chunks)
        assert " ".join(c.text for c in chunks).split() == words

    @pytest.mark.parametrize(("max_chars", "min_chars"), [(0, 0), (100, 101), (100, -1)])
    def test_impossible_sizes_are_rejected(self, max_chars: int, min_chars: int) -> None:
        """Sizes that cannot be honoured raise ValueError."""
        with pytest.raises(ValueError, match="min_chars"):
            chunk("x", max_chars=max_chars, min_chars=min_chars)


class TestMerging:
    def test_short_intro_merges_into_following_subsection(self) -> None:
        """A one-sentence '## Mitigation' joins '### Scale up', whose heading stays as bold text."""
        scale_up = "Move the replica to the pg-io node pool. " * 8
        body = f"## Mitigation\nPick the first step that applies.\n\n### Scale up\n{scale_up}\n"
        chunks = chunk(body)
        assert len(chunks) == 1
        assert (chunks[0].section, chunks[0].anchor) == ("Mitigation", "mitigation")
        assert chunks[0].text == (
            f"Pick the first step that applies.\n\n**Scale up**\n\n{scale_up.strip()}"
        )

    def test_short_siblings_are_labelled_with_their_parent(self) -> None:
        """Merged sections under one parent are labelled with the parent's path."""
        body = "## Mitigation\n### Scale up\nMore IO.\n### Rebuild\nBase backup.\n"
        chunks = chunk(body)
        assert (chunks[0].section, chunks[0].anchor) == ("Mitigation", "mitigation")
        assert chunks[0].text == "**Scale up**\n\nMore IO.\n\n**Rebuild**\n\nBase backup."

    def test_short_last_section_merges_backwards(self) -> None:
        """A tiny final section is appended to the chunk before it."""
        long = "Check the WAL receiver and compare LSNs between nodes. " * 6
        body = f"## Diagnosis\n{long}\n\n## Escalation\nPage the DBA.\n"
        chunks = chunk(body)
        assert len(chunks) == 1
        assert chunks[0].section == "Diagnosis"
        assert chunks[0].text.endswith("**Escalation**\n\nPage the DBA.")

    def test_sections_of_min_size_are_not_merged(self) -> None:
        """Sections that reach min_chars stay separate chunks."""
        text = "x" * 300
        body = f"## A\n{text}\n## B\n{text}\n"
        assert [(c.section, c.text) for c in chunk(body)] == [("A", text), ("B", text)]

    def test_merging_never_exceeds_max_chars(self) -> None:
        """A tiny section does not join a neighbour it would push past max_chars."""
        big = "y" * 1450
        body = f"## A\n{big}\n## B\ntiny\n## C\n{big}\n"
        chunks = chunk(body)
        assert all(len(c.text) <= 1500 for c in chunks)
        assert any("tiny" in c.text for c in chunks)


class TestDocumentLevel:
    @pytest.mark.parametrize(
        "body",
        ["", "\n\n", "# Title only\n", "## Empty\n\n## Also empty\n   \n"],
    )
    def test_no_content_no_chunks(self, body: str) -> None:
        """Bodies without text produce no chunks."""
        assert chunk(body) == []

    def test_empty_sections_produce_no_chunk(self) -> None:
        """A heading with nothing under it yields no chunk; its child keeps the full path."""
        body = "## Mitigation\n\n### Scale up\nMore IO.\n\n## Empty\n\n## Escalation\nPage.\n"
        assert sections(chunk(body, min_chars=0)) == [
            "Mitigation › Scale up",
            "Escalation",
        ]

    @pytest.mark.parametrize(
        ("max_chars", "min_chars"), [(1500, 250), (400, 100), (200, 0), (120, 60), (5000, 4000)]
    )
    def test_no_content_is_lost(self, max_chars: int, min_chars: int) -> None:
        """Every non-heading line of the runbook appears in some chunk, whatever the sizes."""
        chunks = chunk(RUNBOOK, max_chars=max_chars, min_chars=min_chars)
        for line in content_lines(RUNBOOK):
            assert any(line in c.text for c in chunks), line

    @pytest.mark.parametrize(("max_chars", "min_chars"), [(1500, 250), (200, 0), (120, 60)])
    def test_indexes_run_in_order_and_output_is_deterministic(
        self, max_chars: int, min_chars: int
    ) -> None:
        """Chunk indexes are 0..n-1 and the same input gives the same chunks."""
        first = chunk(RUNBOOK, max_chars=max_chars, min_chars=min_chars)
        assert [c.index for c in first] == list(range(len(first)))
        assert chunk(RUNBOOK, max_chars=max_chars, min_chars=min_chars) == first

    def test_realistic_runbook_with_small_chunks(self) -> None:
        """Each section of a real runbook keeps its path and fences stay whole."""
        chunks = chunk(RUNBOOK, min_chars=0)
        assert sections(chunks) == [
            "",
            "Symptoms",
            "Diagnosis",
            "Mitigation",
            "Mitigation › Scale up",
            "Mitigation › Rebuild the replica",
            "Escalation",
        ]
        assert chunks[2].text.count("```") == 4
        assert "## still not a heading" in chunks[2].text

    def test_crlf_line_endings(self) -> None:
        """Windows line endings split like Unix ones."""
        body = "## A\r\nOne.\r\n\r\n## B\r\nTwo.\r\n"
        assert [(c.section, c.text) for c in chunk(body, min_chars=0)] == [
            ("A", "One."),
            ("B", "Two."),
        ]


class TestSplitIdentifier:
    @pytest.mark.parametrize(
        ("name", "words"),
        [
            ("PostgresReplicationLag", "Postgres Replication Lag"),
            ("TLSCertificateExpiringSoon", "TLS Certificate Expiring Soon"),
            ("KubePodCrashLooping", "Kube Pod Crash Looping"),
            ("KubeAPIDown", "Kube API Down"),
            ("HTTPServerErrors", "HTTP Server Errors"),
            ("high_error_rate", "high error rate"),
            ("node-disk-full", "node disk full"),
            ("K8sNodeNotReady", "K8s Node Not Ready"),
            ("S3BucketUnreachable", "S3 Bucket Unreachable"),
            ("Checkout5xxRate", "Checkout5xx Rate"),
            ("CPU", "CPU"),
            ("targetdown", "targetdown"),
            ("Mixed_snake-andCamel", "Mixed snake and Camel"),
            ("", ""),
        ],
    )
    def test_identifier_to_words(self, name: str, words: str) -> None:
        """CamelCase, snake_case and kebab-case split into words; acronyms stay together."""
        assert split_identifier(name) == words


class TestEmbedText:
    def test_title_alert_names_section_then_text(self) -> None:
        """The embedded text carries the title, both spellings of each alert, the path, the text."""
        chunk = Chunk(index=0, section="Mitigation › Scale up", anchor="scale-up", text="More IO.")
        assert embed_text("Postgres lag", ["PostgresReplicationLag", "pglag"], chunk) == (
            "Postgres lag\n"
            "PostgresReplicationLag (Postgres Replication Lag), pglag\n"
            "Mitigation › Scale up\n"
            "More IO."
        )

    def test_empty_parts_are_left_out(self) -> None:
        """A preamble chunk of a runbook without alert names has no blank lines."""
        chunk = Chunk(index=0, section="", anchor="", text="Intro.")
        assert embed_text("Title", [], chunk) == "Title\nIntro."


_WORDS = st.sampled_from(["lag", "replica", "kubectl", "disk", "WAL", "restart", "pod", "#tag"])
_PROSE = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join)
_HEADING = st.tuples(st.integers(1, 4), _PROSE).map(lambda h: "#" * h[0] + " " + h[1])
_FENCE = st.lists(st.one_of(_PROSE, _HEADING, st.just("")), max_size=40).map(
    lambda lines: "\n".join(["```sh", *lines, "```"])
)
_MARKDOWN = st.lists(st.one_of(_PROSE, _HEADING, st.just(""), _FENCE), max_size=60).map("\n".join)


class TestChunkingProperties:
    @settings(max_examples=200, deadline=None, database=None)
    # max_chars stays above the longest generated line, which would otherwise be cut at spaces.
    @given(body=_MARKDOWN, max_chars=st.integers(100, 600), min_chars=st.integers(0, 100))
    def test_any_markdown_keeps_content_and_sizes(
        self, body: str, max_chars: int, min_chars: int
    ) -> None:
        """For any body: nothing is lost, fences stay whole, and only whole fences exceed max."""
        chunks = chunk(body, max_chars=max_chars, min_chars=min_chars)
        assert [c.index for c in chunks] == list(range(len(chunks)))
        for line in content_lines(body):
            assert any(line in c.text for c in chunks), line
        fences = re.findall(r"^```sh\n.*?^```$", body, flags=re.DOTALL | re.MULTILINE)
        for fence in fences:
            assert sum(fence in c.text for c in chunks) >= 1
        for piece in chunks:
            if len(piece.text) > max_chars:
                assert any(len(f) > max_chars and f in piece.text for f in fences)
