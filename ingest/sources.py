"""Read a folder of runbooks into `Document`s, with metadata from path, front matter and git.

Layout: ``<root>/<service>/<alert_name>.md``. A file directly under the root
serves no particular service; deeper files take the first folder as service.
Front matter wins over the path for every field it sets (a non-empty list
counts as set). Hidden files and folders (``.git``, ``.github``) are skipped.

Git is asked twice per root, whatever the number of files: ``ls-tree`` for the
blob shas in HEAD and one ``log --name-only`` walk for each path's last commit.
Git data is used only for files whose content equals their blob in HEAD:
for a file edited (or staged) since, the commit neither names its content nor
dates it, so such a file gets the content sha256 and its mtime, like a file
outside git. Line-ending or filter conversions (autocrlf, LFS) also make the
bytes differ from the blob, which falls back the same safe way.

A file that cannot be used becomes a `SourceError` and the scan goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time
from pathlib import Path, PurePosixPath

from enricher.search.names import split_identifier
from ingest.chunking import document_title
from ingest.document import Document, SourceError
from ingest.frontmatter import FrontMatter, FrontMatterError, parse_front_matter, split_front_matter
from ingest.weblink import Kind, blob_template, fill

__all__ = ["Scan", "scan_root"]

#: Bump when the recipe of `doc_hash` changes, so every document is re-indexed once.
DOC_HASH_VERSION = 2

_GIT_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Scan:
    """What one root yielded: documents in path order, and the files that failed."""

    documents: tuple[Document, ...]
    errors: tuple[SourceError, ...]


@dataclass(frozen=True)
class _GitState:
    #: Blob sha in HEAD by path relative to the root.
    blobs: dict[str, str] = field(default_factory=dict)
    #: Committer date of the newest commit touching the path, by path relative to the root.
    dates: dict[str, datetime] = field(default_factory=dict)
    #: That commit's sha, by path relative to the root.
    commits: dict[str, str] = field(default_factory=dict)
    #: The link template of the root's files (ingest.weblink): the source's own, else their
    #: blob on the git host, when there is one.
    web: str | None = None


#: Documents already read, by what they were read from: (root, path, size, mtime_ns, git
#: blob, git date, web URL). A long-running sync passes the same memo to every scan.
DocumentMemo = dict[tuple[str, str, int, int, str, str, str], Document]


def scan_root(
    root: Path,
    *,
    name: str | None = None,
    use_git: bool = True,
    memo: DocumentMemo | None = None,
    link: str | None = None,
    kinds: Mapping[str, Kind] | None = None,
) -> Scan:
    """Read every ``*.md`` under ``root``; git metadata is used when ``root`` is in a work tree.

    `name` is the source's (ingest.naming; the folder's name when not given): documents are
    `<name>:<path>`. With `memo`, a file whose size, mtime and git state are as when it was
    last read is not read again (the memo keeps the entries of this scan's files only).
    `link` is the source's link template (ingest.weblink); without one, a file's link is its
    blob on the git host, of the kind `kinds` names for that host."""
    if not root.is_dir():
        problem = "is not a directory" if root.exists() else "does not exist"
        reason = f"runbook root {problem}"
        return Scan(documents=(), errors=(SourceError(path=str(root), reason=reason),))
    base = root.resolve()
    source = name or base.name
    errors: list[SourceError] = []
    paths = _markdown_files(base, errors)
    git = _git_state(base, kinds or {}) if use_git else _GitState()
    if link is not None:
        git = replace(git, web=link)
    documents: list[Document] = []
    seen: DocumentMemo = {}
    for rel in paths:
        key = _memo_key(base, rel, git) if memo is not None else None
        known = memo.get(key) if memo is not None and key is not None else None
        result = known or _read_document(base, rel, git, source)
        if isinstance(result, SourceError):
            errors.append(result)
            continue
        documents.append(result)
        if key is not None:
            seen[key] = result
    if memo is not None:
        for key in [k for k in memo if k[0] == str(base) and k not in seen]:
            del memo[key]
        memo.update(seen)
    return Scan(documents=tuple(documents), errors=tuple(errors))


def _memo_key(
    base: Path, rel: str, git: _GitState
) -> tuple[str, str, int, int, str, str, str] | None:
    try:
        stat = (base / rel).stat()
    except OSError:  # _read_document reports it
        return None
    date = git.dates.get(rel)
    return (
        str(base), rel, stat.st_size, stat.st_mtime_ns, git.blobs.get(rel, ""),
        f"{date.isoformat()} {git.commits.get(rel, '')}" if date else "", git.web or "",
    )


def _markdown_files(base: Path, errors: list[SourceError]) -> list[str]:
    def unreadable(exc: OSError) -> None:
        where = Path(exc.filename).relative_to(base).as_posix() if exc.filename else "."
        errors.append(SourceError(path=where, reason=f"cannot list folder: {exc.strerror}"))

    found: list[str] = []
    for folder, subfolders, files in os.walk(base, onerror=unreadable):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in files:
            if not name.startswith(".") and name.lower().endswith(".md"):
                found.append(Path(folder, name).relative_to(base).as_posix())
    return sorted(found)


def _read_document(base: Path, rel: str, git: _GitState, source: str) -> Document | SourceError:
    try:
        with (base / rel).open("rb") as handle:
            data = handle.read()
            mtime = os.fstat(handle.fileno()).st_mtime
    except OSError as exc:
        return SourceError(path=rel, reason=f"cannot read file: {exc.strerror or exc}")
    if b"\0" in data:
        return SourceError(path=rel, reason="binary file (contains NUL bytes), expected markdown")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return SourceError(path=rel, reason=f"not UTF-8 text (invalid byte at offset {exc.start})")
    if not text.strip():
        return SourceError(path=rel, reason="empty file")
    try:
        meta, body = split_front_matter(text)
        front = parse_front_matter(meta)
    except FrontMatterError as exc:
        return SourceError(path=rel, reason=str(exc))
    if not body.strip():
        return SourceError(path=rel, reason="no markdown after the front matter")

    blob = git.blobs.get(rel)
    committed = blob is not None and _git_blob_sha(data, blob) == blob
    if front.last_reviewed is not None:
        last_updated = datetime.combine(front.last_reviewed, time(), tzinfo=UTC)
    elif committed and rel in git.dates:
        last_updated = git.dates[rel]
    else:
        last_updated = datetime.fromtimestamp(mtime, tz=UTC)
    if committed and blob is not None:
        commit = git.commits.get(rel)
        revision = f"{commit}:{blob}" if commit else blob
    else:
        revision = hashlib.sha256(data).hexdigest()
    url = fill(git.web, rel) if git.web else None
    return _document(source, rel, front, body, last_updated, revision, url)


def _document(
    source: str,
    rel: str,
    front: FrontMatter,
    body: str,
    last_updated: datetime,
    revision: str,
    url: str | None = None,
) -> Document:
    folders = rel.split("/")[:-1]
    stem = PurePosixPath(rel).stem
    title = front.title or document_title(body) or split_identifier(stem) or stem
    alert_names = tuple(front.alert_names) or (stem,)
    services = tuple(front.services) or tuple(folders[:1])
    tags = tuple(front.tags)
    doc_hash = _doc_hash(
        {
            "title": title,
            "alert_names": list(alert_names),
            "services": list(services),
            "owner": front.owner,
            "tags": list(tags),
            "last_updated": last_updated.date().isoformat(),
            "path": rel,
            "url": url,
            "body": body,
        }
    )
    return Document(
        doc_id=f"{source}:{rel}",
        source=source,
        path=rel,
        title=title,
        alert_names=alert_names,
        services=services,
        owner=front.owner,
        tags=tags,
        last_updated=last_updated,
        revision=revision,
        body=body,
        doc_hash=doc_hash,
        url=url,
    )


def _doc_hash(indexed: dict[str, object]) -> str:
    """sha256 over what reaches the index payload, so that only real changes re-embed.

    ``revision`` is left out on purpose: the same bytes get a blob sha inside a
    git checkout and a sha256 outside one, and reformatting the front matter
    changes it too; neither changes a single indexed field. ``last_updated``
    counts by its date, the resolution staleness is judged at, so a ``touch``
    on a file outside git re-indexes it at most once a day.
    """
    canonical = json.dumps(
        {"version": DOC_HASH_VERSION, **indexed}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _git_blob_sha(data: bytes, like: str) -> str:
    """What ``git hash-object`` would print; SHA-256 repositories have 64-digit ids."""
    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _git_state(base: Path, kinds: Mapping[str, Kind]) -> _GitState:
    """Blob shas and last commit dates for the files under ``base``; empty outside git.

    Run from ``base``, both commands limit themselves to ``base`` and print paths
    relative to it, so a root that is a subfolder of the repository needs no
    mapping. Any failure (no git, not a repository, no commit yet, a hang)
    means no git metadata, and the caller uses content hashes and mtimes.
    """
    tree = _git(base, "ls-tree", "-r", "-z", "HEAD")
    if tree is None:
        return _GitState()
    history = _git(
        base,
        "-c",
        "log.showRoot=true",
        "log",
        "--no-color",
        "--no-show-signature",
        "--no-renames",
        "--relative",
        "--name-only",
        "-z",
        "--format=%x00%ct %H",
        "HEAD",
        "--",
        ".",
    )
    dates, commits = _parse_log(history or b"")
    return _GitState(blobs=_parse_tree(tree), dates=dates, commits=commits, web=_web(base, kinds))


def _web(base: Path, kinds: Mapping[str, Kind]) -> str | None:
    """The root's blob URL: origin remote, checked-out branch (else commit), root's prefix.

    The remote as configured, not as `url.<base>.insteadOf` rewrites it for fetching (to a
    mirror, say): people read the runbook where the repository says it lives."""
    remote = _git(base, "config", "--get", "remote.origin.url")
    branch = _git(base, "rev-parse", "--abbrev-ref", "HEAD")
    prefix = _git(base, "rev-parse", "--show-prefix")
    if remote is None or branch is None or prefix is None:
        return None
    ref = branch.decode().strip()
    if ref == "HEAD":  # detached: the commit is the only stable name
        commit = _git(base, "rev-parse", "HEAD")
        ref = commit.decode().strip() if commit else ""
    return blob_template(remote.decode().strip(), ref, prefix.decode().strip(), kinds)


def _git(base: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(base), *args],
            capture_output=True,
            check=False,
            timeout=_GIT_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _parse_tree(output: bytes) -> dict[str, str]:
    """``<mode> <type> <sha>\\t<path>`` entries, NUL-terminated; keep blobs only."""
    blobs: dict[str, str] = {}
    for entry in output.split(b"\0"):
        info, tab, name = entry.partition(b"\t")
        fields = info.split()
        if tab and len(fields) == 3 and fields[1] == b"blob":
            blobs[os.fsdecode(name)] = fields[2].decode("ascii")
    return blobs


def _parse_log(output: bytes) -> tuple[dict[str, datetime], dict[str, str]]:
    """Newest commit date and sha per path from ``log --format=%x00%ct %H --name-only -z``.

    Each commit prints ``\\0<timestamp> <sha>\\0`` and then its paths, each ended by
    ``\\0``, the first one preceded by a newline. File names are never empty,
    so an empty field always announces a timestamp. Commits come newest first,
    so the first date seen for a path is its last change.
    """
    dates: dict[str, datetime] = {}
    commits: dict[str, str] = {}
    when: datetime | None = None
    sha = ""
    expect_date = False
    first_name = False
    for token in output.split(b"\0"):
        if not token:
            expect_date = True
        elif expect_date:
            stamp, _, commit = token.partition(b" ")
            try:
                when = datetime.fromtimestamp(int(stamp), tz=UTC)
            except ValueError:
                return {}, {}
            sha = commit.decode("ascii", errors="replace")
            expect_date = False
            first_name = True
        elif when is not None:
            name = os.fsdecode(token[1:] if first_name and token.startswith(b"\n") else token)
            first_name = False
            if name not in dates:
                dates[name], commits[name] = when, sha
    return dates, commits
