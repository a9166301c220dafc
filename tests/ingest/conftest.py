"""Fixtures of the ingest tests: a real git server serving the module's `repo` fixture, and
the test's embedded index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from enricher.index.connect import open_index
from enricher.index.engine import Index
from enricher.settings import Settings
from tests.gitserver import TEAM_TOKEN, GitHttpServer, TeamRepo, git_server


@pytest.fixture()
def server(tmp_path: Path, repo: TeamRepo) -> Iterator[GitHttpServer]:
    """The module's `repo` on a git server that demands TEAM_TOKEN."""
    with git_server(repo.bare.parent, token=TEAM_TOKEN) as running:
        yield running


@pytest.fixture()
def index(settings: Settings) -> Iterator[Index]:
    opened = open_index(settings)
    yield opened
    opened.close()
