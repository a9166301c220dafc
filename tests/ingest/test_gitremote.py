"""A git remote as a runbook source, against a real git server on loopback (git http-backend):
clone, fetch, force-push, a subfolder, and every failure keeping the last good checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from enricher.errors import ConfigError
from enricher.settings import Settings
from ingest.configure import configure
from ingest.gitremote import GitFetchError, GitRemote, display_url
from ingest.sources import scan_root
from tests.conftest import MODELS_DIR, REPO
from tests.gitserver import AUTHOR_DATE, TEAM_TOKEN, GitHttpServer, TeamRepo, git, git_server

TOKEN = TEAM_TOKEN
RUNBOOK = "# Disk full\n\n## Mitigation\n\nDelete old WAL segments.\n"
LATER = datetime.fromisoformat("2026-06-01T08:00:00+00:00")


@pytest.fixture()
def repo(tmp_path: Path) -> TeamRepo:
    team = TeamRepo(tmp_path / "server")
    team.write("ops/runbooks/postgres/PostgresDiskFull.md", RUNBOOK)
    team.write("ops/runbooks/redis/RedisDown.md", "# Redis down\n\nRestart it.\n")
    team.write("src/app.py", "print('not a runbook')\n")
    team.commit_and_push("runbooks")
    return team


def remote(server: GitHttpServer, tmp_path: Path, **overrides: str) -> GitRemote:
    options = {"ref": "main", "subdir": "ops/runbooks", "token": TOKEN} | overrides
    return GitRemote(
        server.url(),
        ref=options["ref"],
        subdir=options["subdir"],
        token=options["token"] or None,
        folder=tmp_path / "data" / "git",
    )


def files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


class TestFetch:
    def test_clone_checks_out_the_subfolder_with_git_metadata(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        """The first update clones; the runbooks' revision is `<commit>:<blob>` and their
        staleness date the commit's."""
        source = remote(server, tmp_path)
        fetched = source.update()
        head = git(repo.work, "rev-parse", "HEAD")
        assert (fetched.commit, fetched.previous, source.commit) == (head, None, head)
        assert files(source.root) == ["postgres/PostgresDiskFull.md", "redis/RedisDown.md"]
        assert not (source.checkout / "src").exists()  # sparse: only the runbooks' folder
        doc = {d.path: d for d in scan_root(source.root).documents}["postgres/PostgresDiskFull.md"]
        blob = git(repo.work, "rev-parse", "HEAD:ops/runbooks/postgres/PostgresDiskFull.md")
        assert doc.revision == f"{head}:{blob}"
        assert doc.last_updated == AUTHOR_DATE

    def test_a_push_moves_the_checkout_and_only_changed_files_get_new_dates(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        source = remote(server, tmp_path)
        first = source.update().commit
        assert source.update().commit == first  # nothing pushed: nothing moves
        repo.write("ops/runbooks/postgres/PostgresDiskFull.md", RUNBOOK + "\nThen vacuum.\n")
        second = repo.commit_and_push("vacuum", when=LATER)
        fetched = source.update()
        assert (fetched.previous, fetched.commit, fetched.changed) == (first, second, 1)
        text = (source.root / "postgres/PostgresDiskFull.md").read_text()
        assert "Then vacuum." in text
        docs = {d.path: d for d in scan_root(source.root).documents}
        assert docs["postgres/PostgresDiskFull.md"].last_updated == LATER
        assert docs["redis/RedisDown.md"].last_updated < LATER

    def test_a_force_push_that_drops_a_runbook_removes_it_from_the_checkout(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        source = remote(server, tmp_path)
        source.update()
        git(repo.work, "reset", "-q", "--hard", "HEAD")
        repo.remove("ops/runbooks/redis/RedisDown.md")
        git(repo.work, "add", "-A")
        git(repo.work, "commit", "-q", "--amend", "-m", "rewritten", when=LATER)
        git(repo.work, "push", "-q", "--force", "origin", "HEAD:main")
        fetched = source.update()
        assert fetched.commit == git(repo.work, "rev-parse", "HEAD")
        assert files(source.root) == ["postgres/PostgresDiskFull.md"]

    def test_a_restart_serves_the_checkout_it_left(
        self, server: GitHttpServer, tmp_path: Path
    ) -> None:
        """A new process on the same data folder knows the served commit without re-cloning,
        even when its first fetch fails."""
        first = remote(server, tmp_path)
        served = first.update().commit
        server.token = "revoked"
        again = remote(server, tmp_path)
        with pytest.raises(GitFetchError):
            again.update()
        assert again.commit == served
        assert files(again.root) == ["postgres/PostgresDiskFull.md", "redis/RedisDown.md"]


class TestFailures:
    def test_a_wrong_token_says_what_to_set_and_never_shows_the_token(
        self, server: GitHttpServer, tmp_path: Path
    ) -> None:
        source = remote(server, tmp_path, token="glpat-wrong-token-9876")
        with capture_logs() as logs, pytest.raises(GitFetchError) as caught:
            source.update()
        message = str(caught.value)
        assert "authentication failed" in message and "RUNBOOK_GIT_TOKEN" in message
        assert "glpat-wrong" not in message
        assert (source.commit, source.failures, source.error) == (None, 1, message)
        assert not source.checkout.exists()  # a failed clone leaves nothing half-made
        failed = [e for e in logs if e["event"] == "git.fetch_failed"]
        assert len(failed) == 1 and "glpat-wrong" not in repr(failed)

    def test_a_token_revoked_later_keeps_the_last_good_checkout_then_recovers(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        source = remote(server, tmp_path)
        good = source.update().commit
        repo.write("ops/runbooks/redis/RedisDown.md", "# Redis down\n\nFail over.\n")
        repo.commit_and_push("fail over")
        server.token = "rotated"
        for attempt in (1, 2):
            with pytest.raises(GitFetchError, match="RUNBOOK_GIT_TOKEN"):
                source.update()
            assert (source.commit, source.failures) == (good, attempt)
        assert "Restart it." in (source.root / "redis/RedisDown.md").read_text()
        server.token = TOKEN
        with capture_logs() as logs:
            fetched = source.update()
        assert fetched.commit != good and (source.failures, source.error) == (0, None)
        assert "Fail over." in (source.root / "redis/RedisDown.md").read_text()
        assert [e["event"] for e in logs][:1] == ["git.fetch_recovered"]

    def test_a_deleted_ref_names_the_setting(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        repo.commit_and_push("release", ref="release")
        source = remote(server, tmp_path, ref="release")
        good = source.update().commit
        git(repo.work, "push", "-q", "origin", "--delete", "release")
        with pytest.raises(GitFetchError, match="RUNBOOK_GIT_REF"):
            source.update()
        assert source.commit == good
        assert files(source.root) == ["postgres/PostgresDiskFull.md", "redis/RedisDown.md"]

    def test_a_subfolder_that_is_not_there_names_the_setting_and_its_neighbours(
        self, server: GitHttpServer, tmp_path: Path
    ) -> None:
        """A misspelt RUNBOOK_GIT_SUBDIR is an error, never an empty checkout whose runbooks
        would all look deleted."""
        source = remote(server, tmp_path, subdir="ops/runbook")
        with pytest.raises(GitFetchError) as caught:
            source.update()
        assert "RUNBOOK_GIT_SUBDIR='ops/runbook' is not a folder" in str(caught.value)
        assert "folders there: runbooks" in str(caught.value)
        assert source.commit is None

    def test_a_push_that_moves_the_subfolder_keeps_the_last_good_checkout(
        self, server: GitHttpServer, repo: TeamRepo, tmp_path: Path
    ) -> None:
        source = remote(server, tmp_path)
        good = source.update().commit
        git(repo.work, "mv", "ops/runbooks", "ops/playbooks")
        repo.commit_and_push("renamed")
        with pytest.raises(GitFetchError, match="RUNBOOK_GIT_SUBDIR"):
            source.update()
        assert source.commit == good
        assert files(source.root) == ["postgres/PostgresDiskFull.md", "redis/RedisDown.md"]

    def test_an_unreachable_remote_names_the_network(self, tmp_path: Path) -> None:
        with git_server(tmp_path) as stopped:
            url = stopped.url()
        source = GitRemote(url, ref="main", subdir="", token=None, folder=tmp_path / "data")
        with pytest.raises(GitFetchError, match="unreachable"):
            source.update()

    @pytest.mark.parametrize(
        ("said", "advice"),
        [
            # A refused connection to a port with 401 or 403 in it is still the network:
            # CI once drew port 40303 and read it as a denied token.
            (
                "Failed to connect to 127.0.0.1 port 40303 after 0 ms: Couldn't connect to server",
                "unreachable",
            ),
            (
                "Failed to connect to 127.0.0.1 port 40112 after 401 ms: Couldn't connect",
                "unreachable",
            ),
            ("The requested URL returned error: 403", "RUNBOOK_GIT_TOKEN"),
            ("The requested URL returned error: 401", "RUNBOOK_GIT_TOKEN"),
        ],
    )
    def test_what_git_said_is_read_as_what_to_do(
        self, tmp_path: Path, said: str, advice: str
    ) -> None:
        source = GitRemote(
            "http://127.0.0.1:40303/runbooks.git",
            ref="main",
            subdir="",
            token=None,
            folder=tmp_path / "data",
        )
        stderr = f"fatal: unable to access 'http://127.0.0.1:40303/runbooks.git/': {said}\n"
        assert advice in source._explain("clone", stderr)


class TestSettings:
    def test_no_remote_without_a_url_and_a_clear_error_without_git(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        assert configure(Settings()).remotes == ()
        configured = Settings(
            runbook_git_url="https://github.com/acme/ops", runbook_git_dir=tmp_path
        )
        (remote,) = configure(configured).remotes
        assert remote.checkout == tmp_path / "acme-ops" and remote.source == "acme/ops"
        monkeypatch.setenv("PATH", str(tmp_path / "no-binaries"))
        with pytest.raises(ConfigError, match="git is not installed"):
            configure(configured)


class TestCredentials:
    @pytest.mark.parametrize(
        ("url", "shown"),
        [
            (
                "https://oauth2:glpat-x@gitlab.com/team/runbooks.git",
                "https://gitlab.com/team/runbooks.git",
            ),
            ("https://github.com/team/runbooks", "https://github.com/team/runbooks"),
            ("git@github.com:team/runbooks.git", "git@github.com:team/runbooks.git"),
        ],
    )
    def test_display_url_drops_user_and_password(self, url: str, shown: str) -> None:
        assert display_url(url) == shown

    def test_runbooks_link_to_their_blob_on_the_git_host(
        self, server: GitHttpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A GitHub URL, fetched from the loopback server through git's own `insteadOf`
        rewrite: each runbook's web link is its blob at RUNBOOK_GIT_REF on GitHub."""
        github = "https://github.com/acme/ops.git"
        config = tmp_path / "gitconfig"
        config.write_text(f'[url "{server.url()}"]\n\tinsteadOf = {github}\n')
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
        source = GitRemote(
            github, ref="main", subdir="ops/runbooks", token=TOKEN, folder=tmp_path / "data"
        )
        source.update()
        doc = {d.path: d for d in scan_root(source.root).documents}["redis/RedisDown.md"]
        assert doc.url == "https://github.com/acme/ops/blob/main/ops/runbooks/redis/RedisDown.md"

    def test_a_token_in_the_url_is_used_and_kept_out_of_the_clone_config(
        self, server: GitHttpServer, tmp_path: Path
    ) -> None:
        with_token = server.url().replace("http://", f"http://team:{TOKEN}@")
        source = GitRemote(with_token, ref="main", subdir="", token=None, folder=tmp_path / "data")
        source.update()
        assert source.name == server.url()
        config = (source.checkout / ".git" / "config").read_text()
        assert TOKEN not in config and server.url() in config


class TestIngestCli:
    def run_ingest(
        self, tmp_path: Path, redis_url: str, url: str, subdir: str = "ops/runbooks"
    ) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "QDRANT_PATH": str(tmp_path / "qdrant"),
            "REDIS_URL": redis_url,
            "MODELS_DIR": str(MODELS_DIR),
            "RUNBOOK_GIT_URL": url,
            "RUNBOOK_GIT_SUBDIR": subdir,
            "RUNBOOK_GIT_TOKEN": TOKEN,
            "RUNBOOK_GIT_DIR": str(tmp_path / "data" / "git"),
        }
        return subprocess.run(
            [sys.executable, "-m", "ingest"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )

    def test_python_m_ingest_fetches_and_indexes_the_remote(
        self, server: GitHttpServer, tmp_path: Path, redis_url: str
    ) -> None:
        """Without --root, RUNBOOK_GIT_URL is the source; a failed fetch exits 1 with the
        reason, after indexing the last good checkout (nothing changed: all skipped)."""
        done = self.run_ingest(tmp_path, redis_url, server.url())
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("indexed 2 document(s)")
        server.token = "revoked"
        again = self.run_ingest(tmp_path, redis_url, server.url())
        assert again.returncode == 1
        assert "RUNBOOK_GIT_TOKEN" in again.stderr and TOKEN not in again.stderr
        assert "skipped 2 unchanged" in again.stdout

    def test_a_misspelt_subfolder_exits_1_with_the_reason(
        self, server: GitHttpServer, tmp_path: Path, redis_url: str
    ) -> None:
        done = self.run_ingest(tmp_path, redis_url, server.url(), subdir="ops/runbok")
        assert done.returncode == 1 and done.stdout == ""
        assert "RUNBOOK_GIT_SUBDIR='ops/runbok' is not a folder" in done.stderr
        assert "ingest.nothing_indexed" in done.stderr
