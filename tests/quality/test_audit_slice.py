"""The audit on a dev slice: cases become a team's rule file, verdicts become the confusion
table's cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enricher.audit.rules import Rule
from enricher.audit.verdict import Kind, Runbook, Verdict
from quality.audit_slice import outcome, rule_file

AM_CASE = {
    "id": "c1",
    "kind": "paraphrase",
    "channel": "alertmanager",
    "expected_doc": "etcd/etcdNoLeader.md",
    "payload": {
        "alerts": [
            {
                "labels": {"alertname": "StoreLeaderless", "severity": "critical", "pod": "p-1"},
                "annotations": {"summary": "No leader"},
                "generatorURL": "http://p:9090/graph?g0.expr=etcd_server_has_leader+%3D%3D+0",
            }
        ]
    },
}
PD_CASE: dict[str, object] = {
    "id": "c2", "channel": "pagerduty", "expected_doc": None, "payload": {}
}


def test_alertmanager_cases_become_rules_with_their_expression(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in (AM_CASE, PD_CASE)))
    rules, expected = rule_file(cases)
    assert rules == {
        "groups": [
            {
                "name": "c1",
                "rules": [
                    {
                        "alert": "StoreLeaderless",
                        "expr": "etcd_server_has_leader == 0",
                        "labels": {"severity": "critical"},
                        "annotations": {"summary": "No leader"},
                    }
                ],
            }
        ]
    }
    assert expected == {"c1": "etcd/etcdNoLeader.md"}


RULE = Rule("A", "up == 0", {}, {}, "rules.yml", "c1")
FOUND = Runbook("d", "etcd/etcdNoLeader.md", "No leader", 0.9, True)
OTHER = Runbook("d", "etcd/etcdMembersDown.md", "Members down", 0.9, True)


@pytest.mark.parametrize(
    ("kind", "runbook", "expected", "cell"),
    [
        ("matched", FOUND, "etcd/etcdNoLeader.md", "right runbook"),
        ("linked", OTHER, "etcd/etcdNoLeader.md", "wrong runbook"),
        ("missing", None, "etcd/etcdNoLeader.md", "said none"),
        ("broken", FOUND, "etcd/etcdNoLeader.md", "said none"),
        ("missing", None, None, "said none (right)"),
        ("matched", OTHER, None, "named a runbook (wrong)"),
    ],
)
def test_each_verdict_lands_in_one_cell(
    kind: Kind, runbook: Runbook | None, expected: str | None, cell: str
) -> None:
    assert outcome(Verdict(RULE, kind, runbook), expected) == cell
