"""Build golden/cases.jsonl from the hand-written alert specs in golden/specs.yaml.

Every case is one alert as a sender would deliver it (an Alertmanager v4 webhook body
or a PagerDuty v3 webhook event) plus the runbook that should be found for it. The
specs are the source of truth (specs.yaml's header says what each key means); the
payloads are derived from them deterministically (fingerprints, ids and timestamps come
from hashes and the spec's position, never from the clock or a random generator), so
running this script twice gives byte-identical output.

Usage:
    python golden/build_cases.py            # write golden/cases.jsonl and validate
    python golden/build_cases.py --check    # fail if cases.jsonl is out of date

It also validates the specs (known keys, types), the corpus (front matter, word
counts) and the cases (ids unique, expected runbooks exist, each case fits its kind).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from case_payloads import build_all, common, service_label
from case_specs import KINDS, NULL_KINDS, SECTION_KINDS, Spec, load_specs

from ingest.chunking import chunk_units

HERE = Path(__file__).resolve().parent
RUNBOOKS = HERE / "runbooks"
SPECS = HERE / "specs.yaml"
OUT = HERE / "cases.jsonl"
#: The headings every one-alert runbook of the golden corpus has.
HEADINGS = ("# ", "## Symptoms", "## Impact", "## Diagnosis", "## Mitigation", "## Escalation")


def read_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}, text
    end = text.index("\n---\n", 4)
    meta = yaml.safe_load(text[4:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: front matter is not a mapping")
    return meta, text[end + 5 :]


def page_sections(body: str, alert_names: list[str]) -> dict[str, str]:
    """Anchor -> alert name of each alert section, when the page has a section per alert
    (cut by the product's own rules, ingest.units); empty for a one-alert runbook."""
    units = chunk_units(body, max_chars=1500, min_chars=100, alert_names=alert_names)
    return {u.anchor: u.heading for u in units if u.anchor}


def runbook_sections() -> dict[str, dict[str, str]]:
    """doc path (relative to runbooks/) -> its alert sections (anchor -> alert name)."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted(RUNBOOKS.glob("*/*.md")):
        meta, body = read_front_matter(path)
        names = [str(n) for n in meta.get("alert_names") or []]
        out[path.relative_to(RUNBOOKS).as_posix()] = page_sections(body, names)
    return out


def runbook_alert_names() -> dict[str, set[str]]:
    """doc path (relative to runbooks/) -> alert names it serves (on a page with a section
    per alert, its sections' names; such a page is checked by its sections, not its size)."""
    names: dict[str, set[str]] = {}
    for path in sorted(RUNBOOKS.glob("*/*.md")):
        meta, body = read_front_matter(path)
        rel = path.relative_to(RUNBOOKS).as_posix()
        reviewed = meta.get("last_reviewed")
        if reviewed is not None and not isinstance(reviewed, date):
            raise ValueError(f"{rel}: last_reviewed is not a YYYY-MM-DD date")
        alert_names = meta.get("alert_names") or [path.stem]
        sections = page_sections(body, [str(n) for n in meta.get("alert_names") or []])
        if sections:
            names[rel] = set(sections.values())
            continue
        words = len(re.findall(r"\S+", body))
        if not 300 <= words <= 1200:
            raise ValueError(f"{rel}: {words} words, expected 300..1200")
        for heading in HEADINGS:
            if not re.search(rf"^{re.escape(heading)}", body, re.M):
                raise ValueError(f"{rel}: missing heading {heading!r}")
        names[rel] = {str(name) for name in alert_names}
    return names


def case_service(case: dict[str, Any]) -> str | None:
    payload = case["payload"]
    if "event" in payload:
        return str(payload["event"]["data"]["service"]["summary"])
    return service_label(payload["alerts"][0]["labels"])


def validate(specs: list[Spec], cases: list[dict[str, Any]]) -> list[str]:
    errors: list[str] = []
    docs = runbook_alert_names()
    sections = runbook_sections()
    all_names = set().union(*docs.values())
    ids = [c["id"] for c in cases]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"duplicate id {dup}")
    for spec, case in zip(specs, cases, strict=True):
        where = spec.id
        null_kind = spec.kind in NULL_KINDS
        if null_kind != (spec.expected is None):
            errors.append(f"{where}: expected_doc must be null exactly for {NULL_KINDS}")
        if (spec.kind in SECTION_KINDS) != bool(spec.section):
            errors.append(f"{where}: section must be set exactly for {SECTION_KINDS}")
        elif spec.section and spec.section not in sections.get(spec.expected or "", {}):
            errors.append(f"{where}: {spec.expected} has no alert section #{spec.section}")
        elif spec.kind == "section_exact" and sections[spec.expected or ""][spec.section] != (
            spec.alertname
        ):
            errors.append(f"{where}: section #{spec.section} is not {spec.alertname}'s")
        if spec.expected is not None and spec.expected not in docs:
            errors.append(f"{where}: expected {spec.expected} does not exist")
        if (
            spec.kind == "exact"
            and spec.expected in docs
            and spec.alertname not in docs[spec.expected]
        ):
            errors.append(f"{where}: {spec.alertname} not served by {spec.expected}")
        unnamed = (
            "renamed",
            "paraphrase",
            "no_runbook",
            "off_topic",
            "section_renamed",
            "section_missing",
        )
        if spec.kind in unnamed and spec.alertname in all_names:
            errors.append(f"{where}: {spec.alertname} is a runbook alert name")
        if spec.kind == "paraphrase" and spec.expected is not None:
            stem = Path(spec.expected).stem
            if stem.lower() in json.dumps(case["payload"]).lower():
                errors.append(f"{where}: paraphrase payload contains {stem}")
        if spec.kind == "service_alias" and spec.expected is not None:
            folder = spec.expected.split("/")[0]
            if case_service(case) in (None, folder):
                errors.append(f"{where}: service label equals folder {folder}")
        if spec.fmt in ("group", "truncated") and len(spec.vary_values) < 2:
            errors.append(f"{where}: a group needs 2+ alerts")
        if spec.fmt == "truncated" and spec.truncated <= 0:
            errors.append(f"{where}: truncated case without truncatedAlerts")
        if spec.fmt != "pd":
            payload = case["payload"]
            alerts = payload["alerts"]
            if payload["commonLabels"] != common([a["labels"] for a in alerts]):
                errors.append(f"{where}: commonLabels wrong")
            if not 1 <= len(alerts) <= 10:
                errors.append(f"{where}: {len(alerts)} alerts")
            if alerts[0]["labels"]["alertname"] != spec.alertname:
                errors.append(f"{where}: alertname mismatch")
    return errors


def report(cases: list[dict[str, Any]]) -> None:
    by_kind: Counter[tuple[str, str]] = Counter((c["kind"], c["split"]) for c in cases)
    formats: Counter[str] = Counter()
    for case in cases:
        payload = case["payload"]
        if "event" in payload:
            formats["pagerduty"] += 1
        elif payload["truncatedAlerts"]:
            formats["am-truncated"] += 1
        elif payload["status"] == "resolved":
            formats["am-resolved"] += 1
        elif len(payload["alerts"]) > 1:
            formats["am-group"] += 1
        else:
            formats["am-single"] += 1
    print(f"{len(cases)} cases")
    for kind in KINDS:
        dev, test, hold = (by_kind[(kind, split)] for split in ("dev", "test", "holdout"))
        print(f"  {kind:14} {dev + test + hold:3}  (dev {dev}, test {test}, holdout {hold})")
    print("  formats: " + ", ".join(f"{k} {v}" for k, v in sorted(formats.items())))
    docs = runbook_alert_names()
    covered = {c["expected_doc"] for c in cases if c["expected_doc"]}
    missing = sorted(set(docs) - covered)
    print(f"{len(docs)} runbooks, {len(covered)} expected by at least one case")
    if missing:
        print("  never expected: " + ", ".join(missing))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if cases.jsonl is stale")
    args = parser.parse_args(argv)
    specs, errors = load_specs(SPECS)
    cases = [] if errors else build_all(specs)
    errors = errors or validate(specs, cases)
    if errors:
        for error in errors:
            print("ERROR:", error, file=sys.stderr)
        return 1
    text = "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases)
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date; run python golden/build_cases.py", file=sys.stderr)
            return 1
    else:
        OUT.write_text(text, encoding="utf-8")
    report(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
