"""The audit's output: a table for people, JSON lines for tools, and the tally. Pure."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from enricher.audit.verdict import KINDS, Runbook, Verdict

_WHAT = {
    "linked": "runbook_url opens an indexed runbook",
    "broken": "runbook_url opens nothing indexed",
    "matched": "no runbook_url; a confident match",
    "missing": "no runbook",
    "unavailable": "index unavailable",
}


def _runbook(runbook: Runbook | None) -> str:
    if runbook is None:
        return "-"
    bar = "" if runbook.confident else ", below the bar"
    return f"{runbook.path} (p={runbook.probability:.2f}{bar})"


def describe(verdict: Verdict) -> str:
    """The verdict's runbook, best match or leads, in a line."""
    if verdict.kind in ("linked", "matched"):
        return _runbook(verdict.runbook)
    if verdict.kind == "broken":
        best = f"best match {_runbook(verdict.runbook)}" if verdict.runbook else "no match"
        return f"{verdict.rule.runbook_url} -> {best}"
    if verdict.kind == "missing":
        leads = ", ".join(_runbook(lead) for lead in verdict.leads[:3])
        return f"closest: {leads}" if leads else "no lead"
    return "search failed: check QDRANT_PATH / QDRANT_URL"


def table(verdicts: Sequence[Verdict]) -> str:
    width = max((len(v.rule.name) for v in verdicts), default=10)
    width = min(max(width, 10), 48)
    lines = [f"{'verdict':<8} {'alert':<{width}} {'rule file':<28} runbook / leads"]
    for verdict in verdicts:
        where = verdict.rule.file[-28:]
        lines.append(
            f"{verdict.kind:<8} {verdict.rule.name[:width]:<{width}} {where:<28} "
            f"{describe(verdict)}"
        )
    return "\n".join(lines)


def tally(verdicts: Sequence[Verdict], seconds: float) -> str:
    counts = Counter(v.kind for v in verdicts)
    parts = [f"{counts[kind]} {kind}" for kind in KINDS if counts[kind] or kind != "unavailable"]
    return f"audited {len(verdicts)} alerting rule(s) in {seconds:.1f} s: " + ", ".join(parts)


def json_lines(verdicts: Sequence[Verdict]) -> str:
    return "\n".join(json.dumps(v.to_json()) for v in verdicts)


def legend() -> str:
    return "; ".join(f"{kind}: {text}" for kind, text in _WHAT.items())


__all__ = ["describe", "json_lines", "legend", "table", "tally"]
