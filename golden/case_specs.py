"""The golden specs as written in golden/specs.yaml: what a spec may say, and reading them.

specs.yaml's header documents each key. A spec is read strictly: an unknown or repeated
key, a value of the wrong type or outside its choices is an error that names the spec.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

import yaml

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
