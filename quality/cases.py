"""Golden cases: one JSON line each, parsed through the webhook's own parser (pure).

The format is the design card's (§3): `id`, `payload` (an Alertmanager or PagerDuty body),
`expected_doc` (a path under the corpus root, or null for "no confident match"), and
optionally `kind`, `split` and `expected_section` (the anchor of the alert's section on a
page with a section per alert: the case is then scored on that section, ingest.units).
Any corpus and cases file in this format works.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from enricher.alert import Alert
from enricher.errors import BadRequest
from enricher.sources import Ignored, parse_body

NO_KIND = "unlabelled"


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    #: "dev", "test" or another label; None when the line names no split (counts in "all").
    split: str | None
    #: Path relative to the corpus root, or None when no runbook should match.
    expected: str | None
    alert: Alert
    line: int
    #: The anchor of the expected alert section of `expected`; None: the whole runbook.
    expected_section: str | None = None

    @property
    def expected_key(self) -> str | None:
        """What the eval compares answers with (`unit_key`)."""
        return unit_key(self.expected, self.expected_section or "") if self.expected else None


def unit_key(path: str, unit_anchor: str) -> str:
    """A runbook as the eval names it: its path, and `#<anchor>` for an alert's section."""
    return f"{path}#{unit_anchor}" if unit_anchor else path


@dataclass(frozen=True)
class CaseError:
    line: int
    reason: str


def parse_case(text: str, line: int) -> Case | CaseError:
    """One cases.jsonl line; anything unusable becomes a `CaseError` naming what is wrong."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return CaseError(line, f"invalid JSON: {exc}")
    if not isinstance(data, dict):
        return CaseError(line, "not a JSON object")
    case_id, payload = data.get("id"), data.get("payload")
    if not isinstance(case_id, str) or not case_id:
        return CaseError(line, "missing or empty string field 'id'")
    if "expected_doc" not in data:
        return CaseError(line, f"case {case_id}: missing 'expected_doc' (use null for none)")
    expected = data["expected_doc"]
    if expected is not None and (not isinstance(expected, str) or not expected.strip()):
        return CaseError(line, f"case {case_id}: 'expected_doc' must be a path or null")
    if not isinstance(payload, dict):
        return CaseError(line, f"case {case_id}: 'payload' must be a webhook body (object)")
    section = data.get("expected_section")
    if section is not None and (not isinstance(section, str) or not section or expected is None):
        return CaseError(
            line, f"case {case_id}: 'expected_section' must be an anchor, with an expected_doc"
        )
    kind, split = data.get("kind", NO_KIND), data.get("split")
    if not isinstance(kind, str) or (split is not None and not isinstance(split, str)):
        return CaseError(line, f"case {case_id}: 'kind' and 'split' must be strings")
    try:
        parsed = parse_body(json.dumps(payload).encode())
    except BadRequest as exc:
        return CaseError(line, f"case {case_id}: payload rejected: {exc.reason}")
    if isinstance(parsed, Ignored):
        return CaseError(line, f"case {case_id}: not an incident event (the webhook ignores it)")
    path = expected.strip().removeprefix("./") if expected is not None else None
    return Case(case_id, kind or NO_KIND, split, path, parsed.alert, line, section)


def load_cases(path: Path) -> tuple[list[Case], list[CaseError]]:
    cases: list[Case] = []
    errors: list[CaseError] = []
    first_line: dict[str, int] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        parsed = parse_case(text, number)
        if isinstance(parsed, Case) and parsed.id in first_line:
            parsed = CaseError(
                number, f"duplicate id {parsed.id} (first on line {first_line[parsed.id]})"
            )
        if isinstance(parsed, CaseError):
            errors.append(parsed)
        else:
            first_line[parsed.id] = number
            cases.append(parsed)
    return cases, errors
