"""The audit's verdicts in the formats CI systems show as annotations: a JUnit XML test report
(one test case per rule) and SARIF 2.1.0 (what GitHub code scanning reads: one result per
rule without a runbook, at its `alert:` line). Pure.

A verdict named in `--fail-on` is a failing test case and a SARIF `error`; without
`--fail-on`, `broken` and `missing` are, as the rules repository's check would make them.
`linked` and `matched` rules pass and make no SARIF result.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Sequence
from urllib.parse import quote
from xml.etree import ElementTree as ET

from enricher.audit.report import describe
from enricher.audit.verdict import Kind, Verdict

__all__ = ["junit", "sarif"]

_PROBLEMS: tuple[Kind, ...] = ("broken", "missing", "unavailable")
_DEFAULT_FAIL: frozenset[Kind] = frozenset({"broken", "missing"})
_HELP = {
    "broken": "The rule's runbook_url opens no indexed runbook: fix the link.",
    "missing": "No runbook would be on this rule's page: write one, or link it.",
    "unavailable": "The index could not be searched for this rule.",
}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _failing(fail_on: Collection[Kind]) -> Collection[Kind]:
    return fail_on or _DEFAULT_FAIL


def junit(verdicts: Sequence[Verdict], fail_on: Collection[Kind], seconds: float) -> str:
    failing = _failing(fail_on)
    counts = Counter(v.kind in failing for v in verdicts)
    suite = ET.Element(
        "testsuite", name="runbook audit", tests=str(len(verdicts)),
        failures=str(counts[True]), errors="0", time=f"{seconds:.3f}",
    )
    for verdict in verdicts:
        rule = verdict.rule
        case = ET.SubElement(
            suite, "testcase", classname=f"{rule.file}:{rule.group}", name=rule.name,
            file=rule.file, line=str(rule.line),
        )
        if verdict.kind in failing:
            failure = ET.SubElement(case, "failure", type=verdict.kind,
                                    message=f"{verdict.kind}: {describe(verdict)}")
            failure.text = _HELP.get(verdict.kind, "")
        else:
            ET.SubElement(case, "system-out").text = f"{verdict.kind}: {describe(verdict)}"
    suites = ET.Element("testsuites")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def sarif(verdicts: Sequence[Verdict], fail_on: Collection[Kind]) -> str:
    failing = _failing(fail_on)
    rules = [
        {
            "id": f"runbook/{kind}",
            "name": f"Runbook{kind.capitalize()}",
            "shortDescription": {"text": _HELP[kind]},
        }
        for kind in _PROBLEMS
    ]
    results = [
        {
            "ruleId": f"runbook/{v.kind}",
            "ruleIndex": _PROBLEMS.index(v.kind),
            "level": "error" if v.kind in failing else "warning",
            "message": {"text": f"{v.rule.name}: {v.kind}: {describe(v)}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": quote(v.rule.file)},
                        "region": {"startLine": v.rule.line},
                    }
                }
            ],
        }
        for v in verdicts
        if v.kind in _PROBLEMS
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "runbook-audit", "rules": rules}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)
