"""Section pages and rename rules of the training collection (pure, made-up text)."""

from __future__ import annotations

import pytest

from ingest.frontmatter import split_front_matter
from quality.train.pages import drop_section, named_page, section_anchors, strip_details
from quality.train.rename import (
    BLANK_NAMES,
    name_words,
    project_prefixes,
    renamed,
    reworded_summary,
)
from quality.train.rules import parse_rules, render_chart

PAGE = """# Ops

Intro text.

## Disk filling

The disk fills up. Clean it.

## Queue stuck

The queue does not drain. Restart the consumer.

```bash
## not a heading
```

## Cache cold

Warm it.
"""


class TestPages:
    def test_named_headings_become_sections(self) -> None:
        """Headings that are not identifiers are cut when the front matter names them."""
        text = named_page("Ops", PAGE, ["Disk filling", "Queue stuck", "Cache cold"])
        assert section_anchors("ops.md", text) == {
            "diskfilling": "disk-filling",
            "queuestuck": "queue-stuck",
            "cachecold": "cache-cold",
        }

    def test_drop_section_keeps_the_others(self) -> None:
        """Leaving one alert out takes its section, not the next one nor a fenced line."""
        text = drop_section(PAGE, "Queue stuck")
        assert "drain" not in text
        assert "## Cache cold" in text and "Clean it." in text

    def test_drop_section_unlists_its_alert(self) -> None:
        """A left-out section's alert leaves the front matter too: still listed, it would
        name the page for that alert, and its near miss would find the page by name."""
        page = named_page("Ops", PAGE, ["Disk filling", "Queue stuck", "Cache cold"])
        text = drop_section(page, "Queue stuck")
        meta, _ = split_front_matter(text)
        assert meta["alert_names"] == ["Cache cold", "Disk filling"]
        assert meta["title"] == "Ops"
        assert section_anchors("ops.md", text) == {
            "diskfilling": "disk-filling",
            "cachecold": "cache-cold",
        }

    def test_details_are_stripped(self) -> None:
        assert strip_details("a\n<details>\nrule\n</details>\nb") == "a\nb"


class TestRules:
    def test_helm_template_rule(self) -> None:
        """A chart's one-rule template reads as the rule it renders."""
        text = (
            '{{- $alert := "ToyDown" -}}\n{{- if true -}}\nalert: {{ $alert }}\n'
            'expr: up{namespace="{{ .namespace }}"} == 0\n{{- end -}}\n'
        )
        (rule,) = parse_rules(text, "toy.yaml")
        assert rule.name == "ToyDown"
        assert rule.expr == 'up{namespace="namespace"} == 0'

    def test_chart_rule_template(self) -> None:
        """A chart's PrometheusRule template (directives, release and value references, an
        escaped Prometheus template) reads as the rules its defaults render."""
        text = """{{- if .Values.monitoring.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  labels:
    {{- include "toy.labels" . | nindent 4 }}
spec:
  groups:
  - name: {{ .Release.Namespace }}-{{ .Release.Name }}
    rules:
    - alert: ToyQueueStuck
      annotations:
        summary: 'Queue of {{`{{ $labels.pod }}`}} is stuck'
      expr: >-
        toy_queue_depth{namespace="{{ .Release.Namespace }}",
        pod=~"{{ template "toy.name" . }}-.*"} > {{ .Values.thresholds.depth }}
      labels:
        service: {{ .Release.Name }}
{{- end }}
"""
        assert parse_rules(text, "rules.yaml") == []
        (rule,) = parse_rules(render_chart(text, "toy"), "rules.yaml")
        assert rule.name == "ToyQueueStuck"
        assert rule.group == "toy-toy"
        assert rule.expr == 'toy_queue_depth{namespace="toy", pod=~"name-.*"} > depth'
        assert rule.labels == {"service": "toy"}
        assert rule.annotations["summary"] == "Queue of {{ $labels.pod }} is stuck"

    def test_prometheus_templates_are_kept(self) -> None:
        text = "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: x > 1\n    annotations:\n"
        text += "      summary: '{{ $labels.instance }} is slow'\n"
        (rule,) = parse_rules(text, "a.yml")
        assert rule.annotations["summary"] == "{{ $labels.instance }} is slow"


class TestRename:
    @pytest.mark.parametrize("name", ["ToyDiskFull", "ToyQueueDown", "toy_cache_cold"])
    def test_renamed_differs_and_drops_the_prefix(self, name: str) -> None:
        prefixes = project_prefixes(["ToyDiskFull", "ToyQueueDown", "toy_cache_cold"])
        made = renamed(name, prefixes, "corpus")
        assert "toy" not in made.lower()
        assert made == renamed(name, prefixes, "corpus")

    def test_renamed_keeps_at_most_one_word_without_a_synonym(self) -> None:
        names = [
            f"Toy{a}{b}{c}"
            for a in ("Quorum", "Shard", "Widget")
            for b in ("Gossip", "Vault")
            for c in ("Stale", "Drift", "Skew")
        ]
        prefixes = project_prefixes(names)
        for name in names:
            original = {w.lower() for w in name_words(name)} - {"toy"}
            kept = [
                w for w in name_words(renamed(name, prefixes, "corpus")) if w.lower() in original
            ]
            assert len(kept) <= 1, name

    def test_a_name_with_no_word_left_says_nothing(self) -> None:
        blank = [
            made
            for made in (renamed("ZorkQuux", frozenset(), salt) for salt in "abcdefghijkl")
            if not any(w.lower() in {"zork", "quux"} for w in name_words(made))
        ]
        assert blank
        assert all(any(made.endswith(word) for word in BLANK_NAMES) for made in blank)

    def test_words_with_a_synonym_are_swapped(self) -> None:
        made = renamed("ToyPodHighLatency", frozenset({"toy"}), "corpus")
        assert {"Workload", "Elevated"} <= set(name_words(made))
        assert "ResponseTime" in made
        assert not {"Pod", "High", "Latency"} & set(name_words(made))

    def test_summary_is_cut_at_its_bracket(self) -> None:
        assert reworded_summary("Disk almost full (instance 10.0.0.1)") == "Volume almost full"
