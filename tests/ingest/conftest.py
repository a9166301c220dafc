"""Fixtures of the ingest tests: a real git server serving the module's `repo` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitserver import TEAM_TOKEN, GitHttpServer, TeamRepo, git_server


@pytest.fixture()
def server(tmp_path: Path, repo: TeamRepo) -> Iterator[GitHttpServer]:
    """The module's `repo` on a git server that demands TEAM_TOKEN."""
    with git_server(repo.bare.parent, token=TEAM_TOKEN) as running:
        yield running
