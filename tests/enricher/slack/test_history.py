""""Last time" line (enricher.slack.history): what it says, and where it goes on the page."""

from __future__ import annotations

import pytest

from enricher.slack.history import BLOCK_ID, History, history_line, with_history
from enricher.slack.render import MAX_BLOCKS, SlackMessage

LINK = "https://slack.com/archives/C1/p1700000000000100"


class TestHistoryLine:
    @pytest.mark.parametrize(
        ("history", "line"),
        [
            (History(1, 1), None),
            (History(4, 1, 720.0, 3, 0, True, LINK),
             f"Fired 4× in the last 7 days · last resolved after 12 min · "
             f"this runbook: 👍 3 👎 0 · <{LINK}|previous page>"),
            (History(9, 9), "⚠ Flapping: fired 9× in the last hour"),
            (History(14, 9),
             "⚠ Flapping: fired 9× in the last hour · fired 14× in the last 7 days"),
            (History(1, 1, 5400.0), "Last resolved after 1 h 30 min"),
            (History(2, 1, 20.0), "Fired 2× in the last 7 days · last resolved after 1 min"),
            (History(2, 1, 3 * 86400.0),
             "Fired 2× in the last 7 days · last resolved after 3 days"),
            (History(1, 1, voted=True), "This runbook: 👍 0 👎 0"),
            (History(2, 1, previous_url="javascript:alert(1)"), "Fired 2× in the last 7 days"),
        ],
    )
    def test_says_what_happened_before(self, history: History, line: str | None) -> None:
        assert history_line(history) == line


class TestWithHistory:
    def test_goes_under_the_header_once(self) -> None:
        header = {"type": "header", "text": {"type": "plain_text", "text": "FIRING"}}
        message = SlackMessage("t", [header, {"type": "divider"}])
        once = with_history(message, "Fired 2×")
        twice = with_history(once, "Fired 3×")
        assert [b.get("block_id") for b in twice.blocks] == [None, BLOCK_ID, None]
        assert twice.blocks[1]["elements"][0]["text"] == "Fired 3×"

    def test_a_full_page_is_left_as_it_is(self) -> None:
        full = SlackMessage("t", [{"type": "divider"}] * MAX_BLOCKS)
        assert with_history(full, "Fired 2×") is full
        assert with_history(full, None) is full
