"""Scanning a runbook folder: layout, front matter, git metadata, errors and doc_hash."""

from __future__ import annotations

import hashlib
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.document import Document, SourceError
from ingest.sources import Scan, scan_root
from tests.gitserver import AUTHOR_DATE as FIRST_COMMIT
from tests.gitserver import git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SECOND_COMMIT = datetime(2024, 6, 15, 17, 45, 10, tzinfo=UTC)
MTIME = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

RUNBOOK = "# High error rate\n\n## Mitigation\nRoll back the last deploy.\n"


def write(root: Path, rel: str, content: str | bytes, *, mtime: datetime | None = MTIME) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def by_path(scan: Scan) -> dict[str, Document]:
    return {doc.path: doc for doc in scan.documents}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class TestLayout:
    def test_folder_layout_gives_service_and_alert_name(self, tmp_path: Path) -> None:
        """<root>/<service>/<alert>.md yields that service, alert name, source and ids."""
        root = tmp_path / "runbooks"
        write(root, "checkout/HighErrorRate.md", RUNBOOK)
        doc = scan_root(root, use_git=False).documents[0]
        assert doc.doc_id == "runbooks:checkout/HighErrorRate.md"
        assert (doc.source, doc.path) == ("runbooks", "checkout/HighErrorRate.md")
        assert (doc.services, doc.alert_names) == (("checkout",), ("HighErrorRate",))
        assert (doc.title, doc.owner, doc.tags) == ("High error rate", None, ())
        assert doc.body == RUNBOOK

    @pytest.mark.parametrize(
        ("rel", "services", "alert_names"),
        [
            ("TargetDown.md", (), ("TargetDown",)),
            ("payments/stripe/StripeWebhookFailing.md", ("payments",), ("StripeWebhookFailing",)),
        ],
    )
    def test_root_level_and_nested_files(
        self, tmp_path: Path, rel: str, services: tuple[str, ...], alert_names: tuple[str, ...]
    ) -> None:
        """A file at the root has no service; deeper files take the first folder as service."""
        write(tmp_path, rel, RUNBOOK)
        doc = scan_root(tmp_path, use_git=False).documents[0]
        assert (doc.services, doc.alert_names) == (services, alert_names)

    @pytest.mark.parametrize(
        ("body", "title"),
        [
            ("Intro.\n\n# Disk almost full\n\nGrow it.\n", "Disk almost full"),
            ("```\n# not a title\n```\n\n## Steps\nGrow it.\n", "Node Filesystem Space Filling Up"),
        ],
    )
    def test_title_falls_back_to_h1_then_alert_name(
        self, tmp_path: Path, body: str, title: str
    ) -> None:
        """Without a front matter title: the first H1, else the alert name as words."""
        write(tmp_path, "node/NodeFilesystemSpaceFillingUp.md", body)
        assert scan_root(tmp_path, use_git=False).documents[0].title == title

    def test_only_markdown_outside_hidden_folders_in_path_order(self, tmp_path: Path) -> None:
        """Non-markdown files and hidden files and folders are skipped; output is sorted."""
        for rel in ["b/Z.md", "a/Y.md", "a/X.md", "Top.md", ".github/PULL.md", "a/.draft.md"]:
            write(tmp_path, rel, RUNBOOK)
        write(tmp_path, "a/notes.txt", "not markdown")
        write(tmp_path, ".git/HEAD.md", RUNBOOK)
        scan = scan_root(tmp_path, use_git=False)
        assert [d.path for d in scan.documents] == ["Top.md", "a/X.md", "a/Y.md", "b/Z.md"]
        assert scan.errors == ()

    def test_source_is_the_resolved_root_name(self, tmp_path: Path) -> None:
        """A relative or dotted root is named after the folder it resolves to."""
        root = tmp_path / "team-runbooks"
        write(root, "svc/A.md", RUNBOOK)
        doc = scan_root(root / "svc" / "..", use_git=False).documents[0]
        assert (doc.source, doc.doc_id) == ("team-runbooks", "team-runbooks:svc/A.md")


