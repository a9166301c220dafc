"""Block builders: the same JSON as slack-sdk's block objects, within Slack's limits."""

from __future__ import annotations

import json

import pytest
from slack_sdk.models.blocks import (
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from enricher.slack.blocks import CONTEXT_MAX_ELEMENTS, SECTION_MAX, context, header, section
from enricher.slack.text import cut

TEXTS = ["*Title* › section", "line\nline & <x>", "🔥 ünïcode", "word " * 700]


class TestBlocks:
    @pytest.mark.parametrize("text", TEXTS)
    def test_section_as_slack_sdk_writes_it(self, text: str) -> None:
        """A section is the JSON slack-sdk writes for it, its text cut to SECTION_MAX."""
        sdk = SectionBlock(text=MarkdownTextObject(text=cut(text, SECTION_MAX))).to_dict()
        assert json.dumps(section(text)) == json.dumps(sdk)
        assert len(section(text)["text"]["text"]) <= SECTION_MAX

    @pytest.mark.parametrize("count", [1, 3, CONTEXT_MAX_ELEMENTS, 14])
    def test_context_as_slack_sdk_writes_it(self, count: int) -> None:
        """A context line is the JSON slack-sdk writes, with at most ten elements."""
        elements = [f"*e{i}:* `v`" for i in range(count)]
        kept = elements[:CONTEXT_MAX_ELEMENTS]
        sdk = ContextBlock(elements=[MarkdownTextObject(text=e) for e in kept]).to_dict()
        assert json.dumps(context(elements)) == json.dumps(sdk)

    def test_header_as_slack_sdk_writes_it(self) -> None:
        """A header is plain text with emoji, as slack-sdk writes it."""
        text = "🔥 FIRING · KubePodCrashLooping · warning"
        sdk = HeaderBlock(text=PlainTextObject(text=text, emoji=True)).to_dict()
        assert json.dumps(header(text)) == json.dumps(sdk)
