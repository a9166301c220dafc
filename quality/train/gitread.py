"""Files of a fetched repository at one commit, read from its bare git directory.

The training collection is rebuilt from mirrors that the search tool's `fetch` brings in as
bare git directories (no work tree): ``<mirrors>/<owner>+<name>/repo``. Everything is read
at a pinned commit through ``git ls-tree`` and ``git cat-file``, so the collection does not
depend on what the mirror's HEAD is today.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MirrorMissing", "Tree", "mirror_dir"]

#: A blob past this is no runbook or rule file (the biggest page read here is ~300 kB).
MAX_BLOB_BYTES = 4 * 1024 * 1024


class MirrorMissing(RuntimeError):
    """The repository, or its pinned commit, is not in the mirrors folder."""


def mirror_dir(mirrors: Path, repo: str) -> Path:
    """Where `fetch` puts `owner/name`: ``<mirrors>/<owner>+<name>/repo``."""
    return mirrors / repo.replace("/", "+") / "repo"


@dataclass(frozen=True)
class Tree:
    """One commit of one bare repository."""

    git_dir: Path
    commit: str

    @classmethod
    def open(cls, mirrors: Path, repo: str, commit: str) -> Tree:
        git_dir = mirror_dir(mirrors, repo)
        if not git_dir.is_dir():
            raise MirrorMissing(
                f"{repo} is not under {mirrors}: fetch it (the search tool's "
                f"`fetch github:{repo}`), or pass --mirrors"
            )
        tree = cls(git_dir, commit)
        try:
            tree._git("cat-file", "-e", f"{commit}^{{commit}}")
        except subprocess.CalledProcessError as exc:
            raise MirrorMissing(
                f"{repo}'s mirror at {git_dir} lacks the pinned commit {commit}: fetch it again"
            ) from exc
        return tree

    def _git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            check=True,
            capture_output=True,
        ).stdout

    def files(self, folder: str = "") -> list[str]:
        """Every file path under `folder` ("" for the whole tree), sorted."""
        args = ["ls-tree", "-r", "-z", "--name-only", self.commit]
        if folder:
            args += ["--", folder.rstrip("/") + "/"]
        out = self._git(*args).decode("utf-8")
        return sorted(name for name in out.split("\0") if name)

    def exists(self, path: str) -> bool:
        try:
            self._git("cat-file", "-e", f"{self.commit}:{path}")
        except subprocess.CalledProcessError:
            return False
        return True

    def read(self, path: str) -> str:
        """The text of one file at the commit (UTF-8; a stray byte is replaced)."""
        spec = f"{self.commit}:{path}"
        size = int(self._git("cat-file", "-s", spec))
        if size > MAX_BLOB_BYTES:
            raise ValueError(f"{path} at {self.commit[:12]} is {size} bytes, over the bound")
        return self._git("cat-file", "blob", spec).decode("utf-8", errors="replace")