class TestFrontMatterWins:
    def test_front_matter_overrides_path_and_body(self, tmp_path: Path) -> None:
        """Title, alert names, services, owner, tags and last_reviewed come from front matter."""
        text = (
            "---\n"
            "title: Replica lag\n"
            "alert_names: [PostgresReplicationLag, PostgresReplicaBehind]\n"
            "services: pg-main\n"
            "owner: team-db\n"
            "last_reviewed: 2024-05-01\n"
            "tags: [database]\n"
            "---\n"
            "# Something else\n\nBody.\n"
        )
        write(tmp_path, "postgres/Lag.md", text)
        doc = scan_root(tmp_path, use_git=False).documents[0]
        assert doc.title == "Replica lag"
        assert doc.alert_names == ("PostgresReplicationLag", "PostgresReplicaBehind")
        assert doc.services == ("pg-main",)
        assert (doc.owner, doc.tags) == ("team-db", ("database",))
        assert doc.last_updated == datetime(2024, 5, 1, tzinfo=UTC)
        assert doc.body == "# Something else\n\nBody.\n"

    def test_absent_or_empty_keys_fall_back_to_the_path(self, tmp_path: Path) -> None:
        """Keys the front matter leaves out or leaves empty keep the path's values."""
        write(tmp_path, "checkout/HighErrorRate.md", "---\nowner: shop\nservices: []\n---\nBody\n")
        doc = scan_root(tmp_path, use_git=False).documents[0]
        assert (doc.alert_names, doc.services, doc.owner) == (
            ("HighErrorRate",),
            ("checkout",),
            "shop",
        )


