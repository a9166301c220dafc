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
import hashlib
import json
import re
import sys
from collections import Counter
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints
from urllib.parse import quote

import yaml

from ingest.chunking import chunk_units

HERE = Path(__file__).resolve().parent
RUNBOOKS = HERE / "runbooks"
SPECS = HERE / "specs.yaml"
OUT = HERE / "cases.jsonl"

KINDS = (
    "exact",
    "renamed",
    "paraphrase",
    "service_alias",
    "no_runbook",
    "off_topic",
    "section_exact",
    "section_renamed",
    "section_missing",
)
#: Kinds whose right answer is "no confident match".
NULL_KINDS = ("no_runbook", "off_topic", "section_missing")
#: Kinds about one alert's section of a page with a section per alert (ingest.units).
SECTION_KINDS = ("section_exact", "section_renamed")
FORMATS = ("single", "group", "resolved", "truncated", "pd")
#: The values a spec key may take, where they are few.
CHOICES = {"kind": KINDS, "fmt": FORMATS, "split": ("", "dev", "test", "holdout")}
HEADINGS = ("# ", "## Symptoms", "## Impact", "## Diagnosis", "## Mitigation", "## Escalation")

BASE_TIME = datetime(2026, 11, 28, 0, 0, 0, tzinfo=UTC)
ZERO_TIME = "0001-01-01T00:00:00Z"
EXTERNAL_URL = "http://alertmanager.example:9093"
PROMETHEUS_URL = "http://prometheus.example"
PD_BASE = "https://acme.pagerduty.example"
#: Where PagerDuty's web UI shows each kind of object.
PD_PATHS = dict(service="service-directory", user="users", escalation_policy="escalation_policies")
RECEIVER = "runbook-enricher"
#: Label keys that carry the service name in the wild (checked in this order).
SERVICE_KEYS = ("service", "app", "job")

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ALNUM_UPPER = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Spec:
    """One golden case as written in specs.yaml (its header documents the keys)."""

    kind: str
    id: str
    expected: str | None
    alertname: str
    labels: dict[str, str]
    summary: str
    description: str
    fmt: str = "single"
    vary_key: str = ""
    vary_values: list[str] = field(default_factory=list)
    truncated: int = 0
    resolved_last: bool = False
    group_by: list[str] = field(default_factory=list)
    expr: str = ""
    extra_annotations: dict[str, str] = field(default_factory=dict)
    pd_title: str = ""
    pd_service: str = ""
    pd_incident_key: str = ""
    split: str = ""
    #: The anchor of the expected alert section (section kinds only).
    section: str = ""


def digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


def encode(data: bytes, alphabet: str, length: int) -> str:
    number = int.from_bytes(data, "big")
    chars = []
    for _ in range(length):
        number, rest = divmod(number, len(alphabet))
        chars.append(alphabet[rest])
    return "".join(chars)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def fingerprint(labels: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16]


def fill(template: str, labels: dict[str, str]) -> str:
    for key, value in labels.items():
        template = template.replace("{" + key + "}", value)
    return template


def sorted_dict(values: dict[str, str]) -> dict[str, str]:
    return {key: values[key] for key in sorted(values)}


def service_label(labels: dict[str, str]) -> str | None:
    return next((labels[key] for key in SERVICE_KEYS if key in labels), None)


def common(items: list[dict[str, str]]) -> dict[str, str]:
    """Key/value pairs present with the same value in every item (Alertmanager rule)."""
    if not items:
        return {}
    first, *rest = items
    return sorted_dict({k: v for k, v in first.items() if all(i.get(k) == v for i in rest)})


def label_set_string(labels: dict[str, str]) -> str:
    pairs = ", ".join(f'{key}="{labels[key]}"' for key in sorted(labels))
    return "{" + pairs + "}"


def am_subject(
    status: str, firing: int, group: dict[str, str], common_labels: dict[str, str]
) -> str:
    """Alertmanager's default `__subject` template, as used for PagerDuty titles."""
    head = f"[{status.upper()}:{firing}]" if status == "firing" else f"[{status.upper()}]"
    text = f"{head} {' '.join(group[k] for k in sorted(group))}"
    rest = {k: v for k, v in common_labels.items() if k not in group}
    if rest:
        text += " (" + " ".join(rest[k] for k in sorted(rest)) + ")"
    return text


