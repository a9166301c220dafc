"""`python -m quality.audit_slice [--data DIR] [--slice prom-runbooks]`: the runbook audit on
a released dev slice, as a team's own rules repository would look.

Each Alertmanager case of the slice's `cases.jsonl` becomes one alerting rule: the alert
name and `severity` label, the annotations of the payload, and the expression its
`generatorURL` carries. (PagerDuty cases carry no rule expression and are left out.) The
rules are written to a rule file at run time; nothing from the slice is kept. The corpus is
indexed into a throwaway index and `enricher.audit` gives one verdict per rule, compared with
the case's expected runbook:

- a rule with a runbook: right runbook / wrong runbook / said none;
- a rule with none (near misses, noise): said none (right) / named a runbook (wrong).

Prints the confusion table, the share of right verdicts and the audit's time (indexing
excluded); the last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from enricher import logs
from enricher.audit.__main__ import audit
from enricher.audit.verdict import Verdict
from enricher.settings import load_settings
from enricher.sources.promql import expression
from quality.evalindex import EvalIndex

REPO = Path(__file__).resolve().parent.parent
#: Where the released slices are: beside the repository (CI), else this machine's copy.
DATA_DIRS = (REPO.parent / "shared" / "data", Path("/work/shared/data"))


def rule_file(cases: Path) -> tuple[dict[str, Any], dict[str, str | None]]:
    """The rule file of the slice's Alertmanager cases (one group per case, named by its id)
    and each case's expected runbook path by that id."""
    groups: list[dict[str, Any]] = []
    expected: dict[str, str | None] = {}
    for line in cases.read_text().splitlines():
        case = json.loads(line)
        if case["channel"] != "alertmanager":
            continue
        alert = case["payload"]["alerts"][0]
        labels = alert.get("labels", {})
        rule: dict[str, Any] = {
            "alert": labels["alertname"],
            "expr": expression(alert.get("generatorURL", "")),
            "labels": {k: v for k, v in labels.items() if k == "severity"},
            "annotations": alert.get("annotations", {}),
        }
        groups.append({"name": case["id"], "rules": [rule]})
        expected[case["id"]] = case["expected_doc"]
    return {"groups": groups}, expected


def outcome(verdict: Verdict, expected: str | None) -> str:
    confident = verdict.kind in ("linked", "matched") and verdict.runbook is not None
    named = verdict.runbook.path if confident and verdict.runbook else None
    if expected is None:
        return "said none (right)" if named is None else "named a runbook (wrong)"
    if named is None:
        return "said none"
    return "right runbook" if named == expected else "wrong runbook"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quality.audit_slice", description=__doc__)
    found = next((d for d in DATA_DIRS if d.is_dir()), DATA_DIRS[0])
    parser.add_argument("--data", type=Path, default=found, help="folder of the dev slices")
    parser.add_argument("--slice", default="prom-runbooks")
    args = parser.parse_args(argv)
    logs.configure(json=False, level="WARNING")
    slice_dir = args.data / args.slice
    if not (slice_dir / "cases.jsonl").is_file():
        print(f"error: no dev slice at {slice_dir}: pass --data", file=sys.stderr)
        return 2
    rules, expected = rule_file(slice_dir / "cases.jsonl")
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="audit-slice-") as folder:
        path = Path(folder) / "rules.yml"
        path.write_text(yaml.safe_dump(rules, sort_keys=False))
        with EvalIndex(slice_dir / "corpus", settings) as indexed:
            started = time.monotonic()
            verdicts, failed = audit(indexed.settings, indexed.index, indexed.embedder, [path])
            seconds = time.monotonic() - started
    if failed:
        print("\n".join(failed), file=sys.stderr)
        return 2
    counts = Counter(outcome(v, expected[v.rule.group]) for v in verdicts)
    for verdict in verdicts:
        result = outcome(verdict, expected[verdict.rule.group])
        if result not in ("right runbook", "said none (right)"):
            got = verdict.runbook.path if verdict.runbook else "-"
            print(f"  {result:<24} {verdict.rule.name:<40} expected "
                  f"{expected[verdict.rule.group]} got {verdict.kind} {got}")
    right = counts["right runbook"] + counts["said none (right)"]
    with_runbook = sum(1 for e in expected.values() if e is not None)
    print(f"{args.slice}: {len(verdicts)} rules ({with_runbook} with a runbook)")
    print("| rule has | right runbook | wrong runbook | said none |")
    print("|---|---|---|---|")
    print(f"| a runbook ({with_runbook}) | {counts['right runbook']} | "
          f"{counts['wrong runbook']} | {counts['said none']} |")
    print(f"| none ({len(verdicts) - with_runbook}) | – | "
          f"{counts['named a runbook (wrong)']} | {counts['said none (right)']} |")
    share = right / len(verdicts) if verdicts else 0.0
    print(f"right verdicts: {right}/{len(verdicts)} = {share:.3f}; audit took {seconds:.1f} s")
    print(json.dumps({"slice": args.slice, "rules": len(verdicts), "right": right,
                      "share": round(share, 4), "seconds": round(seconds, 2), **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
