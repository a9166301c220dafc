"""The synthetic corpus's alert cases (scripts/corpus_gen/cases.py): deterministic, parsed
by the eval's own reader, and labelled so that the right answer is the one they name."""

from __future__ import annotations

import json
import string
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from enricher.search.names import name_key
from enricher.sources.promql import expression, metric_names, quoted_names
from quality.cases import Case, load_cases, parse_case
from scripts.corpus_gen import Runbook, runbooks
from scripts.corpus_gen.__main__ import main
from scripts.corpus_gen.cases import CASE_KINDS, Target, _target, cases, sizes
from scripts.corpus_gen.generate import KINDS, _combos
from scripts.corpus_gen.noise import NOISE, NOISE_SLOTS
from scripts.corpus_gen.rewordings import RENAMED, REWORDED
from scripts.corpus_gen.rules import EXPRESSIONS

COUNT = 60


@pytest.fixture(scope="module")
def books() -> list[Runbook]:
    return runbooks(COUNT)


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    return cases(COUNT)


@pytest.fixture(scope="module")
def parsed(items: list[dict[str, Any]]) -> list[Case]:
    out = []
    for line, item in enumerate(items, start=1):
        case = parse_case(json.dumps(item), line)
        assert isinstance(case, Case), case
        out.append(case)
    return out


def every_alert_key() -> set[str]:
    """Name keys of every alert name any runbook of the generator may carry, aliases too."""
    return {name_key(name) for *_, name in _combos(7)} | {name_key(k.key) for k in KINDS}


def test_same_count_and_seed_give_the_same_cases(items: list[dict[str, Any]]) -> None:
    assert json.dumps(cases(COUNT)) == json.dumps(items)
    assert json.dumps(cases(COUNT, seed=8)) != json.dumps(items)


def test_every_case_parses_and_ids_are_unique(
    items: list[dict[str, Any]], parsed: list[Case]
) -> None:
    assert len({c.id for c in parsed}) == len(items)
    assert {c.kind for c in parsed} == set(CASE_KINDS)
    assert Counter(c.kind for c in parsed) == sizes(COUNT)
    assert {c.split for c in parsed} == {"dev", "test"}


def test_expected_runbooks_are_in_the_corpus(books: list[Runbook], parsed: list[Case]) -> None:
    paths = {b.path for b in books}
    for case in parsed:
        positive = case.kind not in ("near_miss", "noise")
        assert (case.expected is not None) == positive, case.id
        assert case.expected is None or case.expected in paths, case.id


def test_names_say_which_runbook_only_for_exact_cases(
    books: list[Runbook], parsed: list[Case]
) -> None:
    indexed = {name_key(n) for b in books for n in b.alert_names}
    everywhere = every_alert_key()
    by_path = {b.path: b for b in books}
    for case in parsed:
        key = name_key(case.alert.alert_name)
        if case.kind == "exact_name":
            assert case.expected is not None
            assert case.alert.alert_name == by_path[case.expected].alert_name
        elif case.kind == "near_miss":
            assert key not in indexed, case.id
        else:
            assert key not in everywhere, case.id


def test_near_misses_have_siblings_in_the_corpus(books: list[Runbook], parsed: list[Case]) -> None:
    services, kinds = {b.service for b in books}, {b.kind for b in books}
    names = {name: (s, k.key) for s, _, k, name in _combos(7)}
    for case in parsed:
        if case.kind == "near_miss":
            service, kind = names[case.alert.alert_name]
            assert service in services or kind in kinds, case.id


def test_positive_annotations_follow_their_kind(books: list[Runbook], parsed: list[Case]) -> None:
    by_path = {b.path: b for b in books}
    for case in parsed:
        if case.expected is None or case.kind == "pagerduty_title":
            continue
        book = by_path[case.expected]
        same = (case.alert.summary, case.alert.description) == (book.summary, book.description)
        assert same == (case.kind != "paraphrase_rewritten"), case.id


def test_pagerduty_titles_are_alertmanager_subjects(parsed: list[Case]) -> None:
    titled = [c for c in parsed if c.kind == "pagerduty_title"]
    assert titled
    for case in titled:
        assert case.alert.source == "pagerduty"
        assert case.alert.summary.startswith(case.alert.alert_name + " (")


def test_cases_recompute_the_slots_their_runbooks_were_written_with(
    books: list[Runbook],
) -> None:
    kinds = {k.key: k for k in KINDS}
    for index, book in enumerate(books):
        kind = kinds[book.kind]
        target = _target(7, index, book.service, book.component, kind, book.alert_name, None)
        assert target.fill(kind.summary) == book.summary
        assert target.fill(kind.description) == book.description


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def test_every_kind_has_rewordings_names_and_a_rule(books: list[Runbook]) -> None:
    keys = {k.key for k in KINDS}
    assert set(REWORDED) == set(RENAMED) == set(EXPRESSIONS) == keys
    target: Target = _target(7, 0, books[0].service, books[0].component, KINDS[0], "X", None)
    for kind in KINDS:
        for reworded, own in zip(REWORDED[kind.key], (kind.summary, kind.description),
                                 strict=True):
            assert placeholders(reworded) <= placeholders(own) | {"Name"}, kind.key
            assert reworded != own
        assert metric_names(target.fill(EXPRESSIONS[kind.key])), kind.key
        assert not {name_key(e) for e in RENAMED[kind.key]} & {name_key(k) for k in keys}


def test_rules_reuse_the_metric_names_runbooks_quote(
    books: list[Runbook], items: list[dict[str, Any]]
) -> None:
    by_path = {b.path: b for b in books}
    checked = 0
    for item in items:
        if item["kind"] in ("exact_name", "paraphrase", "paraphrase_rewritten"):
            book = by_path[item["expected_doc"]]
            rule = metric_names(expression(item["payload"]["alerts"][0]["generatorURL"]))
            if book.kind in ("HighErrorRate", "HighLatencyP99", "TrafficDrop"):
                assert set(rule) <= set(quoted_names(book.text)), item["id"]
                checked += 1
    assert checked


def test_noise_templates_fill() -> None:
    assert 10 <= len(NOISE) <= 20
    for alert in NOISE:
        for text in (alert.instance, alert.summary, alert.description, alert.expr):
            assert placeholders(text) <= set(NOISE_SLOTS), alert.name


def test_cli_writes_corpus_and_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--count", "12", "--out", str(tmp_path)]) == 0
    loaded, errors = load_cases(tmp_path / "cases.jsonl")
    assert not errors
    assert all((tmp_path / "runbooks" / c.expected).is_file() for c in loaded if c.expected)
    assert "near_miss" in capsys.readouterr().out
    assert main(["--count", "5", "--out", str(tmp_path)]) == 1
