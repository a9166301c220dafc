"""quality.train.augment: more team renames of the same rule, on the mined lists' candidates."""

from __future__ import annotations

import json
from typing import Any

from enricher.audit.rules import Rule
from enricher.search import reader
from enricher.search.query import build_query
from quality.cases import Case, parse_case
from quality.train.augment import augmented, originals
from quality.train.collect_cases import Positive, corpus_cases
from quality.train.rename import project_prefixes
from quality.train.train_data import Listing

CORPUS = "brokers"


def _rule(name: str, summary: str) -> Rule:
    return Rule(
        name,
        "sum(broker_partitions_offline) > 0",
        {"severity": "critical"},
        {"summary": summary, "description": f"{summary} on {{{{ $labels.instance }}}}."},
        "rules.yaml",
        "brokers",
    )


RULES = (
    _rule("BrokerPartitionsOffline", "Partitions are offline"),
    _rule("BrokerControllerMissing", "No active controller"),
    _rule("BrokerDiskNearlyFull", "The log disk is nearly full"),
)
POSITIVES = [Positive(r, f"brokers/{r.name}.md", None, "brokers") for r in RULES]


def _cases() -> list[dict[str, Any]]:
    prefixes = project_prefixes([r.name for r in RULES])
    return corpus_cases(CORPUS, POSITIVES, [], prefixes)


def _alert_text(case: dict[str, Any]) -> str:
    parsed = parse_case(json.dumps(case), 0)
    assert isinstance(parsed, Case)
    return reader.alert_text(build_query(parsed.alert))


def _listing(case: dict[str, Any], left_out: bool = False) -> Listing:
    expected = case["expected_doc"]
    keys = (expected, "brokers/Other.md")
    return Listing(
        corpus=CORPUS,
        case=case["id"],
        kind=case["kind"],
        left_out=left_out,
        alert=_alert_text(case),
        passages=("its runbook", "a sibling"),
        keys=keys,
        labels=(0, 0) if left_out else (1, 0),
    )


def test_each_renamed_case_is_traced_to_its_rule() -> None:
    cases = _cases()
    found = originals(CORPUS, cases)
    renamed_cases = [c for c in cases if c["kind"].startswith("paraphrase")]
    assert {c["id"] for c in renamed_cases} == set(found)
    for case in renamed_cases:
        assert found[case["id"]] == case["expected_doc"].split("/")[1].removesuffix(".md")


def test_variants_rename_the_alert_and_keep_the_candidates() -> None:
    cases = _cases()
    lists = [_listing(c) for c in cases if c["kind"].startswith("paraphrase")]
    out = list(augmented(CORPUS, cases, lists, variants=3))
    assert out
    by_case = {item.case: item for item in lists}
    for item in out:
        source = by_case[item.case.split("#")[0]]
        assert (item.passages, item.labels, item.keys) == (
            source.passages,
            source.labels,
            source.keys,
        )
        # the name in words (the text's head) changed, what follows it did not
        head, _, rest = item.alert.partition(". ")
        source_head, _, source_rest = source.alert.partition(". ")
        assert head != source_head
        assert rest == source_rest
    assert len({item.alert for item in out}) == len(out)


def test_left_out_lists_and_exact_names_get_no_variants() -> None:
    cases = _cases()
    lists = [_listing(c, left_out=True) for c in cases if c["kind"].startswith("paraphrase")]
    lists += [_listing(c) for c in cases if c["kind"] == "exact_name"]
    assert list(augmented(CORPUS, cases, lists, variants=2)) == []
