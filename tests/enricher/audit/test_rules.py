"""Reading Prometheus rule files: plain groups, PrometheusRule resources, folders, and files
that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from enricher.audit.rules import MAX_NODES, read_rules
from enricher.audit.verdict import as_alert
from tests.conftest import REPO

PLAIN = """
groups:
  - name: db
    rules:
      - record: job:errors:rate5m
        expr: sum(rate(errors_total[5m]))
      - alert: DiskFull
        expr: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.1
        labels: {severity: critical, tier: 1}
        annotations:
          summary: "Disk on {{ $labels.instance }} is full"
          runbook_url: https://runbooks.example.com/node/DiskFull.md
"""

CR = """
apiVersion: v1
kind: ConfigMap
metadata: {name: not-rules}
data: {groups: "not a list of groups"}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: app}
spec:
  groups:
    - name: app
      rules:
        - alert: AppDown
          expr: up{job="app"} == 0
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TestReadRules:
    def test_plain_groups_keep_alerting_rules_only(self, tmp_path: Path) -> None:
        scan = read_rules([write(tmp_path, "db.yml", PLAIN)])
        assert scan.errors == ()
        (rule,) = scan.rules
        assert (rule.name, rule.group, rule.file) == ("DiskFull", "db", str(tmp_path / "db.yml"))
        assert rule.labels == {"severity": "critical", "tier": "1"}
        assert rule.runbook_url == "https://runbooks.example.com/node/DiskFull.md"

    def test_prometheus_rule_resources_and_other_documents_in_a_folder(
        self, tmp_path: Path
    ) -> None:
        """A folder is searched for *.yml and *.yaml; a ConfigMap beside the PrometheusRule
        is not a rule file and is passed over; other files are not read."""
        write(tmp_path, "k8s/app.yaml", CR)
        write(tmp_path, "k8s/notes.md", "groups: [oops")
        write(tmp_path, "db.yml", PLAIN)
        scan = read_rules([tmp_path])
        assert scan.errors == ()
        assert sorted(r.name for r in scan.rules) == ["AppDown", "DiskFull"]

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ("groups: [\n", "not valid YAML at line 2"),
            (
                "groups:\n  - name: x\n    rules: 5\n",
                "groups.0.rules: input should be a valid list",
            ),
        ],
    )
    def test_a_bad_file_is_an_error_and_the_others_are_read(
        self, tmp_path: Path, text: str, reason: str
    ) -> None:
        bad = write(tmp_path, "bad.yml", text)
        good = write(tmp_path, "good.yml", PLAIN)
        scan = read_rules([bad, good, tmp_path / "missing.yml"])
        assert [r.name for r in scan.rules] == ["DiskFull"]
        assert [e.file for e in scan.errors] == [str(bad), str(tmp_path / "missing.yml")]
        assert reason in scan.errors[0].reason

    def test_an_alias_bomb_is_refused_before_it_is_walked(self, tmp_path: Path) -> None:
        lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
        lines.append("groups: [*a8]")
        scan = read_rules([write(tmp_path, "bomb.yml", "\n".join(lines))])
        assert scan.rules == ()
        assert f"over {MAX_NODES} nodes" in scan.errors[0].reason


class TestAsAlert:
    def test_a_rule_is_searched_as_the_page_it_would_make(self, tmp_path: Path) -> None:
        """Name, labels and annotations as the webhook parser reads them, template actions
        dropped, and the expression's metric names read from generatorURL."""
        (rule,) = read_rules([write(tmp_path, "db.yml", PLAIN)]).rules
        alert = as_alert(rule)
        assert (alert.alert_name, alert.severity) == ("DiskFull", "critical")
        assert alert.summary == "Disk on is full"
        assert alert.metrics == ("node_filesystem_avail_bytes", "node_filesystem_size_bytes")
        assert alert.runbook_url == rule.runbook_url

    def test_the_sample_rules_all_read(self) -> None:
        scan = read_rules([REPO / "golden" / "rules"])
        assert scan.errors == () and len(scan.rules) == 11