def build_alerts(spec: Spec, start: datetime) -> list[dict[str, Any]]:
    values = spec.vary_values if spec.vary_key else [""]
    expr = spec.expr or f'ALERTS{{alertname="{spec.alertname}"}}'
    generator = f"{PROMETHEUS_URL}/graph?g0.expr={quote(expr, safe='')}&g0.tab=1"
    alerts: list[dict[str, Any]] = []
    for position, value in enumerate(values):
        labels = {"alertname": spec.alertname, **spec.labels}
        if spec.vary_key:
            labels[spec.vary_key] = value
        labels = sorted_dict(labels)
        annotations = {
            "summary": fill(spec.summary, labels),
            "description": fill(spec.description, labels),
            **{k: fill(v, labels) for k, v in spec.extra_annotations.items()},
        }
        starts = start + timedelta(seconds=30 * position)
        resolved = spec.fmt == "resolved" or (spec.resolved_last and position == len(values) - 1)
        alerts.append(
            {
                "status": "resolved" if resolved else "firing",
                "labels": labels,
                "annotations": sorted_dict(annotations),
                "startsAt": iso(starts),
                "endsAt": iso(starts + timedelta(minutes=23)) if resolved else ZERO_TIME,
                "generatorURL": generator,
                "fingerprint": fingerprint(labels),
            }
        )
    return alerts


def group_labels_for(spec: Spec, common_labels: dict[str, str]) -> dict[str, str]:
    keys = spec.group_by or ["alertname"]
    if not spec.group_by and spec.fmt == "pd":
        service_key = next((k for k in SERVICE_KEYS if k in spec.labels), None)
        keys = ["alertname", service_key] if service_key else ["alertname"]
    return sorted_dict({k: common_labels[k] for k in keys if k in common_labels})


def alertmanager_body(spec: Spec, start: datetime) -> dict[str, Any]:
    alerts = build_alerts(spec, start)
    common_labels = common([a["labels"] for a in alerts])
    group = group_labels_for(spec, common_labels)
    status = "firing" if any(a["status"] == "firing" for a in alerts) else "resolved"
    return {
        "version": "4",
        "groupKey": "{}:" + label_set_string(group),
        "truncatedAlerts": spec.truncated,
        "status": status,
        "receiver": RECEIVER,
        "groupLabels": group,
        "commonLabels": common_labels,
        "commonAnnotations": common([a["annotations"] for a in alerts]),
        "externalURL": EXTERNAL_URL,
        "alerts": alerts,
    }


def pd_id(prefix: str, length: int, *parts: str) -> str:
    return prefix + encode(digest(*parts), ALNUM_UPPER, length)


def pd_reference(kind: str, ref_id: str, summary: str) -> dict[str, str]:
    """A PagerDuty reference to a service, user or escalation policy, in PagerDuty's order."""
    return {
        "id": ref_id,
        "summary": summary,
        "type": f"{kind}_reference",
        "html_url": f"{PD_BASE}/{PD_PATHS[kind]}/{ref_id}",
    }


