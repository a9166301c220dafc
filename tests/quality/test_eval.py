"""The eval harness and threshold calibration: case parsing, metric arithmetic, the gate, and
a real run (real models, embedded Qdrant) over the tiny corpus in tests/fixtures/eval."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from enricher.errors import ConfigError
from enricher.index.embedding import Embedder
from enricher.result import Status
from enricher.settings import Settings
from quality.cases import Case, CaseError, load_cases, parse_case
from quality.eval import (
    Evaluation,
    choose_split,
    evaluate,
    main,
    report_text,
    summary,
    write_outcomes,
)
from quality.metrics import (
    Metrics,
    Outcome,
    baseline,
    by_kind,
    check_gate,
    compute_metrics,
    in_split,
)
from quality.tables import LEFT_OUT, cases_only, left_out_only
from tests.conftest import MODELS_DIR

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
CORPUS = FIXTURES / "runbooks"
CASES = FIXTURES / "cases.jsonl"
NO_REDIS = "redis://127.0.0.1:1/0"

PG_LAG = "postgres/PostgresReplicationLag.md"
PG_DISK = "postgres/PostgresDiskFull.md"
KAFKA = "kafka/KafkaConsumerLagHigh.md"


def outcome(
    case_id: str, expected: str | None, status: Status, docs: tuple[str, ...], *,
    kind: str = "k", split: str | None = "test", leads: tuple[str, ...] = (),
) -> Outcome:
    top = docs[0] if status == "matched" else None
    scores = tuple(0.9 - i * 0.1 for i in range(len(docs)))
    return Outcome(case_id, kind, split, expected, status, "global", docs, scores, top, leads)


def metrics(**overrides: Any) -> Metrics:
    values: dict[str, Any] = dict(
        cases=10, expecting=8, null=2, matched=8, recall_at_1=0.9, recall_at_3=0.97,
        mrr_at_5=0.93, precision=0.95, no_match_accuracy=0.9, false_match_rate=0.04,
    )
    return Metrics(**{**values, **overrides})


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    """main() configures structlog for the CLI; put the defaults back for other tests."""
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def fixture_cases() -> list[Case]:
    cases, errors = load_cases(CASES)
    assert errors == []
    return cases


@pytest.fixture(scope="module")
def evaluation(fixture_cases: list[Case], embedder: Embedder) -> Evaluation:
    settings = Settings(models_dir=MODELS_DIR, redis_url=NO_REDIS)
    return evaluate(CORPUS, fixture_cases, settings=settings, embedder=embedder, ablations=True)


class TestParseCase:
    def test_valid_line(self) -> None:
        """A well-formed line becomes a Case with the normalized alert."""
        line = CASES.read_text().splitlines()[0]
        case = parse_case(line, 1)
        assert isinstance(case, Case)
        assert (case.id, case.kind, case.split, case.expected) == (
            "exact-pg-lag", "exact", "dev", PG_LAG)
        assert case.alert.alert_name == "PostgresReplicationLag"

    @pytest.mark.parametrize(("text", "reason"), [
        ("{not json", "invalid JSON"),
        ('["a list"]', "not a JSON object"),
        ('{"payload": {}, "expected_doc": null}', "'id'"),
        ('{"id": "x", "payload": {"alerts": []}}', "missing 'expected_doc'"),
        ('{"id": "x", "payload": {"hello": 1}, "expected_doc": null}', "payload rejected"),
        ('{"id": "x", "payload": {"alerts": []}, "expected_doc": null}', "payload rejected"),
        ('{"id": "x", "payload": {"event": {"id": "1", "event_type": "pagey.ping", '
         '"resource_type": "pagey", "occurred_at": "2024-05-14T08:00:55Z", '
         '"data": {"type": "ping"}}}, "expected_doc": null}', "not an incident event"),
    ])
    def test_bad_line_is_an_error(self, text: str, reason: str) -> None:
        """Unusable lines come back as CaseError with the line number, never raise."""
        error = parse_case(text, 7)
        assert isinstance(error, CaseError)
        assert error.line == 7
        assert reason in error.reason

    def test_load_reports_bad_lines_and_keeps_good_ones(self, tmp_path: Path) -> None:
        """Malformed and duplicate lines are counted as errors; the rest still load."""
        good = CASES.read_text().splitlines()
        path = tmp_path / "cases.jsonl"
        path.write_text("\n".join([good[0], "{oops", "", good[1], good[0]]) + "\n")
        cases, errors = load_cases(path)
        assert [c.id for c in cases] == ["exact-pg-lag", "exact-kafka-pd"]
        assert [e.line for e in errors] == [2, 5]
        assert "duplicate id exact-pg-lag (first on line 1)" in errors[1].reason


class TestMetrics:
    OUTCOMES = (
        outcome("right", PG_LAG, "matched", (PG_LAG, KAFKA)),
        outcome("below-bar", PG_LAG, "no_match", (KAFKA, PG_LAG)),
        outcome("wrong", PG_LAG, "matched", (KAFKA, PG_DISK, "a.md", PG_LAG)),
        outcome("null-ok", None, "no_match", (KAFKA,), kind="none"),
        outcome("null-matched", None, "matched", (KAFKA,), kind="none", split="dev"),
    )

    def test_arithmetic(self) -> None:
        """Hand-checked: ranks 1, 2, 4 among three expecting cases; two null cases."""
        m = compute_metrics(self.OUTCOMES)
        assert (m.cases, m.expecting, m.null, m.matched) == (5, 3, 2, 3)
        assert m.recall_at_1 == pytest.approx(1 / 3)
        assert m.recall_at_3 == pytest.approx(2 / 3)
        assert m.mrr_at_5 == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
        assert m.precision == pytest.approx(1 / 3)
        assert m.no_match_accuracy == pytest.approx(1 / 2)
        assert m.false_match_rate == pytest.approx(2 / 5)

    def test_recall_at_1_needs_a_match(self) -> None:
        """The right document ranked first but below the threshold is not a recall@1 hit."""
        m = compute_metrics([outcome("x", PG_LAG, "no_match", (PG_LAG,))])
        assert (m.recall_at_1, m.recall_at_3, m.mrr_at_5) == (0.0, 1.0, 1.0)

    def test_undefined_metrics_are_none(self) -> None:
        """No null cases means no no-match accuracy, rather than a misleading 0 or 1."""
        m = compute_metrics([outcome("x", PG_LAG, "matched", (PG_LAG,))])
        assert m.no_match_accuracy is None
        assert compute_metrics([]).to_json()["recall@1"] is None

    def test_leads_on_no_match_pages(self) -> None:
        """Lead recall counts missed cases whose runbook was named; the other figure counts
        no-runbook pages that named any."""
        m = compute_metrics([
            outcome("found", PG_LAG, "no_match", (KAFKA, PG_LAG), leads=(KAFKA, PG_LAG)),
            outcome("not-found", PG_LAG, "no_match", (KAFKA, PG_LAG), leads=(KAFKA,)),
            outcome("hit", PG_LAG, "matched", (PG_LAG,)),
            outcome("null-leads", None, "no_match", (KAFKA,), leads=(KAFKA,)),
            outcome("null-quiet", None, "no_match", (KAFKA,)),
            outcome("null-quiet-2", None, "no_match", ()),
        ])
        assert m.lead_recall == pytest.approx(1 / 2)
        assert m.null_leads_shown == pytest.approx(1 / 3)
        assert compute_metrics([outcome("x", PG_LAG, "matched", (PG_LAG,))]).lead_recall is None

    def test_by_kind_and_split(self) -> None:
        kinds = by_kind(self.OUTCOMES)
        assert sorted(kinds) == ["k", "none"]
        assert kinds["none"].no_match_accuracy == 0.5
        assert [o.id for o in in_split(self.OUTCOMES, "dev")] == ["null-matched"]
        assert len(in_split(self.OUTCOMES, "all")) == 5


class TestChooseSplit:
    @staticmethod
    def cases(*splits: str | None) -> list[Case]:
        parsed = parse_case(CASES.read_text().splitlines()[0], 1)
        assert isinstance(parsed, Case)
        return [replace(parsed, id=f"c{i}", split=s) for i, s in enumerate(splits)]

    def test_any_split_the_file_names(self) -> None:
        """dev and test are conventions, not a fixed list: a holdout split works too."""
        cases = self.cases("dev", "test", "holdout", None)
        assert choose_split("holdout", cases) == "holdout"
        assert choose_split("all", cases) == "all"

    def test_default_is_test_when_there_is_one(self) -> None:
        assert choose_split(None, self.cases("dev", "test")) == "test"
        assert choose_split(None, self.cases("dev", None)) == "all"

    def test_unknown_split_names_the_ones_there(self) -> None:
        with pytest.raises(ConfigError, match=r"no case has split 'tset'.*dev, test, all"):
            choose_split("tset", self.cases("dev", "test"))


class TestGate:
    RECORDED = baseline(metrics(), "test", {})

    def test_passes_within_tolerance(self) -> None:
        now = metrics(recall_at_3=0.955, no_match_accuracy=0.95)
        assert check_gate(self.RECORDED, now, "test") == []

    def test_fails_naming_metric_and_numbers(self) -> None:
        problems = check_gate(self.RECORDED, metrics(recall_at_3=0.94), "test")
        assert problems == ["recall@3 on the test split fell to 0.940 from the recorded 0.970 "
                            "(allowed change 0.02)"]

    def test_fails_on_each_gated_metric(self) -> None:
        worse = metrics(recall_at_1=0.5, recall_at_3=0.5, no_match_accuracy=0.5,
                        false_match_share=0.5)
        problems = check_gate(baseline(metrics(false_match_share=0.0), "test", {}), worse, "test")
        assert [p.split()[0] for p in problems] == [
            "recall@1", "recall@3", "no_match_accuracy", "false_match_share"]
        assert "rose to 0.500" in problems[-1]

    def test_fewer_false_matches_pass(self) -> None:
        """The false-match share is gated upwards only."""
        recorded = baseline(metrics(false_match_share=0.1), "test", {})
        assert check_gate(recorded, metrics(false_match_share=0.0), "test") == []

    def test_other_metrics_are_not_gated(self) -> None:
        assert check_gate(self.RECORDED, metrics(mrr_at_5=0.1, false_match_rate=0.9),
                          "test") == []

    def test_split_mismatch_fails(self) -> None:
        assert "rerun with --split test" in check_gate(self.RECORDED, metrics(), "dev")[0]

    def test_unmeasurable_metric_fails(self) -> None:
        problems = check_gate(self.RECORDED, metrics(no_match_accuracy=None), "test")
        assert problems and "not measurable" in problems[0]


class TestEvaluate:
    def test_exact_names_rank_their_runbook_first(self, evaluation: Evaluation) -> None:
        """The alert-name tier finds the runbook and reports it as the match."""
        exact = [o for o in evaluation.main.outcomes if o.kind == "exact"]
        assert len(exact) == 3
        for o in exact:
            assert (o.status, o.rank, o.top) == ("matched", 1, o.expected)
            assert o.tier == "alert_name+service"

    def test_off_topic_alert_gets_no_match(self, evaluation: Evaluation) -> None:
        (coffee,) = [o for o in evaluation.main.outcomes if o.id == "offtopic-coffee"]
        assert coffee.status == "no_match"
        assert coffee.docs  # ranked candidates are still reported

    def test_corpus_and_ablations(self, evaluation: Evaluation) -> None:
        assert (evaluation.documents, evaluation.unknown_expected) == (4, ())
        assert [r.name for r in evaluation.runs] == [
            "bm25 only", "dense only", "hybrid, no tiers", "hybrid + tiers, no metrics",
            "hybrid + tiers"]
        assert {r.config.mode for r in evaluation.runs} == {"sparse", "dense", "hybrid"}
        assert evaluation.main.config.tiers and evaluation.main.config.metric_evidence
        assert not evaluation.runs[-2].config.metric_evidence

    def test_out_file_format(self, evaluation: Evaluation, tmp_path: Path) -> None:
        """One JSON line per case with the field names other tools read."""
        path = tmp_path / "per_case.jsonl"
        write_outcomes(path, evaluation.main.outcomes)
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(lines) == 6
        for line in lines:
            assert {"id", "status", "tier", "docs", "scores", "leads"} <= set(line)
            assert not line["leads"] or line["status"] == "no_match"
            assert len(line["docs"]) == len(line["scores"]) <= 5
            assert all(not d.startswith("/") and d.endswith(".md") for d in line["docs"])
            assert line["scores"] == sorted(line["scores"], reverse=True)
        assert lines[0]["docs"][0] == PG_LAG


@pytest.fixture(scope="module")
def left(fixture_cases: list[Case], embedder: Embedder) -> Evaluation:
    settings = Settings(models_dir=MODELS_DIR, redis_url=NO_REDIS)
    return evaluate(CORPUS, fixture_cases, settings=settings, embedder=embedder, leave_out=True)


class TestLeaveOut:
    def test_every_labelled_case_runs_again_without_its_runbook(self, left: Evaluation) -> None:
        """The left-out runs expect no match, name the runbook left out, and never
        answer with it; the cases as labelled are unchanged."""
        runs = left_out_only(left.main.outcomes)
        labelled = [o for o in cases_only(left.main.outcomes) if o.expected]
        assert sorted(o.id for o in runs) == sorted(o.id for o in labelled)
        for o in runs:
            assert o.expected is None and o.left_out
            assert o.left_out not in o.docs and o.top != o.left_out
        assert len(cases_only(left.main.outcomes)) == 6

    def test_the_left_out_runs_have_their_own_row(self, left: Evaluation) -> None:
        text = report_text(left, "all")
        assert LEFT_OUT in text
        assert summary(left, "all", Settings())["left_out"]["cases"] == 5

    def test_matched_pages_show_what_to_do(self, left: Evaluation) -> None:
        """Every matched page whose runbook has an actionable section shows one."""
        shown = [o.actionable for o in cases_only(left.main.outcomes) if o.actionable is not None]
        assert shown and all(shown)


class TestMain:
    @pytest.fixture()
    def env(self, monkeypatch: pytest.MonkeyPatch, redis_url: str) -> None:
        monkeypatch.setenv("MODELS_DIR", str(MODELS_DIR))
        monkeypatch.setenv("REDIS_URL", redis_url)

    def test_record_then_gate(
        self, env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--record writes the baseline; a later run gates against it; the last line is JSON."""
        base = tmp_path / "baseline.json"
        out = tmp_path / "per_case.jsonl"
        args = ["--corpus", str(CORPUS), "--cases", str(CASES)]
        assert main([*args, "--record", str(base), "--out", str(out)]) == 0
        assert json.loads(base.read_text())["split"] == "test"
        assert len(out.read_text().splitlines()) == 6
        capsys.readouterr()
        assert main([*args, "--gate", str(base)]) == 0
        printed = capsys.readouterr().out.strip().splitlines()
        assert any(line.startswith("  test     right runbook among the leads") for line in printed)
        last = json.loads(printed[-1])
        assert last["gate"] == "passed"
        assert last["split"] == "test"
        assert last["overall"]["cases"] == 4
        assert last["config"]["mode"] == "hybrid"

    def test_gate_failure_exits_1(
        self, env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        base = tmp_path / "baseline.json"
        base.write_text(json.dumps(baseline(metrics(no_match_accuracy=1.0, recall_at_3=1.0),
                                            "dev", {})))
        code = main(["--corpus", str(CORPUS), "--cases", str(CASES), "--split", "dev",
                     "--gate", str(base)])
        assert code == 1
        assert "gate failed: no_match_accuracy: recorded 1.000, now not measurable" in (
            capsys.readouterr().err)

    def test_malformed_lines_are_reported(
        self, env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        cases = tmp_path / "cases.jsonl"
        cases.write_text(CASES.read_text() + "{broken\n" + '{"id": "z", "payload": {}, '
                         '"expected_doc": null}\n')
        assert main(["--corpus", str(CORPUS), "--cases", str(cases)]) == 0
        captured = capsys.readouterr()
        assert f"{cases}:7: invalid JSON" in captured.err
        assert f"{cases}:8: case z: payload rejected" in captured.err
        assert json.loads(captured.out.splitlines()[-1])["errors"] == 2

    def test_unreachable_redis_warns_and_carries_on(
        self, embedder: Embedder, fixture_cases: list[Case]
    ) -> None:
        settings = Settings(models_dir=MODELS_DIR, redis_url=NO_REDIS)
        with capture_logs() as logs:
            result = evaluate(CORPUS, fixture_cases[:1], settings=settings, embedder=embedder)
        assert result.main.outcomes[0].status == "matched"
        assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["cache.unavailable"]


    def test_unusable_runbook_is_reported(
        self, tmp_path: Path, embedder: Embedder, fixture_cases: list[Case]
    ) -> None:
        """A runbook the scan rejects is named, and cases expecting it are flagged."""
        corpus = tmp_path / "runbooks"
        shutil.copytree(CORPUS, corpus)
        (corpus / "postgres" / "PostgresReplicationLag.md").write_bytes(b"\x00binary")
        settings = Settings(models_dir=MODELS_DIR, redis_url=NO_REDIS)
        result = evaluate(corpus, fixture_cases[:1], settings=settings, embedder=embedder)
        assert result.source_errors == (f"{PG_LAG}: binary file (contains NUL bytes), "
                                        "expected markdown",)
        assert [c.id for c in result.unknown_expected] == ["exact-pg-lag"]
        assert result.main.outcomes[0].rank is None


SECTION_PAGE = """# Queue operations

One section per alert of the message queue.

## QueueDepthHigh

### What it means

Messages pile up in the queue faster than the consumers take them.

### How to fix

Scale the consumers out with `kubectl scale deploy/consumer --replicas=8`.

## QueueBrokerDown

### What it means

A broker stopped answering health checks and its partitions moved away.

### How to fix

Restart it with `systemctl restart queue-broker` on the broker host.
"""


def section_case(case_id: str, alertname: str, section: str | None, **extra: Any) -> str:
    body = {
        "version": "4",
        "status": "firing",
        "alerts": [
            {
                "status": "firing",
                "labels": {"alertname": alertname, "service": "queue"},
                "annotations": {"summary": f"{alertname} firing"},
                "startsAt": "2026-11-28T00:00:00Z",
            }
        ],
    }
    line: dict[str, Any] = {"id": case_id, "payload": body, "kind": "section_exact"}
    line["expected_doc"] = "queue/operations.md" if section else None
    if section:
        line["expected_section"] = section
    return json.dumps({**line, **extra})


class TestSections:
    def test_a_case_may_name_the_expected_section(self) -> None:
        case = parse_case(section_case("s1", "QueueDepthHigh", "queuedepthhigh"), 1)
        assert isinstance(case, Case)
        assert (case.expected_section, case.expected_key) == (
            "queuedepthhigh",
            "queue/operations.md#queuedepthhigh",
        )

    @pytest.mark.parametrize(
        "extra",
        [{"expected_section": ""}, {"expected_section": 3}, {"expected_doc": None}],
    )
    def test_a_section_needs_an_anchor_and_a_document(self, extra: dict[str, Any]) -> None:
        line = section_case("s1", "QueueDepthHigh", "queuedepthhigh", **extra)
        error = parse_case(line, 4)
        assert isinstance(error, CaseError) and "'expected_section'" in error.reason

    def test_sections_are_scored_and_listed_per_match(
        self, tmp_path: Path, embedder: Embedder
    ) -> None:
        """Each match's section and the section its steps come from are in the out row; a
        sibling section is a wrong answer."""
        root = tmp_path / "runbooks"
        (root / "queue").mkdir(parents=True)
        (root / "queue" / "operations.md").write_text(SECTION_PAGE)
        cases_file = tmp_path / "cases.jsonl"
        cases_file.write_text(
            section_case("depth", "QueueDepthHigh", "queuedepthhigh")
            + "\n"
            + section_case("wrong", "QueueBrokerDown", "queuedepthhigh")
            + "\n"
        )
        cases, errors = load_cases(cases_file)
        settings = Settings(models_dir=MODELS_DIR, redis_url=NO_REDIS)
        result = evaluate(root, cases, errors, settings=settings, embedder=embedder)
        depth, wrong = result.main.outcomes
        assert (depth.top, depth.right) == ("queue/operations.md#queuedepthhigh", True)
        (row,) = [m for m in depth.to_json()["matches"] if m["section"] == "queuedepthhigh"]
        assert row["doc"] == "queue/operations.md"
        # A short "What it means" takes in the fix below it: either anchor is this section's.
        assert row["steps_section"] in ("how-to-fix", "what-it-means")
        assert depth.foreign_steps is False
        assert (wrong.top, wrong.right, wrong.wrong) == (
            "queue/operations.md#queuebrokerdown",
            False,
            True,
        )
        assert compute_metrics([depth, wrong]).foreign_steps == 0

    def test_steps_from_another_section_are_counted(self) -> None:
        foreign = replace(outcome("a", None, "matched", ("p.md#a",)), foreign_steps=True)
        assert compute_metrics([foreign, outcome("b", None, "no_match", ())]).foreign_steps == 1
