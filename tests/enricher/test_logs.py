"""Log lines stay bounded whatever a sender puts in a value."""

from __future__ import annotations

from enricher.logs import EXCEPTION_MAX, VALUE_MAX, cap_values


class TestCapValues:
    def test_long_values_are_cut_with_a_note(self) -> None:
        """A 100 kB groupKey is written as its first VALUE_MAX characters and a count."""
        event = cap_values(None, "info", {"event": "webhook.accepted", "group": "g" * 100_000})
        assert event["group"] == "g" * VALUE_MAX + f"…(+{100_000 - VALUE_MAX} chars)"
        assert event["event"] == "webhook.accepted"

    def test_tracebacks_get_more_room(self) -> None:
        """Our own tracebacks are kept up to EXCEPTION_MAX; other types are left alone."""
        event = cap_values(None, "error", {"exception": "x" * 5000, "n": 10**30})
        assert event == {"exception": "x" * 5000, "n": 10**30}
        assert len(cap_values(None, "error", {"exception": "x" * 10**6})["exception"]) < (
            EXCEPTION_MAX + 40
        )
