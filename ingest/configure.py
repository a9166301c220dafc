"""The runbook sources the settings name, each with its source name (ingest.naming):
RUNBOOK_ROOTS's folders (and `python -m ingest --root`), RUNBOOK_GIT_URL's remotes, and the
Confluence site. Built once at start; a ConfigError says what to fix.

RUNBOOK_GIT_URL takes several remotes, comma separated, each as `[NAME=]URL[//SUBDIR][?ref=REF]`
(the subfolder and ref default to RUNBOOK_GIT_SUBDIR and RUNBOOK_GIT_REF):
`https://github.com/acme/ops//runbooks?ref=main,git@gitlab.com:acme/db.git`.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from enricher.errors import ConfigError
from enricher.settings import Settings
from ingest.confluence.source import ConfluenceSource
from ingest.confluence.source import from_settings as confluence_source
from ingest.gitremote import GitRemote, source_candidates
from ingest.incremental import IncrementalSource
from ingest.naming import Candidates, Root, folder_candidates, split_name, unique_names

__all__ = ["GitEntry", "Sources", "configure", "git_entry"]


@dataclass(frozen=True)
class GitEntry:
    name: str | None
    url: str
    ref: str
    subdir: str


def git_entry(entry: str, *, ref: str, subdir: str) -> GitEntry:
    """One entry of RUNBOOK_GIT_URL: `[NAME=]URL[//SUBDIR][?ref=REF]`."""
    name, rest = split_name(entry)
    rest, _, query = rest.partition("?ref=")
    if "?" in rest:
        raise ConfigError(
            f"RUNBOOK_GIT_URL entry {entry!r}: the only option after '?' is ref=BRANCH_OR_TAG "
            "(https://host/org/repo//runbooks?ref=main)"
        )
    scheme, sep, tail = rest.partition("://")
    body = tail if sep else rest
    url, marker, inside = body.partition("//")
    return GitEntry(
        name=name,
        url=f"{scheme}{sep}{url}" if sep else url,
        ref=query.strip() or ref,
        subdir=inside.strip("/") if marker else subdir,
    )


@dataclass(frozen=True)
class Sources:
    folders: tuple[Root, ...]
    remotes: tuple[GitRemote, ...]
    confluence: ConfluenceSource | None

    @property
    def roots(self) -> list[Root]:
        """Every folder a sync reads: the configured ones and the remotes' checkouts."""
        return [*self.folders, *(remote.named_root for remote in self.remotes)]

    @property
    def incremental(self) -> list[IncrementalSource]:
        return [self.confluence] if self.confluence is not None else []

    @property
    def names(self) -> list[str]:
        return [root.name for root in self.roots] + [s.name for s in self.incremental]


def configure(settings: Settings, folders: Sequence[str] | None = None) -> Sources:
    """The sources of RUNBOOK_GIT_URL and CONFLUENCE_URL, and the folders given (RUNBOOK_ROOTS
    when None), named so that no two share a name."""
    entries = [split_name(f) for f in (settings.runbook_roots if folders is None else folders)]
    gits = [
        git_entry(e, ref=settings.runbook_git_ref, subdir=settings.runbook_git_subdir)
        for e in (settings.runbook_git_url or "").split(",")
        if e.strip()
    ]
    if gits and shutil.which("git") is None:
        raise ConfigError(
            "RUNBOOK_GIT_URL is set but git is not installed: install git "
            "(`apt-get install git`), or unset RUNBOOK_GIT_URL"
        )
    confluence = confluence_source(settings)
    candidates = [
        Candidates(f"the runbook folder {path}", (name,) if name else folder_candidates(Path(path)))
        for name, path in entries
    ]
    candidates += [
        Candidates(
            f"the git remote {g.url}",
            (g.name,) if g.name else source_candidates(g.url, g.ref, g.subdir),
        )
        for g in gits
    ]
    if confluence is not None:
        what = f"CONFLUENCE_URL {settings.confluence_url}"
        candidates.append(Candidates(what, (confluence.name,)))
    names = unique_names(candidates)
    token = settings.runbook_git_token
    remotes = tuple(
        GitRemote(
            g.url,
            ref=g.ref,
            subdir=g.subdir,
            token=token.get_secret_value() if token else None,
            folder=settings.runbook_git_dir,
            source=name,
        )
        for g, name in zip(gits, names[len(entries) :], strict=False)
    )
    roots = tuple(
        Root(Path(path), name, Path(path).resolve().name)
        for (_, path), name in zip(entries, names, strict=False)
    )
    return Sources(roots, remotes, confluence)
