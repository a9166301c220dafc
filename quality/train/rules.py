"""Alerting rules read from a fetched repository's files: plain rule groups, PrometheusRule
resources, and single rules written as Helm templates (one ``alert:`` per file). Pure.

The rules come as text read at a pinned commit (gitread); each becomes the product's own
`enricher.audit.rules.Rule`. Helm's directives are rendered the plain way a chart's
defaults would: a line that is only a directive goes, ``{{ $alert }}`` becomes the name
the template binds, and any other value reference becomes the name it reads
(``{{ .namespace }}`` reads ``namespace``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from enricher.audit.rules import Rule

__all__ = ["parse_rules", "render_chart", "render_helm"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DIRECTIVE_LINE = re.compile(r"^\s*\{\{-?[^}]*-?\}\}\s*$")
_BIND = re.compile(r'\{\{-?\s*\$(\w+)\s*:=\s*"([^"]*)"\s*-?\}\}')
_VARIABLE = re.compile(r"\{\{-?\s*\$(\w+)[^}]*\}\}")
_FIELD = re.compile(r"\{\{-?\s*\.(\w+)[^}]*-?\}\}")
#: A Prometheus template a chart escapes from Helm: {{`{{ $labels.pod }}`}}.
_ESCAPED = re.compile(r"\{\{`(.*?)`\}\}")
#: A chart's value reference (``{{ .Release.Namespace }}``) or named template
#: (``{{ template "kafka.name" . }}``), and the name it stands for.
_VALUE = re.compile(r"\{\{-?\s*\.(?:\w+\.)*(\w+)\s*-?\}\}")
_RELEASE = re.compile(r"\{\{-?\s*\.Release\.(?:Name|Namespace)\s*-?\}\}")
_TEMPLATE = re.compile(r'\{\{-?\s*(?:template|include)\s+"(?:[\w-]+\.)?([\w-]+)"[^}]*-?\}\}')


def render_helm(text: str) -> str:
    """A Helm-templated rule file (one that binds the alert's name, ``{{- $alert := ...}}``)
    as the chart renders it with placeholder values; any other text unchanged (its
    ``{{ $labels.x }}`` are Prometheus's, filled when the alert fires)."""
    bound: dict[str, str] = {str(k): str(v) for k, v in _BIND.findall(text)}
    if not bound:
        return text
    lines = [line for line in text.splitlines() if not _DIRECTIVE_LINE.match(line)]
    out = "\n".join(lines)

    def variable(found: re.Match[str]) -> str:
        return bound.get(found.group(1), found.group(1))

    out = _VARIABLE.sub(variable, out)
    return _FIELD.sub(lambda m: m.group(1), out)


def render_chart(text: str, release: str) -> str:
    """A chart's rule template (no bound alert name) as its defaults would render it, in
    the plain way: lines that are only directives (``{{- if ...}}``, ``{{- end }}``, an
    ``include ... | nindent``) go, an escaped Prometheus template is unescaped, and a value
    reference or named template becomes the name it reads (``{{ .Values.limits.lag }}``
    reads ``lag``, ``{{ template "kafka.name" . }}`` reads ``name``). Prometheus's own
    ``{{ $labels.x }}`` stay, to be filled when the alert fires. The chart is taken as
    installed under `release`, in a namespace of that name: ``.Release.Name`` and
    ``.Release.Namespace`` read `release`."""
    lines = [line for line in text.splitlines() if not _DIRECTIVE_LINE.match(line)]
    out = _ESCAPED.sub(lambda m: m.group(1), "\n".join(lines))
    out = _RELEASE.sub(release, out)
    out = _TEMPLATE.sub(lambda m: m.group(1), out)
    return _VALUE.sub(lambda m: m.group(1), out)


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _rule_specs(document: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(group name, rule mapping) of every rule a YAML document holds."""
    if isinstance(document, list):
        for item in document:
            yield from _rule_specs(item)
        return
    if not isinstance(document, Mapping):
        return
    if "alert" in document:
        yield "", document
        return
    groups = document.get("groups")
    spec = document.get("spec")
    if groups is None and isinstance(spec, Mapping):
        groups = spec.get("groups")
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, Mapping):
            continue
        for rule in group.get("rules") or []:
            if isinstance(rule, Mapping):
                yield str(group.get("name") or ""), rule


def parse_rules(text: str, file: str) -> list[Rule]:
    """The alerting rules of one file's text, in file order; [] when it holds none or does
    not parse (a chart template the plain rendering cannot read)."""
    try:
        documents = list(yaml.load_all(render_helm(text), Loader=_LOADER))
    except yaml.YAMLError:
        return []
    rules: list[Rule] = []
    for document in documents:
        for group, spec in _rule_specs(document):
            name = spec.get("alert")
            if not isinstance(name, str) or not name.strip():
                continue
            rules.append(
                Rule(
                    name=name.strip(),
                    expr=str(spec.get("expr") or "").strip(),
                    labels=_strings(spec.get("labels")),
                    annotations=_strings(spec.get("annotations")),
                    file=file,
                    group=group,
                )
            )
    return rules
