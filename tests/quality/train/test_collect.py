"""The training collector on a tiny repository made here (no third-party text)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from enricher.search.names import name_key
from quality.train.collect import build, main
from quality.train.gitread import MirrorMissing, Tree
from quality.train.sources import SOURCES, CorpusSource, Forbidden, Pin, check_allowed

REPO = "cloudnative-pg/charts"
RULE = """{{- $alert := "%s" -}}
alert: {{ $alert }}
annotations:
  summary: %s
  description: The {{ .cluster }} database answers slowly.
expr: |
  pg_up{namespace="{{ .namespace }}"} == 0
for: 5m
labels:
  severity: critical
"""
BOOK = (
    "# {name}\n\n## Meaning\n\nThe {name} alert fires when {what}, and the service that"
    " depends on it starts to slow down for every user.\n\n## Fix\n\nRestart it, then"
    " watch the dashboard for ten minutes.\n"
)
NAMES = {
    "ToyDatabaseDown": "the database is down",
    "ToyReplicaLagging": "a replica lags",
    "KubePodCrashLooping": "a pod crashes",
    "ToyDiskFilling": "the disk fills",
}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def mirrors(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    for name, what in NAMES.items():
        rule = work / "charts/cluster/prometheus_rules" / f"{name.lower()}.yaml"
        rule.parent.mkdir(parents=True, exist_ok=True)
        rule.write_text(RULE % (name, f"{name} fired"))
        book = work / "charts/cluster/docs/runbooks" / f"{name}.md"
        book.parent.mkdir(parents=True, exist_ok=True)
        book.write_text(BOOK.format(name=name, what=what))
    (work / "LICENSE").write_text("Apache License\nVersion 2.0, January 2004\n")
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    pinned = _git(work, "rev-parse", "HEAD")
    (work / "charts/cluster/docs/runbooks/ToyDiskFilling.md").write_text("changed later\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    root = tmp_path / "mirrors"
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(root / "cloudnative-pg+charts/repo"))
    return root, pinned


def _source(commit: str) -> CorpusSource:
    select = (REPO, "charts/cluster/prometheus_rules", "charts/cluster/docs/runbooks", "toy")
    return CorpusSource(
        "toy", "databases", "runbook_folder", (Pin(REPO, commit, "LICENSE"),), select
    )


class TestCollect:
    def test_same_bytes_twice(self, mirrors: tuple[Path, str]) -> None:
        """Two builds from the same pinned commit give the same files, cases and pairs."""
        root, commit = mirrors
        trees = {REPO: Tree.open(root, REPO, commit)}
        assert build(_source(commit), trees, frozenset()) == build(
            _source(commit), trees, frozenset()
        )

    def test_reads_the_pinned_commit(self, mirrors: tuple[Path, str]) -> None:
        """A runbook changed after the pin is read as it was at the pin."""
        root, commit = mirrors
        files, *_ = build(_source(commit), {REPO: Tree.open(root, REPO, commit)}, frozenset())
        assert all("changed later" not in text for text in files.values())

    def test_released_names_are_dropped(self, mirrors: tuple[Path, str]) -> None:
        """An alert named like a released runbook leaves no pair, case or runbook behind."""
        root, commit = mirrors
        trees = {REPO: Tree.open(root, REPO, commit)}
        files, cases, pairs, entry = build(
            _source(commit), trees, frozenset({name_key("KubePodCrashLooping")})
        )
        assert "toy/KubePodCrashLooping.md" not in files
        assert all(p["alert"] != "KubePodCrashLooping" for p in pairs)
        assert "KubePodCrashLooping" not in json.dumps(cases)
        assert entry["dropped_as_released"] == 1
        assert entry["sources"][0]["license"] == "Apache-2.0"

    def test_cases_name_their_runbooks(self, mirrors: tuple[Path, str]) -> None:
        """Every positive case expects a runbook that is in the corpus; near misses none."""
        root, commit = mirrors
        files, cases, _, _ = build(
            _source(commit), {REPO: Tree.open(root, REPO, commit)}, frozenset()
        )
        kinds = {c["kind"] for c in cases}
        assert {"exact_name", "paraphrase", "paraphrase_rewritten", "noise"} <= kinds
        for case in cases:
            if case["kind"] in ("near_miss", "noise"):
                assert case["expected_doc"] is None
            else:
                assert case["expected_doc"] in files

    def test_missing_commit_says_fetch(self, mirrors: tuple[Path, str]) -> None:
        root, _ = mirrors
        with pytest.raises(MirrorMissing, match="fetch"):
            Tree.open(root, REPO, "0" * 40)

    def test_cli_writes_the_corpus(
        self, mirrors: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`--only` builds one pinned corpus from the mirrors into --out."""
        root, commit = mirrors
        released = tmp_path / "released"
        released.mkdir()
        monkeypatch.setattr("quality.train.collect.SOURCES", (_source(commit),))
        out = tmp_path / "out"
        assert (
            main(
                [
                    "--mirrors",
                    str(root),
                    "--released",
                    str(released),
                    "--out",
                    str(out),
                    "--only",
                    "toy",
                ]
            )
            == 0
        )
        assert (out / "toy/cases.jsonl").read_text().count("\n") > 4
        assert (out / "toy/corpus/toy/ToyDatabaseDown.md").exists()
        assert not (out / "READY").exists(), "--only builds part of the collection"

    def test_a_whole_collection_is_marked_ready_with_its_manifest(
        self, mirrors: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without --only the manifest is written and READY holds its hash: quality.transfer
        reads the collection only then."""
        root, commit = mirrors
        released = tmp_path / "released"
        released.mkdir()
        monkeypatch.setattr("quality.train.collect.SOURCES", (_source(commit),))
        out, manifest = tmp_path / "out", tmp_path / "manifest.json"
        argv = ["--mirrors", str(root), "--released", str(released), "--out", str(out),
                "--manifest", str(manifest)]
        assert main(argv) == 0
        written = json.loads(manifest.read_text())
        assert [c["name"] for c in written["corpora"]] == ["toy"]
        assert (out / "READY").read_text() == written["sha256"] + "\n"


class TestSources:
    @pytest.mark.parametrize(
        "repo",
        [
            "prometheus-operator/runbooks",
            "openshift/runbooks",
            "thanos-io/thanos",
            "grafana/mimir",
            "etcd-io/etcd",
            "prometheus/node_exporter",
            "rook/rook",
        ],
    )
    def test_forbidden_are_refused(self, repo: str) -> None:
        with pytest.raises(Forbidden):
            check_allowed(repo)

    def test_every_pin_is_allowed(self) -> None:
        for source in SOURCES:
            for pin in source.pins:
                check_allowed(pin.repo)
                assert len(pin.commit) == 40