def pagerduty_body(spec: Spec, start: datetime, number: int) -> dict[str, Any]:
    am = alertmanager_body(spec, start)
    firing = sum(1 for a in am["alerts"] if a["status"] == "firing")
    title = spec.pd_title or am_subject(am["status"], firing, am["groupLabels"], am["commonLabels"])
    name = spec.pd_service or service_label(spec.labels) or spec.alertname
    service = pd_reference("service", pd_id("PSVC", 3, "service", name), name)
    severity = spec.labels.get("severity", "warning")
    priority_name = {"page": "P1", "critical": "P2", "warning": "P3"}.get(severity)
    priority: dict[str, str] | None = None
    if priority_name:
        priority_id = pd_id("P", 6, "priority", priority_name)
        priority = {"id": priority_id, "type": "priority_reference", "summary": priority_name}
    incident_id = pd_id("Q", 13, "incident", spec.id)
    incident_key = spec.pd_incident_key or hashlib.sha256(am["groupKey"].encode()).hexdigest()
    occurred = start + timedelta(minutes=2)
    return {
        "event": {
            "id": "01" + encode(digest("event", spec.id), CROCKFORD, 24),
            "event_type": "incident.triggered",
            "resource_type": "incident",
            "occurred_at": occurred.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "agent": {key: service[key] for key in ("id", "type", "summary", "html_url")},
            "client": None,
            "data": {
                "id": incident_id,
                "type": "incident",
                "self": f"https://api.pagerduty.example/incidents/{incident_id}",
                "html_url": f"{PD_BASE}/incidents/{incident_id}",
                "number": number,
                "status": "triggered",
                "incident_key": incident_key,
                "created_at": iso(occurred),
                "title": title,
                "service": service,
                "assignees": [
                    pd_reference("user", pd_id("P", 6, "user", name), "On-call engineer")
                ],
                "escalation_policy": pd_reference(
                    "escalation_policy", pd_id("P", 6, "policy", name), f"{name} escalation"
                ),
                "teams": [],
                "priority": priority,
                "urgency": "high" if severity in ("critical", "page") else "low",
                "conference_bridge": None,
                "resolve_reason": None,
            },
        }
    }


def build_all(specs: list[Spec]) -> list[dict[str, Any]]:
    """One case per spec; a spec's position fixes its timestamps and PagerDuty number."""
    seen: Counter[str] = Counter()
    cases = []
    for index, spec in enumerate(specs):
        split = spec.split
        if not split:
            split = "dev" if seen[spec.kind] % 2 == 0 else "test"
            seen[spec.kind] += 1
        start = BASE_TIME + timedelta(minutes=7 * index)
        if spec.fmt == "pd":
            payload = pagerduty_body(spec, start, 4100 + index)
        else:
            payload = alertmanager_body(spec, start)
        case = {
            "id": spec.id,
            "kind": spec.kind,
            "split": split,
            "payload": payload,
            "expected_doc": spec.expected,
        }
        if spec.section:
            case["expected_section"] = spec.section
        cases.append(case)
    return cases


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a repeated key; PyYAML would silently keep the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
            seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def fits(value: object, hint: Any) -> bool:
    """Whether a YAML value has a Spec field's type; exactly, as a bool is also an int."""
    args = get_args(hint)
    if isinstance(hint, UnionType):
        return any(fits(value, arg) for arg in args)
    if get_origin(hint) is list:
        return isinstance(value, list) and all(fits(item, args[0]) for item in value)
    if get_origin(hint) is dict:
        return isinstance(value, dict) and all(
            fits(k, args[0]) and fits(v, args[1]) for k, v in value.items()
        )
    return type(value) is hint


def load_specs(path: Path) -> tuple[list[Spec], list[str]]:
    """The specs in file order, or the problems with each malformed entry."""
    try:
        with path.open(encoding="utf-8") as stream:
            data = yaml.load(stream, Loader=UniqueKeyLoader)
    except yaml.YAMLError as error:
        return [], [f"{path.name}: {error}"]
    if not isinstance(data, list):
        return [], [f"{path.name}: expected a list of specs"]
    types = get_type_hints(Spec)
    required = [
        f.name for f in fields(Spec) if f.default is MISSING and f.default_factory is MISSING
    ]
    specs: list[Spec] = []
    errors: list[str] = []
    for number, entry in enumerate(data, 1):
        if not isinstance(entry, dict):
            errors.append(f"{path.name}: spec #{number} is not a mapping")
            continue
        where = entry["id"] if isinstance(entry.get("id"), str) else f"spec #{number}"
        problems = [f"{where}: missing key {key}" for key in required if key not in entry]
        for key, value in entry.items():
            if key not in types:
                problems.append(f"{where}: unknown key {key}")
            elif not fits(value, hint := types[key]):
                type_name = hint.__name__ if isinstance(hint, type) else hint
                problems.append(f"{where}: {key} must be {type_name}, not {value!r}")
            elif value not in CHOICES.get(key, (value,)):
                problems.append(f"{where}: {key} must be one of {CHOICES[key]}, not {value!r}")
        errors += problems
        if not problems:
            specs.append(Spec(**entry))
    return specs, errors


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
