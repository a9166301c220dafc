"""Document identity: every source has a name and a document is `<name>:<path>`, so two
folders of one name, or a git checkout's folder and a local folder, never share a document;
an index built before sources had names moves to them without embedding anything again."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from enricher.errors import ConfigError
from enricher.index import schema
from enricher.index.embedding import Embedder
from enricher.index.engine import EVERYTHING, Index
from enricher.settings import Settings
from ingest.configure import configure, git_entry
from ingest.naming import Root, folder_candidates, name_roots
from ingest.sync import Syncer, SyncOptions, SyncReport
from tests.gitserver import TEAM_TOKEN, GitHttpServer, TeamRepo, git_server
from tests.ingest.test_sync import DISK_FULL, PG_LAG, make_syncer, run_cli, write

DISK = "postgres/PostgresDiskFull.md"
LAG = "postgres/PostgresReplicationLag.md"


def pages(index: Index) -> dict[str, str]:
    """Page doc id -> its source, over every chunk."""
    points, _ = index.scroll(EVERYTHING, 1000, fields=[schema.F_PAGE_ID, schema.F_SOURCE])
    return {str(p.payload[schema.F_PAGE_ID]): str(p.payload[schema.F_SOURCE]) for p in points}


def run(syncer: Syncer, roots: list[Path | Root]) -> SyncReport:
    options = SyncOptions(
        roots=roots, chunk_max_chars=Settings().chunk_max_chars, chunk_min_chars=50,
        use_git=False,
    )
    return syncer.run(options)


@pytest.fixture()
def two(tmp_path: Path) -> tuple[Path, Path]:
    """Two folders both called `runbooks`, holding the same path with different text."""
    a, b = tmp_path / "a" / "runbooks", tmp_path / "b" / "runbooks"
    write(a, DISK, DISK_FULL)
    write(b, DISK, DISK_FULL.replace("90 percent", "95 percent"))
    return a, b


class TestNames:
    def test_folders_of_one_name_take_their_parents_and_given_names_win(
        self, tmp_path: Path
    ) -> None:
        a, b, c = tmp_path / "a" / "runbooks", tmp_path / "b" / "runbooks", tmp_path / "c" / "x"
        named = name_roots([a, b, c])
        assert [r.name for r in named] == ["a/runbooks", "b/runbooks", "x"]
        assert {r.legacy for r in named[:2]} == {"runbooks"}
        given = name_roots([Root(a, "team-a", "runbooks"), b])
        assert [r.name for r in given] == ["team-a", "runbooks"]
        assert folder_candidates(a)[:2] == ("runbooks", "a/runbooks")

    def test_two_sources_given_one_name_is_a_config_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match=r"both named 'ops'.*NAME="):
            configure(Settings(runbook_roots=(f"ops={tmp_path}/a", f"ops={tmp_path}/b")))

    @pytest.mark.parametrize(
        ("entry", "url", "ref", "subdir", "name"),
        [
            ("https://github.com/acme/ops", "https://github.com/acme/ops", "main", "", None),
            ("https://github.com/acme/ops.git//runbooks?ref=v2",
             "https://github.com/acme/ops.git", "v2", "runbooks", None),
            ("team=git@gitlab.com:acme/db.git//docs/rb", "git@gitlab.com:acme/db.git", "main",
             "docs/rb", "team"),
        ],
    )
    def test_a_git_entry_carries_its_name_subfolder_and_ref(
        self, entry: str, url: str, ref: str, subdir: str, name: str | None
    ) -> None:
        got = git_entry(entry, ref="main", subdir="")
        assert (got.url, got.ref, got.subdir, got.name) == (url, ref, subdir, name)

    def test_a_git_remote_is_named_by_its_repository(self, tmp_path: Path) -> None:
        settings = Settings(
            runbook_roots=(str(tmp_path / "runbooks"),), runbook_git_dir=tmp_path / "git",
            runbook_git_url="https://github.com/acme/ops//runbooks,https://gitlab.com/acme/ops",
        )
        assert configure(settings).names == ["runbooks", "acme/ops/runbooks",
                                             "gitlab.com/acme/ops"]


class TestTwoFoldersOfOneName:
    def test_the_cli_indexes_two_documents_stable_over_three_runs(
        self, two: tuple[Path, Path], settings: Settings
    ) -> None:
        """`python -m ingest --root /a/runbooks --root /b/runbooks`: both copies are indexed
        once, and the next runs find them unchanged."""
        outputs = [run_cli(settings, *two) for _ in range(3)]
        assert all(o.returncode == 0 for o in outputs), outputs[0].stderr
        assert outputs[0].stdout.startswith("indexed 2 document(s)")
        for later in outputs[1:]:
            assert later.stdout.startswith("indexed 0 document(s)"), later.stdout
            assert "skipped 2 unchanged" in later.stdout and "embedded 0 chunk" in later.stdout

    def test_an_index_built_under_the_folder_name_moves_without_embedding(
        self, two: tuple[Path, Path], index: Index, settings: Settings, embedder: Embedder
    ) -> None:
        """A's documents were indexed as `runbooks:...` (its folder's name, as before sources
        had names). Adding B renames A to `a/runbooks`: A's chunks are copied, not embedded;
        only B's are."""
        a, b = two
        write(a, LAG, PG_LAG)
        syncer = make_syncer(index, settings, embedder)
        first = run(syncer, [a])
        assert set(pages(index)) == {f"runbooks:{DISK}", f"runbooks:{LAG}"}
        held = index.count()

        moved = run(syncer, [a, b])
        assert moved.migrated == 2 and moved.indexed_docs == 1
        b_chunks = moved.indexed_chunks
        assert moved.embedded == b_chunks < first.embedded  # B's chunks only
        assert pages(index) == {
            f"a/runbooks:{DISK}": "a/runbooks",
            f"a/runbooks:{LAG}": "a/runbooks",
            f"b/runbooks:{DISK}": "b/runbooks",
        }
        assert index.count() == held + b_chunks
        again = run(syncer, [a, b])
        assert (again.indexed_docs, again.skipped, again.embedded) == (0, 3, 0)


