"""The audit in a rules repository's CI: zero rules read is an error, rules can come from
standard input, a Helm template gets a hint, JUnit and SARIF 2.1.0 output, and `--runbooks`
keeps its index so a second run embeds nothing, Redis or not."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from enricher.audit.__main__ import _index, main
from enricher.audit.rules import read_rules
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from tests.conftest import MODELS_DIR, REPO
from tests.enricher.audit.test_cli import RULES

SCHEMA = REPO / ".cache" / "sarif" / "sarif-schema-2.1.0.json"

class TestZeroRules:
    @pytest.mark.parametrize("text", ["group:\n  - name: x\n    rules: []\n", None])
    def test_no_rule_read_exits_2_with_one_sentence(
        self, served: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        text: str | None,
    ) -> None:
        """`group:` for `groups:`, or an empty folder: exit 2, whatever --fail-on says."""
        target = tmp_path / "rules"
        target.mkdir()
        if text is not None:
            (target / "typo.yml").write_text(text)
        assert main([str(target), "--fail-on", "broken,missing"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: no alerting rule was read from")


class TestInput:
    def test_rules_from_standard_input(
        self, served: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setattr("sys.stdin", io.StringIO((RULES / "shop.rules.yml").read_text()))
        assert main(["-", "--json"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert {r["file"] for r in rows} == {"-"} and len(rows) == 7

    def test_a_helm_template_says_to_render_it_first(self, tmp_path: Path) -> None:
        chart = tmp_path / "rules.yaml"
        chart.write_text(
            "groups:\n{{- range .Values.groups }}\n  - name: {{ .name }}\n{{- end }}\n"
        )
        (error,) = read_rules([chart]).errors
        assert "not valid YAML" in error.reason
        assert "helm template CHART | python -m enricher.audit -" in error.reason

    def test_each_rule_knows_its_line(self) -> None:
        rules = {r.name: r.line for r in read_rules([RULES / "shop.rules.yml"]).rules}
        text = (RULES / "shop.rules.yml").read_text().splitlines()
        for name, line in rules.items():
            assert f"alert: {name}" in text[line - 1]


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main([str(RULES), *args])
    return status, capsys.readouterr().out


class TestFormats:
    def test_junit_has_a_case_per_rule_and_fails_the_ones_without_a_runbook(
        self, served: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out = audit(capsys, "--format", "junit", "--fail-on", "broken,missing")
        assert status == 1
        suite = ET.fromstring(out).find("testsuite")
        assert suite is not None
        cases = suite.findall("testcase")
        assert len(cases) == 11 and suite.get("failures") == "5"
        failed = {c.get("name") for c in cases if c.find("failure") is not None}
        assert {"NodeFanFailure", "KafkaBrokerDown", "GiftCardBalanceDrift"} <= failed

    def test_sarif_names_each_rule_without_a_runbook_at_its_line(
        self, served: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, out = audit(capsys, "--format", "sarif")
        assert status == 0
        log = json.loads(out)
        assert log["version"] == "2.1.0"
        (run,) = log["runs"]
        assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {
            "runbook/broken", "runbook/missing"
        }
        results = run["results"]
        assert len(results) == 5
        for result in results:
            where = result["locations"][0]["physicalLocation"]
            lines = Path(where["artifactLocation"]["uri"]).read_text().splitlines()
            name = result["message"]["text"].split(":")[0]
            assert f"alert: {name}" in lines[where["region"]["startLine"] - 1]
        validate_sarif(log)


def validate_sarif(log: object) -> None:
    """Against the SARIF 2.1.0 JSON schema that scripts/setup.sh caches (Microsoft's
    jest-sarif package on npm ships it)."""
    assert SCHEMA.is_file(), f"no SARIF 2.1.0 schema at {SCHEMA}: run scripts/setup.sh"
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))


class Counting(Embedder):
    """The real model, counting the texts it embeds."""

    embedded = 0

    def dense(self, texts: Sequence[str], batch_size: int = 32) -> list[list[float]]:
        Counting.embedded += len(texts)
        return super().dense(texts, batch_size)


class TestCache:
    def test_a_second_run_without_redis_embeds_nothing(self, tmp_path: Path) -> None:
        runbooks = tmp_path / "runbooks"
        for rel in ("postgres/PostgresReplicationLag.md", "kafka/KafkaBrokerDown.md"):
            (runbooks / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / "golden" / "runbooks" / rel, runbooks / rel)
        settings = Settings(models_dir=MODELS_DIR, redis_url="redis://127.0.0.1:1/0")
        embedder = Counting(settings)
        runs = []
        for _ in range(2):
            before = Counting.embedded
            with _index(settings, embedder, runbooks, tmp_path / "cache") as index:
                assert index.count() > 0
            runs.append(Counting.embedded - before)
        assert runs[0] > 0 and runs[1] == 0
