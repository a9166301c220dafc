"""Source names: what a document's id starts with, and what a page shows as its source.

Every source has a name: given in the settings (`NAME=` before an entry of RUNBOOK_ROOTS,
RUNBOOK_GIT_URL or `--root`), else derived from where it is read: a folder's name, a git
remote's repository path (`acme/ops`), `confluence@<host>`. A document's id is
`<name>:<path>`, so no two sources may share a name. Where derived names meet, each of them
takes more of its path or URL (`a/runbooks` and `b/runbooks`) until they differ; a given
name that meets another is a ConfigError that says how to fix it.

A derived name depends only on the sources configured with it, so it is the same at every
sync; adding a source whose folder has the same name renames both, and ingest.migrate then
moves their documents to the new ids without embedding them again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from enricher.errors import ConfigError

__all__ = [
    "Candidates", "Root", "folder_candidates", "name_roots", "split_name", "unique_names"
]

#: A name given in the settings: no colon (it ends the name in a document id), no slash (so
#: that a relative path or a URL is never read as one), no comma.
_GIVEN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._@-]*)=(?P<rest>.+)$")


@dataclass(frozen=True)
class Root:
    """A folder of runbooks and the name of the source it is."""

    path: Path
    name: str
    #: The name its documents were indexed under before sources had names (the folder's
    #: own name): ingest.migrate moves them to `name` without embedding them again.
    legacy: str


@dataclass(frozen=True)
class Candidates:
    """A source's names, shortest first; one only when the name was given."""

    #: How the source is configured, for an error message ("--root /a/runbooks").
    what: str
    names: tuple[str, ...]


def split_name(entry: str) -> tuple[str | None, str]:
    """`ops=/srv/runbooks` -> ("ops", "/srv/runbooks"); an entry without a name -> (None, it).
    A URL's own `=` (`?ref=v2`) comes after a `:` or a `/`, which a name never holds."""
    match = _GIVEN.match(entry.strip())
    if match is None:
        return None, entry.strip()
    return match["name"], match["rest"].strip()


def folder_candidates(path: Path) -> tuple[str, ...]:
    """`/srv/a/runbooks` -> ("runbooks", "a/runbooks", "srv/a/runbooks")."""
    parts = [p for p in path.resolve().parts if p not in ("/", "")] or [str(path)]
    return tuple("/".join(parts[-n:]) for n in range(1, len(parts) + 1))


def unique_names(sources: Sequence[Candidates]) -> list[str]:
    """One name per source, none shared: every source whose name meets another's takes its
    next candidate, until they all differ."""
    level = [0] * len(sources)
    while True:
        names = [s.names[i] for s, i in zip(sources, level, strict=True)]
        shared = {n for n in names if names.count(n) > 1}
        if not shared:
            return names
        moved = False
        for k, name in enumerate(names):
            if name in shared and level[k] < len(sources[k].names) - 1:
                level[k] += 1
                moved = True
        if not moved:
            name = sorted(shared)[0]
            same = " and ".join(s.what for s, n in zip(sources, names, strict=True) if n == name)
            raise ConfigError(
                f"{same} are both named {name!r} as a runbook source: give one a name of its "
                "own by writing NAME= before it (RUNBOOK_ROOTS=ops=/srv/runbooks, "
                "RUNBOOK_GIT_URL=ops=https://..., --root ops=DIR), or list it once"
            )


def name_roots(entries: Sequence[Path | Root], reserved: Sequence[str] = ()) -> list[Root]:
    """The roots of a sync, named: a `Root` keeps its name, a plain folder is named after
    itself (`folder_candidates`), unique among them all and the `reserved` names (the
    other sources')."""
    sources = [
        Candidates(str(e.path), (e.name,)) if isinstance(e, Root)
        else Candidates(str(e), folder_candidates(e))
        for e in entries
    ]
    names = unique_names([*sources, *(Candidates(n, (n,)) for n in reserved)])
    return [
        e if isinstance(e, Root) else Root(e, name, e.resolve().name)
        for e, name in zip(entries, names, strict=False)
    ]
