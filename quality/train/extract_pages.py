"""Projects that keep one page with a section per alert.

The page goes into the corpus whole (its front matter naming the alert headings, so that
ingest cuts it into units the way it cuts any team's such page); each alert heading is
paired with the project's rule of that name, or, when the project publishes the rule only
on the page (its expression and description under the heading), with that rule.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from enricher.audit.rules import Rule
from enricher.search.names import name_key
from ingest.frontmatter import split_front_matter
from ingest.units import alert_name, identifier
from quality.train.gitread import Tree
from quality.train.model import Extracted, Pair
from quality.train.pages import headings, named_page, strip_details
from quality.train.rules import parse_rules, render_chart

__all__ = ["harvest", "pingcap", "qubership", "sourcegraph", "tempo"]

_SEVERITY = re.compile(r"\b(emergency|critical|warning)\b", re.IGNORECASE)
_FIELD = re.compile(r"^\s*[-*]\s*(Alert rule|Description|Rule|Solution)s?:\s*$", re.IGNORECASE)
_SUBTITLE = re.compile(r'<p class="subtitle">(.*?)</p>')
_BADGE = re.compile(r'<span class="badge badge-(\w+)">\w+</span>\s*(.*)')
_QUERY = re.compile(r"Generated query for (\w+) alert: `(.*)`")
_SILENCE = re.compile(r'^\s*"((?:warning|critical)_[\w]+)"', re.MULTILINE)
_TAG = re.compile(r"<[^>]+>")
_DROPPED_LABELS = frozenset({"expr", "env"})
_ENV = "ENV_LABELS_ENV"


def _sections(text: str, is_alert: Callable[[int, str], bool]) -> dict[str, tuple[str, str]]:
    """Alert heading -> (its section's text, the severity its enclosing headings name)."""
    lines = text.splitlines()
    found = headings(text)
    out: dict[str, tuple[str, str]] = {}
    severity = ""
    for position, (level, title, start) in enumerate(found):
        if (named := _SEVERITY.search(title)) and not is_alert(level, title):
            severity = named.group(1).lower()
        if not is_alert(level, title) or title in out:
            continue
        end = next((n for _, _, n in found[position + 1 :]), len(lines))
        out[title] = ("\n".join(lines[start + 1 : end]), severity)
    return out


def _fields(section: str) -> dict[str, str]:
    """The `* Alert rule:` / `* Description:` paragraphs of a PingCAP-style section."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in section.splitlines():
        if found := _FIELD.match(line):
            current = found.group(1).lower()
            out[current] = []
        elif current is not None and (line.strip() or out[current]):
            out[current].append(line.strip().strip("`").strip())
    return {k: " ".join(" ".join(v).split()) for k, v in out.items()}


def _first_sentence(text: str) -> str:
    head = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return head.rstrip(".")


def _page_rule(name: str, section: str, severity: str, file: str) -> Rule | None:
    fields = _fields(section)
    description = fields.get("description", "")
    if not description:
        return None
    expr = fields.get("alert rule") or fields.get("rule") or ""
    labels = {"severity": severity} if severity else {}
    annotations = {"summary": _first_sentence(description), "description": description}
    return Rule(name, expr, labels, annotations, file, "")


def _clean(rule: Rule) -> Rule:
    """The rule with the labels a deployment fills in (`env`) and a copy of `expr` dropped;
    PingCAP writes the severity as `level`, and its deployment tool puts the cluster's name
    where the rules say ``ENV_LABELS_ENV`` (here: the alert's `cluster` label)."""
    labels = {k: v for k, v in rule.labels.items() if k not in _DROPPED_LABELS and "{{" not in v}
    if "level" in labels and "severity" not in labels:
        labels["severity"] = labels.pop("level")
    notes = {k: v.replace(_ENV, "{{ $labels.cluster }}") for k, v in rule.annotations.items()}
    return Rule(rule.name, rule.expr, labels, notes, rule.file, rule.group)


def _paired(
    page: str,
    repo: str,
    source: str,
    sections: Mapping[str, tuple[str, str]],
    rules: Mapping[str, Rule],
    from_page: bool,
) -> list[Pair]:
    pairs: list[Pair] = []
    for title, (section, severity) in sections.items():
        name = alert_name(title)
        rule = rules.get(name_key(name))
        if rule is None and from_page:
            rule = _page_rule(name, section, severity, source)
        if rule is not None:
            pairs.append(Pair(_clean(rule), page, title, f"{repo}:{source}#{name}"))
    return pairs


def _rules_by_key(rules: Sequence[Rule]) -> dict[str, Rule]:
    out: dict[str, Rule] = {}
    for rule in rules:
        out.setdefault(name_key(rule.name), rule)
    return out


def _unpaired(rules: Iterable[Rule], pairs: Sequence[Pair]) -> tuple[Rule, ...]:
    """The rules no pair is made of: the project's alerts without a runbook section."""
    linked = {name_key(p.rule.name) for p in pairs}
    return tuple(r for r in rules if name_key(r.name) not in linked)


def _shaped(level: int, title: str) -> bool:
    return level >= 2 and identifier(title)


def tempo(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """grafana/tempo: the mixin's runbook page (``## TempoCompactionsFailing``...) and the
    compiled alerts."""
    repo, page_path = "grafana/tempo", "operations/tempo-mixin/runbook.md"
    rules_path = "operations/tempo-mixin-compiled/alerts.yaml"
    tree = trees[repo]
    text = tree.read(page_path)
    sections = _sections(text, _shaped)
    rules = parse_rules(tree.read(rules_path), rules_path)
    page = "tempo/runbook.md"
    files = {page: named_page("Tempo runbook", text, [alert_name(t) for t in sections])}
    pairs = _paired(page, repo, page_path, sections, _rules_by_key(rules), from_page=False)
    orphans = _unpaired(rules, pairs)
    return Extracted(files, tuple(pairs), orphans, {repo: (page_path, rules_path)})


_PINGCAP_PAGES = (
    "alert-rules.md",
    "dm/dm-alert-rules.md",
    "ticdc/ticdc-alert-rules.md",
    "tiflash/tiflash-alert-rules.md",
)
_ANSIBLE = "roles/prometheus/files"
_PINGCAP_RULES = (
    ("tikv/tikv", "metrics/alertmanager/tikv.rules.yml"),
    ("tikv/tikv", "metrics/alertmanager/tikv.accelerate.rules.yml"),
    ("tikv/pd", "metrics/alertmanager/pd.rules.yml"),
    *(
        ("pingcap/tidb-ansible", f"{_ANSIBLE}/{name}.rules.yml")
        for name in ("tidb", "tiflash", "binlog", "kafka", "lightning", "node", "blacker")
    ),
)


def pingcap(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """PingCAP's alert-rule pages (TiDB, PD, TiKV, TiFlash, TiCDC, DM; a section per alert,
    its heading the alert's name in a code span), paired with TiKV's and PD's rule files
    and tidb-ansible's rules for TiDB and the tools, and where no rule file has the alert
    (TiCDC, DM) with the rule the page states."""
    docs = "shczhen/docs"
    rules: list[Rule] = []
    for repo, path in _PINGCAP_RULES:
        rules += parse_rules(trees[repo].read(path), path)
    by_key = _rules_by_key(rules)

    def is_alert(level: int, title: str) -> bool:
        return level >= 3 and title.startswith("`") and title.endswith("`")

    files: dict[str, str] = {}
    pairs: list[Pair] = []
    for path in _PINGCAP_PAGES:
        meta, body = split_front_matter(trees[docs].read(path))
        sections = _sections(body, is_alert)
        page = f"pingcap/{path.replace('/', '-')}"
        title = str(meta.get("title") or path)
        files[page] = named_page(title, body, [alert_name(t) for t in sections])
        pairs += _paired(page, docs, path, sections, by_key, from_page=True)
    orphans = tuple(_clean(r) for r in _unpaired(rules, pairs))
    paths: dict[str, tuple[str, ...]] = {docs: _PINGCAP_PAGES}
    for repo, path in _PINGCAP_RULES:
        paths[repo] = (*paths.get(repo, ()), path)
    return Extracted(files, tuple(pairs), orphans, paths)


def sourcegraph(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """Sourcegraph's generated alerts reference: ``## <service>: <alert>`` sections with the
    alert's subtitle, its threshold sentence, next steps and (folded) its query. The rule is
    the page's: the silence id names it, the query is its expression."""
    repo, path = "sourcegraph/docs", "docs/self-hosted/observability/alerts.mdx"
    text = trees[repo].read(path)
    sections = _sections(text, lambda level, title: level == 2 and ": " in title)
    pairs: list[Pair] = []
    page = "sourcegraph/alerts.md"
    for title, (section, _) in sections.items():
        silence = _SILENCE.search(section)
        subtitle = _SUBTITLE.search(section)
        badge = _BADGE.search(section)
        if not (silence and subtitle and badge):
            continue
        query = _QUERY.search(section)
        expr = html.unescape(query.group(2)).replace("\\", "") if query else ""
        labels = {"severity": badge.group(1), "service_name": title.split(":", 1)[0]}
        description = html.unescape(_TAG.sub("", badge.group(2))).strip()
        annotations = {"summary": html.unescape(subtitle.group(1)), "description": description}
        rule = Rule(silence.group(1), expr, labels, annotations, path, "")
        pairs.append(Pair(rule, page, title, f"{repo}:{path}#{title}"))
    body = strip_details(text)
    files = {page: named_page("Alerts reference", body, [alert_name(t) for t in sections])}
    return Extracted(files, tuple(pairs), (), {repo: (path,)})


def harvest(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """NetApp Harvest's EMS alert runbook (``### LUN Destroyed``: an EMS event per section)
    and its example EMS and performance alert rules."""
    repo, path = "NetApp/harvest", "docs/resources/ems-alert-runbook.md"
    rule_paths = (
        "container/prometheus/ems_alert_rules.yml",
        "container/prometheus/alert_rules.yml",
    )
    tree = trees[repo]
    rules = [r for p in rule_paths for r in parse_rules(tree.read(p), p)]
    by_key = _rules_by_key(rules)
    text = tree.read(path)
    sections = _sections(text, lambda level, title: level == 3)
    page = "netapp-harvest/ems-alert-runbook.md"
    files = {page: named_page("EMS alert runbook", text, [alert_name(t) for t in sections])}
    pairs = _paired(page, repo, path, sections, by_key, from_page=False)
    orphans = _unpaired(rules, pairs)
    return Extracted(files, tuple(pairs), orphans, {repo: (path, *rule_paths)})


#: Netcracker's Qubership operators: (repository, its alerts page, its chart's rule
#: templates, the service the chart is installed as).
QUBERSHIP = (
    (
        "Netcracker/qubership-opensearch",
        "docs/public/alerts.md",
        ("operator/charts/helm/opensearch-service/templates/monitoring/prometheus-rules.yaml",),
        "opensearch",
    ),
    (
        "Netcracker/qubership-kafka",
        "docs/public/alerts.md",
        (
            "operator/charts/helm/kafka-service/templates/prometheus_rules.yaml",
            "operator/charts/helm/kafka-service/templates/kmm_prometheus_rules.yaml",
        ),
        "kafka",
    ),
    (
        "Netcracker/qubership-zookeeper",
        "docs/public/alerts.md",
        ("operator/charts/helm/zookeeper-service/templates/prometheus_rules.yaml",),
        "zookeeper",
    ),
    (
        "Netcracker/qubership-rabbitmq",
        "docs/public/troubleshooting.md",
        (
            "operator/charts/helm/rabbitmq/templates/rabbitmq_alarms.yaml",
            "operator/charts/helm/rabbitmq/templates/rabbitmq_alarms_external.yaml",
        ),
        "rabbitmq",
    ),
    (
        "Netcracker/qubership-consul",
        "docs/public/troubleshooting.md",
        ("charts/helm/consul-service/templates/prometheus-rules.yaml",),
        "consul",
    ),
    (
        "Netcracker/qubership-mistral-operator",
        "docs/public/alerts.md",
        ("deployments/charts/mistral-operator/templates/alarms_template.yaml",),
        "mistral",
    ),
)


def qubership(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """Netcracker's Qubership operators (OpenSearch, Kafka, ZooKeeper, RabbitMQ, Consul,
    Mistral): each publishes one page with a ``##`` section per alert, its ``###``
    subsections the description, causes, impact and steps, beside the chart's rule
    templates (rendered as the chart's defaults would be, rules.render_chart). The page
    keeps its own first heading as its title ("Prometheus Alerts", "Common Problems"),
    and a troubleshooting page its other sections, not named as alerts."""
    files: dict[str, str] = {}
    pairs: list[Pair] = []
    orphans: list[Rule] = []
    paths: dict[str, tuple[str, ...]] = {}
    for repo, page_path, rule_paths, service in QUBERSHIP:
        tree = trees[repo]
        rules = [
            rule
            for path in rule_paths
            for rule in parse_rules(render_chart(tree.read(path), service), path)
        ]
        by_key = _rules_by_key(rules)

        def is_alert(level: int, title: str, keys: Mapping[str, Rule] = by_key) -> bool:
            return level == 2 and (_shaped(level, title) or name_key(alert_name(title)) in keys)

        text = tree.read(page_path)
        sections = _sections(text, is_alert)
        page = f"{service}/alerts.md"
        title = next((t for level, t, _ in headings(text) if level == 1), "Alerts")
        files[page] = named_page(title, text, [alert_name(t) for t in sections])
        found = _paired(page, repo, page_path, sections, by_key, from_page=False)
        pairs += found
        orphans += _unpaired(by_key.values(), found)
        paths[repo] = (page_path, *rule_paths)
    return Extracted(files, tuple(pairs), tuple(orphans), paths)