@pytest.fixture()
def repo(tmp_path: Path) -> TeamRepo:
    team = TeamRepo(tmp_path / "server", name="ops")
    team.write(f"runbooks/{DISK}", DISK_FULL.replace("90 percent", "80 percent"))
    team.commit_and_push("runbooks")
    return team


class TestGitBesideAFolder:
    def test_a_checkout_of_runbooks_and_a_local_runbooks_folder_keep_their_own_documents(
        self, tmp_path: Path, repo: TeamRepo, settings: Settings, index: Index,
        embedder: Embedder,
    ) -> None:
        """RUNBOOK_GIT_SUBDIR=runbooks beside a folder `runbooks` holding the same path: two
        documents, stable over three syncs, and the git one is shown by its remote's name."""
        local = tmp_path / "golden" / "runbooks"
        write(local, DISK, DISK_FULL)
        with git_server(repo.bare.parent, token=TEAM_TOKEN) as server:
            sources = configure(configured(settings, server, local))
            syncer = make_syncer(index, settings, embedder)
            reports = []
            for _ in range(3):
                for remote in sources.remotes:
                    remote.update()
                reports.append(syncer.run(SyncOptions.from_settings(settings, sources.roots)))
        assert reports[0].indexed_docs == 2
        assert [(r.indexed_docs, r.skipped) for r in reports[1:]] == [(0, 2), (0, 2)]
        assert pages(index) == {f"runbooks:{DISK}": "runbooks", f"ops:{DISK}": "ops"}


def configured(settings: Settings, server: GitHttpServer, local: Path) -> Settings:
    return settings.model_copy(
        update={
            "runbook_roots": (str(local),),
            "runbook_git_url": server.url("ops"),
            "runbook_git_subdir": "runbooks",
            "runbook_git_token": SecretStr(TEAM_TOKEN),
            "runbook_git_dir": local.parent.parent / "data" / "git",
        }
    )


class TestSeveralRepositories:
    def test_each_entry_with_its_own_subfolder_and_ref_is_a_source(
        self, tmp_path: Path, repo: TeamRepo, settings: Settings, index: Index,
        embedder: Embedder,
    ) -> None:
        """RUNBOOK_GIT_URL=<ops>//runbooks,<db>?ref=release: both are fetched and indexed,
        each under its repository's name."""
        db = TeamRepo(tmp_path / "server", name="db")
        db.write(LAG, PG_LAG)
        db.commit_and_push("db runbooks", ref="release")
        with git_server(repo.bare.parent, token=TEAM_TOKEN) as server:
            configured_ = settings.model_copy(update={
                "runbook_git_url": f"{server.url('ops')}//runbooks,{server.url('db')}?ref=release",
                "runbook_git_token": SecretStr(TEAM_TOKEN),
                "runbook_git_dir": tmp_path / "git",
            })
            sources = configure(configured_)
            for remote in sources.remotes:
                remote.update()
            report = make_syncer(index, settings, embedder).run(
                SyncOptions.from_settings(settings, sources.roots)
            )
        assert report.errors == [] and report.indexed_docs == 2
        assert pages(index) == {f"ops:{DISK}": "ops", f"db:{LAG}": "db"}


class TestAllowPrune:
    def test_the_cli_holds_a_shrink_back_until_allow_prune(
        self, tmp_path: Path, settings: Settings
    ) -> None:
        """Three of four runbooks gone at once: kept, exit 1 with the summary saying so;
        `--allow-prune` confirms it."""
        root = tmp_path / "runbooks"
        names = ["Disk", "Lag", "Connections", "Down"]
        for name in names:
            write(root, f"postgres/Postgres{name}.md", DISK_FULL.replace("Postgres disk", name))
        assert run_cli(settings, root).returncode == 0
        for name in names[1:]:
            (root / f"postgres/Postgres{name}.md").unlink()
        held = run_cli(settings, root)
        assert held.returncode == 1
        assert "kept 3 of 4 document(s) of runbooks" in held.stdout
        assert "ingest.prune_held" in held.stderr and "--allow-prune" in held.stderr
        confirmed = run_cli(settings, root, extra=("--allow-prune",))
        assert confirmed.returncode == 0 and "removed 3 deleted document(s)" in confirmed.stdout
