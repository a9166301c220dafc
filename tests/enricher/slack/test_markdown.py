"""Runbook markdown to Slack mrkdwn: conversion, fitting to a size, folding, bounded work."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enricher.slack.markdown import (
    CODE_OMITTED_NOTE,
    TRUNCATED_NOTE,
    Markdown,
    fold_markdown,
    trim_markdown,
)
from enricher.slack.text import escape
from tests.enricher.slack.test_text import (
    adversarial,
    assert_well_formed,
)

HOSTILE_MD = """# Failover <!channel>

**Do this first**: page @here and <@U999>, then read [the guide](https://wiki.example/a?b=1&c=2).
Bad link: [click me](javascript:alert(document.cookie)) and [data](data:text/html,hi).
Lots of &&&& <<<< >>>> here &amp; there.

```bash
psql "postgres://admin:hunter2@db/prod" -c 'select 1 < 2 && true'
echo <!here>
```

- step one
- step two [runbook](https://runbooks.example/db#failover)

""" + "\n".join(f"Line {i}: value &lt; {i} <b>{i}</b> & more text here" for i in range(200))


class TestTrimMarkdown:
    def test_markdown_converted(self) -> None:
        """Headings, **bold**, bullets and http links become Slack mrkdwn."""
        out = trim_markdown("# Title\n**bold** and [docs](https://d.example/x)\n- item", 500)
        assert out == "*Title*\n*bold* and <https://d.example/x|docs>\n• item"

    def test_javascript_link_not_linked(self) -> None:
        """A markdown link with a javascript: scheme is shown as its label only."""
        out = trim_markdown("[click me](javascript:alert(1))", 500)
        assert out == "click me"
        assert "javascript" not in out

    def test_hostile_text_is_escaped_and_defanged(self) -> None:
        """Mentions are inert, `&<>` escaped, secrets in code redacted."""
        out = trim_markdown(HOSTILE_MD, 3000)
        assert_well_formed(out)
        assert "@here" not in out and "hunter2" not in out
        assert "<https://wiki.example/a?b=1&amp;c=2|the guide>" in out

    @pytest.mark.parametrize(
        "limit", [0, 1, 5, 20, 40, 41, 60, 100, 150, 333, 500, 1000, 2500, 3000]
    )
    def test_limit_respected(self, limit: int) -> None:
        """Output never exceeds the limit and is always well formed."""
        out = trim_markdown(HOSTILE_MD, limit)
        assert len(out) <= limit
        assert_well_formed(out)

    @pytest.mark.parametrize("limit", range(30, 400, 7))
    def test_code_fence_whole_or_dropped(self, limit: int) -> None:
        """A fenced block is kept whole or replaced by the omitted note, never cut."""
        code = "\n".join(f"kubectl get pods -n ns{i}" for i in range(8))
        md = f"Intro line.\n\n```sh\n{code}\n```\n\nAfter the code."
        out = trim_markdown(md, limit)
        assert len(out) <= limit
        if "```" in out:
            assert f"```\n{escape(code)}\n```" in out
        assert out.count("```") in (0, 2)

    def test_huge_code_block_replaced_and_text_continues(self) -> None:
        """A code block larger than the limit becomes a note; later lines still show."""
        md = "Before.\n```\n" + "x = 1\n" * 150 + "```\nAfter."
        out = trim_markdown(md, 500)
        assert out == f"Before.\n{CODE_OMITTED_NOTE}\nAfter."

    def test_code_block_past_what_can_show_is_omitted_not_shown_in_part(self) -> None:
        """A block running past the part of the text that is read is never closed early
        and shown as if whole: it is omitted, and the output says text was lost."""
        md = "Before.\n```\n" + "x = 1\n" * 2000 + "```\nAfter."
        assert trim_markdown(md, 500) == f"Before.\n{CODE_OMITTED_NOTE}\n{TRUNCATED_NOTE}"
        short = "Before.\n```\nx = 1\n" + " " * 20_000
        assert trim_markdown(short, 3000) == f"Before.\n{CODE_OMITTED_NOTE}\n{TRUNCATED_NOTE}"

    def test_truncation_note_when_text_lost(self) -> None:
        """Dropping text appends the truncated note."""
        out = trim_markdown("\n".join(f"line {i}" for i in range(100)), 100)
        assert out.endswith(TRUNCATED_NOTE)
        assert len(out) <= 100

    def test_single_long_paragraph_cut_inside_line(self) -> None:
        """One huge line is cut at a word boundary rather than dropped whole."""
        out = trim_markdown("word &amp; " * 2000, 300)
        assert len(out) <= 300
        assert out.startswith("word &amp;amp; word")
        assert_well_formed(out)

    def test_unclosed_fence_runs_to_end(self) -> None:
        """An unterminated fence is still one code block (closed in the output)."""
        assert trim_markdown("a\n```\ncode <x>", 100) == "a\n```\ncode &lt;x&gt;\n```"

    def test_fits_untouched(self) -> None:
        """Short text keeps every line and gets no note."""
        assert trim_markdown("one\n\n\n\ntwo", 100) == "one\n\ntwo"


class TestMarkdownPage:
    @settings(max_examples=60, deadline=None, derandomize=True, database=None)
    @given(
        texts=st.lists(
            st.one_of(
                st.sampled_from([HOSTILE_MD, HOSTILE_MD[:700], "a\n```\ncode <x>"]),
                st.deferred(lambda: adversarial(max_run=300)),
            ),
            min_size=1,
            max_size=3,
        ),
        limits=st.lists(st.integers(0, 3000), min_size=1, max_size=4),
    )
    def test_one_page_reads_as_fresh_calls_do(self, texts: list[str], limits: list[int]) -> None:
        """A page's `Markdown` keeps what it read for the next size; each result is the one
        a fresh `trim_markdown` or `fold_markdown` gives."""
        page = Markdown()
        for text in texts:
            for limit in limits:
                assert page.trim(text, limit) == trim_markdown(text, limit)
                folded = page.fold(text, fold_chars=min(limit, 700), fold_lines=4, limit=limit)
                assert folded == fold_markdown(
                    text, fold_chars=min(limit, 700), fold_lines=4, limit=limit
                )
