"""More renames for the reader to learn from: `python -m quality.train.augment`.

Each corpus of the collection gives every (rule, runbook) pair one team rename
(quality.train.rename, salted with the corpus name), so the reader sees one renamed alert
per runbook and can still learn a name's exact words. Here each renamed list that
quality.train.mine wrote (paraphrase and paraphrase_rewritten, runbook not left out) gets
`--variants` more alerts, each the same webhook body under another team's name for the
same rule (the rename salted with `<corpus>#<n>`). The candidates and labels are the mined
list's own: only what the alert is called changes. The lists go to `<mined>/augmented/`,
which training reads beside `train/` for the same corpora (so a fold reader never sees
a renamed alert of a corpus its fold leaves out) and measuring never reads.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from enricher.search import reader
from enricher.search.query import build_query
from quality.cases import Case, parse_case
from quality.train.mine import write
from quality.train.rename import project_prefixes, renamed
from quality.train.train_data import Listing, corpus_of, mined, read

RENAMED_KINDS = frozenset({"paraphrase", "paraphrase_rewritten"})
AUGMENTED_DIR = "augmented"


def _alertname(payload: dict[str, Any]) -> str:
    """The alert's name as the case's webhook body carries it (Alertmanager's label, or a
    PagerDuty title's `<alertname>:` head)."""
    if "alerts" in payload:
        return str(payload["alerts"][0]["labels"]["alertname"])
    return str(payload["event"]["data"]["title"]).split(":", 1)[0]


def _exact(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Alertmanager exact-name cases: one per pair, named as the rule is."""
    return [c for c in cases if c["kind"] == "exact_name" and "alerts" in c["payload"]]


def prefixes_of(cases: Sequence[dict[str, Any]]) -> frozenset[str]:
    """The project prefixes the collector dropped when it renamed (its pairs' rule names)."""
    return project_prefixes([_alertname(c["payload"]) for c in _exact(cases)])


def originals(corpus: str, cases: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Each renamed case id -> the rule's own name (pure). The collector renamed the exact
    name of each pair with the corpus as salt; among the exact cases of the same runbook,
    the one whose rename is the case's name is its rule."""
    exact = _exact(cases)
    prefixes = prefixes_of(cases)
    by_runbook: dict[tuple[str, str | None], list[str]] = {}
    for case in exact:
        key = (case["expected_doc"], case.get("expected_section"))
        by_runbook.setdefault(key, []).append(_alertname(case["payload"]))
    found: dict[str, str] = {}
    for case in cases:
        if case["kind"] not in RENAMED_KINDS:
            continue
        name = _alertname(case["payload"])
        rules = by_runbook.get((case["expected_doc"], case.get("expected_section")), [])
        rule = next((r for r in rules if renamed(r, prefixes, corpus) == name), None)
        if rule is not None:
            found[case["id"]] = rule
    return found


def variant(case: dict[str, Any], old: str, new: str) -> Case:
    """The case's webhook body with its team name `old` for the alert replaced by `new`."""
    text = json.dumps(case).replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    parsed = parse_case(text, 0)
    if not isinstance(parsed, Case):
        raise ValueError(f"augment: case {case['id']}: {parsed.reason}")
    return parsed


def augmented(
    corpus: str, cases: Sequence[dict[str, Any]], listings: Sequence[Listing], variants: int
) -> Iterator[Listing]:
    """`variants` more renamed alerts for each renamed list with its runbook in it."""
    rules = originals(corpus, cases)
    prefixes = prefixes_of(cases)
    by_id = {c["id"]: c for c in cases}
    for item in listings:
        if item.left_out or item.kind not in RENAMED_KINDS or item.case not in rules:
            continue
        case = by_id[item.case]
        old, rule = _alertname(case["payload"]), rules[item.case]
        seen = {old}
        for n in range(1, variants + 1):
            new = renamed(rule, prefixes, f"{corpus}#{n}")
            if new in seen:
                continue
            seen.add(new)
            alert = reader.alert_text(build_query(variant(case, old, new).alert))
            yield replace(item, case=f"{item.case}#{n}", alert=alert)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.train.augment", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path(".cache/train"))
    parser.add_argument("--mined", type=Path, default=Path(".cache/train/mined"))
    parser.add_argument("--variants", type=int, default=2)
    args = parser.parse_args(argv)
    for path in mined(args.mined / "train"):
        corpus = corpus_of(path)
        cases_file = args.root / corpus / "cases.jsonl"
        cases = [json.loads(line) for line in cases_file.read_text().splitlines() if line]
        rows = augmented(corpus, cases, read(path), args.variants)
        count = write(args.mined / AUGMENTED_DIR / f"{corpus}.jsonl", rows)
        print(f"augment: {corpus}: {count} lists", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
