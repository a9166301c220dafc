"""How severe an alert is: the order of the usual `severity` label values."""

from __future__ import annotations

#: Highest first. Values outside this list still count, below "info".
SEVERITY_ORDER = ("critical", "page", "error", "warning", "info")


def severity_rank(severity: str | None) -> int:
    """How severe, higher is worse; 0 for no severity or one outside SEVERITY_ORDER."""
    word = (severity or "").strip().lower()
    return len(SEVERITY_ORDER) - SEVERITY_ORDER.index(word) if word in SEVERITY_ORDER else 0


__all__ = ["SEVERITY_ORDER", "severity_rank"]
