"""What the training collection must not hold: the alerts of the judged corpora.

Many projects vendor the kube-prometheus, etcd or OpenShift rules, so a pair whose alert is
named like a runbook (or an alert) of either released corpus is dropped, and so is its
runbook text. The names are read from the released slices themselves: their runbook file
stems, the alert sections of their pages, the documents their cases expect and the alerts
their cases carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from enricher.search.names import name_key
from quality.train.pages import section_anchors

__all__ = ["released_names"]


def _case_names(line: str) -> Iterable[str]:
    case = json.loads(line)
    if expected := case.get("expected_doc"):
        yield PurePosixPath(expected).stem
    payload = case.get("payload") or {}
    for alert in payload.get("alerts") or []:
        yield str((alert.get("labels") or {}).get("alertname") or "")
    title = str(((payload.get("event") or {}).get("data") or {}).get("title") or "")
    yield title.split(":", 1)[0]


def released_names(data: Path) -> frozenset[str]:
    """name_key of every alert or runbook name in the released corpora under `data`
    (``<slice>/corpus/**.md`` and ``<slice>/cases.jsonl``)."""
    names: set[str] = set()
    for corpus in sorted(data.glob("*/corpus")):
        for path in sorted(corpus.rglob("*.md")):
            names.add(path.stem)
            text = path.read_text(encoding="utf-8", errors="replace")
            names.update(section_anchors(path.name, text))
    for cases in sorted(data.glob("*/cases.jsonl")):
        for line in cases.read_text(encoding="utf-8").splitlines():
            if line.strip():
                names.update(_case_names(line))
    return frozenset(k for k in (name_key(n) for n in names) if k)
