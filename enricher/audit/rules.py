"""Prometheus alerting rules from rule files: plain rule groups (`groups:`) or PrometheusRule
custom resources (`spec.groups`), one YAML document or several, a file or a folder of them.

Recording rules are skipped; documents that hold no rule groups (other Kubernetes objects in
a manifests folder) are too. A file that cannot be read becomes a `RuleFileError` and the
others are still read. Rule files come from whoever can open a pull request on the rules
repository, so what is read is bounded: the file's size, and the number of YAML nodes after
aliases are expanded (a few anchors can stand for billions of nodes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

__all__ = ["Rule", "RuleFileError", "Scan", "read_rules"]

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_NODES = 2_000_000
RULE_SUFFIXES = (".yml", ".yaml")
#: libyaml's safe loader when PyYAML was built with it: about 10x faster on big rule files.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Rule:
    name: str
    expr: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    #: The file it came from, as given (or found under a given folder); `-` is stdin.
    file: str
    group: str
    #: The line of its `alert:` key (1 when it cannot be told): where CI shows a finding.
    line: int = 1

    @property
    def runbook_url(self) -> str | None:
        return self.annotations.get("runbook_url") or self.annotations.get("runbook") or None


@dataclass(frozen=True)
class RuleFileError:
    file: str
    reason: str


@dataclass(frozen=True)
class Scan:
    rules: tuple[Rule, ...]
    errors: tuple[RuleFileError, ...] = field(default_factory=tuple)


def _strings(value: Any) -> Any:
    """Label and annotation values as YAML wrote them (`severity: 1` is the string "1")."""
    if isinstance(value, Mapping):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    return value


class _RuleSpec(BaseModel):
    model_config = ConfigDict(extra="ignore")
    alert: str | None = None
    expr: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}

    @field_validator("labels", "annotations", mode="before")
    @classmethod
    def _as_strings(cls, value: Any) -> Any:
        return _strings(value)

    @field_validator("expr", mode="before")
    @classmethod
    def _expr(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value


class _GroupSpec(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = ""
    rules: list[_RuleSpec] = []


class _Groups(BaseModel):
    model_config = ConfigDict(extra="ignore")
    groups: list[_GroupSpec]


def read_rules(paths: Iterable[Path], stdin: TextIO | None = None) -> Scan:
    """Every alerting rule under `paths` (files, or folders searched for *.yml / *.yaml);
    `-` is `stdin` (`helm template ... | python -m enricher.audit -`)."""
    rules: list[Rule] = []
    errors: list[RuleFileError] = []
    for path in paths:
        if str(path) == "-" and stdin is not None:
            found = _read_text("-", stdin.read(MAX_FILE_BYTES + 1))
            if isinstance(found, RuleFileError):
                errors.append(found)
            else:
                rules.extend(found)
            continue
        for file in _rule_files(path, errors):
            found = _read_file(file)
            if isinstance(found, RuleFileError):
                errors.append(found)
            else:
                rules.extend(found)
    return Scan(tuple(rules), tuple(errors))


def _rule_files(path: Path, errors: list[RuleFileError]) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        errors.append(RuleFileError(str(path), "no such file or folder"))
        return []
    found: list[Path] = []
    for folder, subfolders, files in os.walk(path):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        found += [
            Path(folder, name)
            for name in sorted(files)
            if name.endswith(RULE_SUFFIXES) and not name.startswith(".")
        ]
    return found


def _read_file(file: Path) -> list[Rule] | RuleFileError:
    where = str(file)
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            return RuleFileError(where, f"larger than {MAX_FILE_BYTES // 2**20} MiB")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return RuleFileError(where, f"cannot read: {exc}")
    return _read_text(where, text)


def _read_text(where: str, text: str) -> list[Rule] | RuleFileError:
    if len(text) > MAX_FILE_BYTES:
        return RuleFileError(where, f"larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        documents = list(yaml.load_all(text, Loader=_LOADER))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        helm = (
            "; it holds {{ }} template actions, so it looks like a Helm template: render it "
            "first, `helm template CHART | python -m enricher.audit -`"
            if "{{" in text else ""
        )
        return RuleFileError(where, f"not valid YAML{at}: {getattr(exc, 'problem', exc)}{helm}")
    lines = _alert_lines(text)
    rules: list[Rule] = []
    for number, document in enumerate(documents, start=1):
        if not _within_budget(document, MAX_NODES):
            return RuleFileError(where, f"document {number} expands to over {MAX_NODES} nodes")
        groups = _groups_of(document)
        if groups is None:
            continue
        try:
            parsed = _Groups.model_validate({"groups": groups})
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            loc = ".".join(str(p) for p in first["loc"])
            return RuleFileError(where, f"document {number}: {loc}: {first['msg'].lower()}")
        for group in parsed.groups:
            rules += [
                Rule(
                    name=spec.alert,
                    expr=spec.expr,
                    labels=spec.labels,
                    annotations=spec.annotations,
                    file=where,
                    group=group.name,
                    line=_line_of(lines, spec.alert),
                )
                for spec in group.rules
                if spec.alert
            ]
    return rules


_ALERT_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)?alert:(.*)$", re.MULTILINE)


def _alert_lines(text: str) -> dict[str, list[int]]:
    """The lines of the `alert:` keys, by alert name, in file order (one pass)."""
    found: dict[str, list[int]] = {}
    line, at = 1, 0
    for match in _ALERT_KEY.finditer(text):
        line += text.count("\n", at, match.start())
        at = match.start()
        name = match[1].partition(" #")[0].strip().strip("'\"").strip()
        found.setdefault(name, []).append(line)
    return found


def _line_of(lines: dict[str, list[int]], name: str) -> int:
    """The next unclaimed line of `name`'s `alert:` key (rules come in file order)."""
    left = lines.get(name)
    return left.pop(0) if left else 1


def _groups_of(document: Any) -> Any:
    """The rule groups of a plain rule file or a PrometheusRule; None for anything else."""
    if not isinstance(document, Mapping):
        return None
    if "groups" in document:
        return document["groups"]
    spec = document.get("spec")
    if document.get("kind") == "PrometheusRule" and isinstance(spec, Mapping):
        return spec.get("groups", [])
    return None


def _within_budget(value: Any, budget: int) -> bool:
    """False once more than `budget` nodes are visited (shared alias nodes count each time
    they are reached, as a validator would walk them)."""
    stack = [value]
    while stack:
        budget -= 1
        if budget < 0:
            return False
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return True
