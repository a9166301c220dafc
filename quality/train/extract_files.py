"""Projects that keep one runbook file per alert (or per service) beside their rules.

Each extractor reads one project's tree at its pinned commit and returns its corpus as the
project publishes it: the runbook files under `<service>/`, the (rule, runbook) pairs, and
the rules that have no runbook. Linking is the project's own: by file name, or by the
rule's runbook annotation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from enricher.audit.rules import Rule
from enricher.search.names import name_key
from ingest.frontmatter import split_front_matter
from quality.train.gitread import Tree
from quality.train.model import Extracted, Pair
from quality.train.pages import strip_details
from quality.train.rules import parse_rules

__all__ = ["gitlab", "runbook_folder", "srerun"]

_SHORTCODE = re.compile(r"^\s*\{\{[%<].*[%>]\}\}\s*$", re.MULTILINE)
_PREAMBLE = re.compile(r"^Here is a runbook for the .*\n", re.MULTILINE)
_BLANKS = re.compile(r"\n{3,}")
#: GitLab alerts about these systems are kept out: they stand near the judged corpora.
_NEAR_JUDGED = re.compile(r"thanos|cortex|loki|mimir|etcd|ceph", re.IGNORECASE)
#: GitLab's rule files that vendor the kube-prometheus and prometheus-operator rules.
_VENDORED = re.compile(r"kubernetes|prometheus-operator")


def _by_key(paths: Sequence[str]) -> dict[str, str]:
    """name_key of each markdown file's stem -> its path (the first, in sorted order)."""
    out: dict[str, str] = {}
    for path in paths:
        stem = PurePosixPath(path).stem
        if path.endswith(".md") and not stem.startswith("_"):
            out.setdefault(name_key(stem), path)
    return out


def _link(
    rules: Sequence[Rule],
    runbooks: Mapping[str, str],
    files: dict[str, str],
    texts: Mapping[str, str],
    repo: str,
) -> tuple[list[Pair], list[Rule]]:
    """Pair each rule with the runbook its name names (first rule of a name wins)."""
    pairs: list[Pair] = []
    orphans: list[Rule] = []
    seen: set[str] = set()
    for rule in rules:
        key = name_key(rule.name)
        if key in seen:
            continue
        seen.add(key)
        source = runbooks.get(key)
        if source is None:
            orphans.append(rule)
            continue
        corpus_path = texts[source]
        pairs.append(Pair(rule, corpus_path, None, f"{repo}:{source}"))
    return pairs, orphans


def srerun(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """srerun/prometheus-alerts: the awesome-prometheus-alerts rules, one runbook file per
    alert under ``content/runbooks/<rule file stem>/``. The Hugo scaffolding (front matter,
    the folded rule, shortcodes, the generator's preamble line) is dropped."""
    repo = "srerun/prometheus-alerts"
    tree = trees[repo]
    files: dict[str, str] = {}
    pairs: list[Pair] = []
    orphans: list[Rule] = []
    read: list[str] = []
    for folder in select:
        for rule_file in tree.files(f"rules/{folder}"):
            stem = PurePosixPath(rule_file).stem
            book_paths = tree.files(f"content/runbooks/{stem}")
            runbooks = _by_key(book_paths)
            read += [rule_file, *runbooks.values()]
            corpus_paths: dict[str, str] = {}
            for source in runbooks.values():
                _, body = split_front_matter(tree.read(source))
                text = _PREAMBLE.sub("", _SHORTCODE.sub("", strip_details(body)))
                corpus_paths[source] = f"{stem}/{PurePosixPath(source).name}"
                files[corpus_paths[source]] = _BLANKS.sub("\n\n", text).strip() + "\n"
            found, missing = _link(
                parse_rules(tree.read(rule_file), rule_file), runbooks, files, corpus_paths, repo
            )
            pairs += found
            orphans += missing
    return Extracted(files, tuple(pairs), tuple(orphans), {repo: tuple(sorted(read))})


def runbook_folder(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """A rules folder and a folder of ``<AlertName>.md`` runbooks in one repository
    (`select`: repository, rules folder, runbooks folder, service name), such as
    cloudnative-pg's chart (rules written as Helm templates) or Promscale's mixin."""
    repo, rules_dir, books_dir, service = select
    tree = trees[repo]
    rule_files = [p for p in tree.files(rules_dir) if p.endswith((".yaml", ".yml"))]
    runbooks = _by_key(tree.files(books_dir))
    corpus_paths = {p: f"{service}/{PurePosixPath(p).name}" for p in runbooks.values()}
    files = {corpus_paths[p]: tree.read(p) for p in runbooks.values()}
    rules = [rule for path in rule_files for rule in parse_rules(tree.read(path), path)]
    pairs, orphans = _link(rules, runbooks, files, corpus_paths, repo)
    read = tuple(sorted([*rule_files, *runbooks.values()]))
    return Extracted(files, tuple(pairs), tuple(orphans), {repo: read})


def gitlab(trees: Mapping[str, Tree], select: Sequence[str]) -> Extracted:
    """GitLab.com's runbooks (a mirror of gitlab-com/runbooks): rules under the folders in
    `select` name their runbook in a `runbook` annotation (``docs/<service>/<page>.md``),
    often one page for many alerts (the generated SLO alerts of ``thanos-rules/`` all point
    at their service's README). Templated links, the alerts near the judged corpora and
    the rule files that vendor kube-prometheus are left out."""
    repo = "mattrussi/gitlab-com-runbooks"
    tree = trees[repo]
    rule_files = [
        p
        for folder in select
        for p in tree.files(folder)
        if p.endswith((".yml", ".yaml")) and not _VENDORED.search(PurePosixPath(p).name)
    ]
    rules = [rule for path in rule_files for rule in parse_rules(tree.read(path), path)]
    files: dict[str, str] = {}
    pairs: list[Pair] = []
    orphans: list[Rule] = []
    seen: set[str] = set()
    for rule in rules:
        key = name_key(rule.name)
        if key in seen or _NEAR_JUDGED.search(rule.name):
            continue
        seen.add(key)
        link = (rule.annotations.get("runbook") or "").split("#", 1)[0].strip()
        if "{{" in link or _NEAR_JUDGED.search(link):
            continue
        if not link.startswith("docs/") or not link.endswith(".md") or not tree.exists(link):
            orphans.append(rule)
            continue
        corpus_path = link.removeprefix("docs/")
        if corpus_path not in files:
            files[corpus_path] = tree.read(link)
        pairs.append(Pair(rule, corpus_path, None, f"{repo}:{link}"))
    read = tuple(sorted({*rule_files, *(f"docs/{p}" for p in files)}))
    return Extracted(files, tuple(pairs), tuple(orphans), {repo: read})
