"""`python -m enricher.audit`: the sample rules against the golden index, the CI exit codes,
`--runbooks` indexing a folder itself, and the tie to the gap report."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from enricher.alert import Alert
from enricher.audit.__main__ import main
from enricher.gaps.__main__ import main as gaps_main
from enricher.gaps.store import GapStore
from enricher.index.connect import open_index
from enricher.result import SearchResult
from enricher.settings import Settings
from tests.conftest import MODELS_DIR, REPO

RULES = REPO / "golden" / "rules"
#: The verdict and runbook of every sample rule against golden/runbooks.
EXPECTED = {
    "KubePodCrashLooping": ("linked", "kubernetes/KubePodCrashLooping.md"),
    "ContainerKilledOutOfMemory": ("matched", "kubernetes/KubeContainerOOMKilled.md"),
    "NodeDiskAlmostFull": ("matched", "node/NodeFilesystemAlmostFull.md"),
    "NodeFanFailure": ("missing", None),
    "PostgresReplicationLag": ("linked", "postgres/PostgresReplicationLag.md"),
    "PostgresConnectionsNearLimit": ("matched", "postgres/PostgresTooManyConnections.md"),
    "PostgresVacuumStuck": ("missing", None),
    "KafkaBrokerDown": ("broken", "kafka/KafkaBrokerDown.md"),
    "KafkaConsumerGroupStalled": ("matched", "kafka/KafkaConsumerLagHigh.md"),
    "CheckoutErrorBudgetBurn": ("broken", "api-gateway/HighErrorRate.md"),
    "GiftCardBalanceDrift": ("missing", None),
}


def audit_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[Any]]:
    status = main([*args, "--json"])
    out = capsys.readouterr().out
    return status, [json.loads(line) for line in out.splitlines()]


class TestAuditCli:
    def test_every_sample_rule_gets_its_verdict(
        self, served: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        status, rows = audit_json(capsys, str(RULES))
        assert status == 0
        got = {
            str(r["alert"]): (r["verdict"], (r["runbook"] or {}).get("path"))
            for r in rows
        }
        assert got == EXPECTED
        broken = next(r for r in rows if r["alert"] == "CheckoutErrorBudgetBurn")
        assert broken["runbook_url"] == (
            "https://runbooks.example.com/checkout/CheckoutErrorBudgetBurn.md"
        )
        missing = next(r for r in rows if r["alert"] == "GiftCardBalanceDrift")
        assert all(not lead["confident"] for lead in missing["leads"])

    def test_fail_on_makes_it_a_ci_check_and_the_table_tallies(
        self, served: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        linked_only = str(RULES / "shop.rules.yml")
        assert main([str(RULES), "--fail-on", "broken,missing"]) == 1
        table = capsys.readouterr().out
        assert "audited 11 alerting rule(s)" in table
        assert "2 linked, 2 broken, 4 matched, 3 missing" in table
        assert main([linked_only, "--fail-on", "unavailable"]) == 0
        capsys.readouterr()
        with pytest.raises(SystemExit) as usage:
            main([linked_only, "--fail-on", "brokn"])
        assert usage.value.code == 2
        assert "unknown verdict brokn" in capsys.readouterr().err

    def test_an_unreadable_rule_file_exits_2(
        self, served: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "bad.yml"
        bad.write_text("groups: [\n")
        assert main([str(bad), str(RULES)]) == 2
        captured = capsys.readouterr()
        assert f"error: {bad}: not valid YAML" in captured.err
        assert "audited 11 alerting rule(s)" in captured.out

    def test_a_shard_held_by_the_service_says_to_use_runbooks(
        self, served: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        held = open_index(Settings(qdrant_path=served))
        try:
            assert main([str(RULES)]) == 2
        finally:
            held.close()
        assert "--runbooks DIR" in capsys.readouterr().err

    def test_runbooks_dir_is_indexed_by_the_audit_itself(
        self, tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """No served index: `--runbooks` indexes the folder into one of its own."""
        runbooks = tmp_path / "runbooks"
        for rel in ("postgres/PostgresReplicationLag.md", "kafka/KafkaBrokerDown.md"):
            (runbooks / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / "golden" / "runbooks" / rel, runbooks / rel)
        monkeypatch.setenv("QDRANT_PATH", str(tmp_path / "never-made"))
        monkeypatch.setenv("REDIS_URL", redis_url)
        monkeypatch.setenv("MODELS_DIR", str(MODELS_DIR))
        status, rows = audit_json(
            capsys, str(RULES / "shop.rules.yml"), "--runbooks", str(runbooks),
            "--cache-dir", str(tmp_path / "cache"),
        )
        assert status == 0
        verdicts = {r["alert"]: r["verdict"] for r in rows}
        assert verdicts["PostgresReplicationLag"] == "linked"
        assert verdicts["GiftCardBalanceDrift"] == "missing"
        assert not (tmp_path / "never-made").exists()


class TestGapTie:
    def test_a_rule_audited_as_missing_that_pages_is_already_known(
        self, served: Path, redis_url: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The audit notes its "no runbook" rules; when one of them pages without a match,
        the gap report says the audit knew. A rule with a runbook gets no note."""
        main([str(RULES), "--json"])
        capsys.readouterr()

        async def page(name: str) -> None:
            client = aioredis.Redis.from_url(redis_url)
            alert = Alert(
                source="alertmanager", status="firing", alert_name=name, service="giftcards",
                severity="warning", summary="", description="", group_key=f"g-{name}",
            )
            result = SearchResult(status="no_match", tier="global")
            await GapStore(client).record(alert, result, at=time.time())
            await client.aclose()

        asyncio.run(page("GiftCardBalanceDrift"))
        asyncio.run(page("KafkaConsumerGroupStalled"))
        assert gaps_main(["--json"]) == 0
        rows = {
            row["alert_name"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())
        }
        known = rows["GiftCardBalanceDrift"]["audited"]
        assert known["rule_file"] == str(RULES / "shop.rules.yml")
        assert rows["KafkaConsumerGroupStalled"]["audited"] is None
        assert gaps_main([]) == 0
        assert "already known: the audit of" in capsys.readouterr().out