@needs_git
class TestGitMetadata:
    @pytest.fixture(params=["runbooks", ""], ids=["root-is-subfolder", "root-is-repo"])
    def repo(self, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
        """Two commits: A.md only in the first, B.md changed in the second.

        When the root is a subfolder, the second commit also changes a decoy
        ``svc/A.md`` at the top of the repository, which must not be mistaken
        for the root's ``svc/A.md``.
        """
        repo = tmp_path / "repo"
        root = repo / request.param if request.param else repo
        repo.mkdir()
        git(repo, "init", "-q")
        write(root, "svc/A.md", RUNBOOK)
        write(root, "svc/B.md", RUNBOOK)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first", when=FIRST_COMMIT)
        write(root, "svc/B.md", RUNBOOK + "\nMore steps.\n")
        if root != repo:
            write(repo, "svc/A.md", "# Decoy outside the root\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "second", when=SECOND_COMMIT)
        return repo, root

    def rel_in_repo(self, repo: Path, root: Path, rel: str) -> str:
        return (root / rel).relative_to(repo).as_posix()

    def test_committed_files_get_commit_date_and_blob_sha(self, repo: tuple[Path, Path]) -> None:
        """last_updated is the file's last commit date and revision that commit and the
        file's blob in HEAD (`<commit>:<blob>`)."""
        repo_dir, root = repo
        docs = by_path(scan_root(root))
        for rel, when in [("svc/A.md", FIRST_COMMIT), ("svc/B.md", SECOND_COMMIT)]:
            in_repo = self.rel_in_repo(repo_dir, root, rel)
            blob = git(repo_dir, "rev-parse", f"HEAD:{in_repo}")
            commit = git(repo_dir, "log", "-1", "--format=%H", "--", in_repo)
            assert docs[rel].last_updated == when
            assert docs[rel].revision == f"{commit}:{blob}"

    def test_modified_file_gets_content_hash_and_mtime(self, repo: tuple[Path, Path]) -> None:
        """A file edited since its commit is described by its content, not by git."""
        _, root = repo
        path = write(root, "svc/A.md", RUNBOOK + "\nLocal edit.\n")
        doc = by_path(scan_root(root))["svc/A.md"]
        assert (doc.revision, doc.last_updated) == (sha256_of(path), MTIME)

    def test_staged_but_uncommitted_file_is_not_a_commit(self, repo: tuple[Path, Path]) -> None:
        """Content that is only in the index has no commit date, so it counts as modified."""
        repo_dir, root = repo
        path = write(root, "svc/A.md", RUNBOOK + "\nStaged edit.\n")
        git(repo_dir, "add", "-A")
        doc = by_path(scan_root(root))["svc/A.md"]
        assert (doc.revision, doc.last_updated) == (sha256_of(path), MTIME)

    def test_untracked_file_gets_content_hash_and_mtime(self, repo: tuple[Path, Path]) -> None:
        """A file git does not know is described by its content and mtime."""
        _, root = repo
        path = write(root, "svc/New.md", RUNBOOK)
        doc = by_path(scan_root(root))["svc/New.md"]
        assert (doc.revision, doc.last_updated) == (sha256_of(path), MTIME)

    def test_last_reviewed_beats_commit_date(self, repo: tuple[Path, Path]) -> None:
        """Front matter last_reviewed wins over git; revision still follows git."""
        repo_dir, root = repo
        write(root, "svc/C.md", "---\nlast_reviewed: 2023-12-24\n---\nBody\n")
        git(repo_dir, "add", "-A")
        git(repo_dir, "commit", "-q", "-m", "third", when=SECOND_COMMIT)
        doc = by_path(scan_root(root))["svc/C.md"]
        assert doc.last_updated == datetime(2023, 12, 24, tzinfo=UTC)
        blob = git(repo_dir, "rev-parse", f"HEAD:{self.rel_in_repo(repo_dir, root, 'svc/C.md')}")
        assert doc.revision == f"{git(repo_dir, 'rev-parse', 'HEAD')}:{blob}"

    def test_use_git_false_ignores_the_repository(self, repo: tuple[Path, Path]) -> None:
        """With use_git=False every file gets its content hash and mtime."""
        _, root = repo
        for doc in scan_root(root, use_git=False).documents:
            assert doc.revision == sha256_of(root / doc.path)
            assert doc.last_updated == MTIME

    def test_only_the_root_subtree_is_scanned(self, repo: tuple[Path, Path]) -> None:
        """A root inside a larger repository reads only its own files, without errors."""
        _, root = repo
        scan = scan_root(root)
        assert [d.path for d in scan.documents] == ["svc/A.md", "svc/B.md"]
        assert scan.errors == ()

    def test_repository_without_commits_falls_back(self, tmp_path: Path) -> None:
        """A fresh repository with no HEAD yet gives plain metadata, no error."""
        git(tmp_path, "init", "-q")
        path = write(tmp_path, "svc/A.md", RUNBOOK)
        scan = scan_root(tmp_path)
        assert scan.errors == ()
        assert scan.documents[0].revision == sha256_of(path)


class TestWithoutGit:
    def test_folder_outside_any_repository(self, tmp_path: Path) -> None:
        """Outside a repository, revision is the sha256 and last_updated the mtime, silently."""
        path = write(tmp_path, "svc/A.md", RUNBOOK)
        scan = scan_root(tmp_path)
        assert scan.errors == ()
        assert (scan.documents[0].revision, scan.documents[0].last_updated) == (
            sha256_of(path),
            MTIME,
        )

    @needs_git
    def test_git_not_installed(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A git repository scanned on a machine without git falls back quietly."""
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        path = write(repo, "svc/A.md", RUNBOOK)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first")
        monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
        scan = scan_root(repo)
        assert scan.errors == ()
        assert (scan.documents[0].revision, scan.documents[0].last_updated) == (
            sha256_of(path),
            MTIME,
        )


class TestErrors:
    @pytest.mark.parametrize(
        ("content", "reason"),
        [
            (b"# Title\x00\x01\x02", "binary file (contains NUL bytes), expected markdown"),
            ("# Caf\u00e9\n".encode("latin-1"), "not UTF-8 text (invalid byte at offset 5)"),
            (b"", "empty file"),
            (b"  \n\t\n", "empty file"),
            (b"---\ntitle: [broken\n---\nBody\n", "front matter is not valid YAML (line 3"),
            (b"---\n- a list\n---\nBody\n", "front matter must be a YAML mapping"),
            (b"---\ntags: {a: 1}\n---\nBody\n", "invalid front matter: tags: Input should be"),
            (b"---\ntitle: Only meta\n---\n\n", "no markdown after the front matter"),
        ],
    )
    def test_bad_file_is_reported_and_others_still_scanned(
        self, tmp_path: Path, content: bytes, reason: str
    ) -> None:
        """A file that cannot be used becomes a SourceError; the good files still come through."""
        write(tmp_path, "svc/A.md", RUNBOOK)
        write(tmp_path, "svc/Bad.md", content)
        write(tmp_path, "svc/C.md", RUNBOOK)
        scan = scan_root(tmp_path, use_git=False)
        assert [d.path for d in scan.documents] == ["svc/A.md", "svc/C.md"]
        assert len(scan.errors) == 1
        assert scan.errors[0].path == "svc/Bad.md"
        assert scan.errors[0].reason.startswith(reason)

    def test_unreadable_file_is_reported(self, tmp_path: Path) -> None:
        """A markdown entry that cannot be opened (a dangling link) is an error, not a crash."""
        write(tmp_path, "svc/A.md", RUNBOOK)
        (tmp_path / "svc" / "Gone.md").symlink_to(tmp_path / "nowhere.md")
        scan = scan_root(tmp_path, use_git=False)
        assert [d.path for d in scan.documents] == ["svc/A.md"]
        assert scan.errors == (
            SourceError(path="svc/Gone.md", reason="cannot read file: No such file or directory"),
        )

    @pytest.mark.parametrize(
        ("make", "reason"),
        [("missing", "runbook root does not exist"), ("file", "runbook root is not a directory")],
    )
    def test_unusable_root_is_one_error(self, tmp_path: Path, make: str, reason: str) -> None:
        """A root that is missing or not a folder is reported with the path as given."""
        root = tmp_path / "runbooks"
        if make == "file":
            root.write_text("not a folder")
        assert scan_root(root) == Scan(
            documents=(), errors=(SourceError(path=str(root), reason=reason),)
        )


class TestDocHash:
    def test_stable_across_scans(self, tmp_path: Path) -> None:
        """Scanning unchanged files twice gives identical documents."""
        write(tmp_path, "svc/A.md", RUNBOOK)
        assert scan_root(tmp_path) == scan_root(tmp_path)

    @pytest.mark.parametrize(
        "changed",
        [
            RUNBOOK + "\nOne more step.\n",
            "---\ntitle: New title\n---\n" + RUNBOOK,
            "---\nowner: team-web\n---\n" + RUNBOOK,
            "---\ntags: [web]\n---\n" + RUNBOOK,
            "---\nservices: [web]\n---\n" + RUNBOOK,
            "---\nalert_names: [Other]\n---\n" + RUNBOOK,
            "---\nlast_reviewed: 2020-01-01\n---\n" + RUNBOOK,
        ],
    )
    def test_changes_with_anything_indexed(self, tmp_path: Path, changed: str) -> None:
        """Editing the body or any indexed metadata changes doc_hash."""
        path = write(tmp_path, "svc/A.md", RUNBOOK)
        before = scan_root(tmp_path, use_git=False).documents[0].doc_hash
        write(tmp_path, "svc/A.md", changed)
        assert path.exists()
        assert scan_root(tmp_path, use_git=False).documents[0].doc_hash != before

    def test_same_day_mtime_change_keeps_hash(self, tmp_path: Path) -> None:
        """Touching a file later the same day does not force re-embedding."""
        write(tmp_path, "svc/A.md", RUNBOOK, mtime=datetime(2025, 1, 2, 1, 0, tzinfo=UTC))
        before = scan_root(tmp_path, use_git=False).documents[0]
        write(tmp_path, "svc/A.md", RUNBOOK, mtime=datetime(2025, 1, 2, 23, 0, tzinfo=UTC))
        after = scan_root(tmp_path, use_git=False).documents[0]
        assert after.last_updated != before.last_updated
        assert after.doc_hash == before.doc_hash

    def test_front_matter_formatting_does_not_change_hash(self, tmp_path: Path) -> None:
        """Only parsed values count: reformatting YAML keeps doc_hash but changes revision."""
        write(tmp_path, "svc/A.md", "---\ntags: [a, b]\nowner: x\n---\n" + RUNBOOK)
        before = scan_root(tmp_path, use_git=False).documents[0]
        write(tmp_path, "svc/A.md", "---\nowner: 'x'\ntags:\n  - a\n  - b\n---\n" + RUNBOOK)
        after = scan_root(tmp_path, use_git=False).documents[0]
        assert after.revision != before.revision
        assert after.doc_hash == before.doc_hash

    @needs_git
    def test_revision_source_does_not_change_hash(self, tmp_path: Path) -> None:
        """The same committed file hashes alike whether git metadata is used or not."""
        git(tmp_path, "init", "-q")
        write(tmp_path, "svc/A.md", "---\nlast_reviewed: 2024-01-01\n---\n" + RUNBOOK)
        git(tmp_path, "add", "-A")
        git(tmp_path, "commit", "-q", "-m", "first")
        with_git = scan_root(tmp_path).documents[0]
        without_git = scan_root(tmp_path, use_git=False).documents[0]
        assert with_git.revision != without_git.revision
        assert with_git.doc_hash == without_git.doc_hash
