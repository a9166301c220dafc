"""A git remote as a runbook source (RUNBOOK_GIT_URL): a clone in the service's data folder,
fetched before every sync.

The clone is partial (`--filter=blob:none`, single branch), not shallow: commits and trees
come whole, so each runbook's last commit date (its staleness) is right, while only the
blobs of the checked-out tree are downloaded. With RUNBOOK_GIT_SUBDIR the checkout is
sparse, so a monorepo costs the runbooks' blobs only. A server that cannot filter sends
everything, which is still correct.

Each update fetches the ref with a forced refspec, so a force-push simply moves the
checkout (and the sync prunes what it removed). A fetch that fails (authentication, the
network, a deleted ref) changes nothing on disk: the checkout stays at the last good commit
and the index keeps serving it. The failure is kept on the object (`error`, `failures`) for
/readyz and /metrics, and raised as `GitFetchError` with what to do about it.

Credentials: RUNBOOK_GIT_TOKEN goes to git as an HTTP Authorization header through the
environment of the git process (never its argv, which any user can read, and never the
clone's config on disk); without it git's own credential helper, or ssh's keys, apply.
Credentials written into the URL are moved out of it the same way.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

import structlog

from ingest.naming import Root

log = structlog.get_logger(__name__)

__all__ = ["Fetched", "GitFetchError", "GitRemote", "display_url", "repo_key", "same_ref"]

FETCH_TIMEOUT_S = 300.0
_LOCAL_TIMEOUT_S = 60.0
#: Where the fetched tip is kept, whatever the ref is (a branch or a tag), and the commit
#: checked out last (a fresh clone has a HEAD but nothing checked out).
_TIP = "refs/runbooks/tip"
_SERVED = "refs/runbooks/served"
#: GitHub takes a token as the password of any user; GitLab too, for its access tokens.
DEFAULT_TOKEN_USER = "x-access-token"
#: An HTTP 401 or 403 as git reports it ("The requested URL returned error: 403"). Not
#: any " 403": a refused connection to port 40312 says "port 40312".
DENIED = re.compile(r"returned error: 40[13]\b")
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]*@", re.IGNORECASE)


class GitFetchError(Exception):
    """A clone or fetch failed; the message names the setting to check and hides secrets."""


@dataclass(frozen=True)
class Fetched:
    commit: str
    previous: str | None
    #: Paths under the subfolder that the new commit changed, when the old one is known.
    changed: int | None


def display_url(url: str) -> str:
    """The URL without any user or password, fit for logs and errors."""
    return _USERINFO.sub(r"\g<scheme>", url)


def _split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """(URL without userinfo, user, password) for http(s) URLs; others come back as they are."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.username is None:
        return url, None, None
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    clean = urlunsplit(SplitResult(parts.scheme, netloc, parts.path, parts.query, ""))
    password = unquote(parts.password) if parts.password else None
    return clean, unquote(parts.username), password


def _repo_name(url: str) -> str:
    tail = display_url(url).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]", "-", tail.removesuffix(".git")).strip(".-")
    return name or "runbooks"


def _branch_name(ref: str) -> str:
    """The local branch checked out for `ref`: its short name, so that web links name it."""
    for prefix in ("refs/heads/", "refs/tags/", "refs/"):
        if ref.startswith(prefix):
            return ref.removeprefix(prefix)
    return ref


def source_candidates(url: str, ref: str, subdir: str) -> tuple[str, ...]:
    """A remote's source names, shortest first (ingest.naming): its repository path
    (`acme/ops`), then with the subfolder, the host, and the ref."""
    shown = display_url(url).rstrip("/")
    scheme, _, rest = shown.rpartition("://")
    host, _, path = rest.partition("/") if scheme else rest.rpartition(":")
    path = path.strip("/").removesuffix(".git") or _repo_name(url)
    host = host.rpartition("@")[2].partition(":")[0]
    inside = f"{path}/{subdir.strip('/')}" if subdir.strip("/") else path
    return tuple(dict.fromkeys([path, inside, f"{host}/{inside}", f"{host}/{inside}@{ref}"]))


def repo_key(url: str) -> str:
    """`host/owner/repo` of a clone URL in any of its forms (https, ssh, scp-like), lower
    case, without credentials, port or `.git`: what a push event and a remote share."""
    shown = display_url(url.strip()).rstrip("/")
    scheme, _, rest = shown.rpartition("://")
    host, _, path = rest.partition("/") if scheme else rest.rpartition(":")
    host = host.rpartition("@")[2].partition(":")[0]
    return f"{host}/{path.strip('/').removesuffix('.git')}".lower()


def same_ref(pushed: str, served: str) -> bool:
    """A push's `refs/heads/main` (or `refs/tags/v2`) is the served `main` (or `v2`)."""
    return pushed == served or _branch_name(pushed) == _branch_name(served)


class GitRemote:
    def __init__(
        self,
        url: str,
        *,
        ref: str,
        subdir: str,
        token: str | None,
        folder: Path,
        source: str | None = None,
    ) -> None:
        self.url, user, password = _split_credentials(url)
        self.name = display_url(url)
        self.ref = ref
        self.subdir = subdir.strip("/")
        #: The source name of its runbooks (ingest.naming): what a page shows.
        self.source = source or source_candidates(url, ref, self.subdir)[0]
        self.secret = token or password
        self.checkout = folder / re.sub(r"[^A-Za-z0-9._-]", "-", self.source).strip(".-")
        self.root = self.checkout / self.subdir if self.subdir else self.checkout
        # Before sources had names, its runbooks were named after the folder they were in.
        legacy = PurePosixPath(self.subdir).name or _repo_name(self.url)
        #: The checkout's runbooks as a root of the sync.
        self.named_root = Root(self.root, self.source, legacy)
        self._env = self._git_env(user)
        #: The commit served: the last one fetched and checked out (None before the first).
        self.commit: str | None = None
        #: Why the last update failed; None after a good one.
        self.error: str | None = None
        #: Updates failed in a row.
        self.failures = 0
        #: Epoch seconds of the last good fetch.
        self.fetched_at: float | None = None
        self._prepared = False

    def _git_env(self, user: str | None) -> dict[str, str]:
        # The process environment is passed on as git would inherit it (HOME, PATH, ssh
        # agent, the user's credential helper); only our own variables are added.
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
        if self.secret:
            pair = f"{user or DEFAULT_TOKEN_USER}:{self.secret}".encode()
            header = "Authorization: Basic " + base64.b64encode(pair).decode("ascii")
            env |= {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": header,
            }
        return env

    def update(self) -> Fetched:
        """Fetch the ref and check it out; GitFetchError leaves the checkout as it was."""
        started = time.monotonic()
        try:
            fetched = self._update()
        except GitFetchError as exc:
            self.error = str(exc)
            self.failures += 1
            if self.commit is None:  # a restart: the checkout on disk is the last good one
                self.commit = self._served()
            log.warning(
                "git.fetch_failed",
                remote=self.name,
                ref=self.ref,
                error=self.error,
                failures=self.failures,
                serving=self.commit,
            )
            raise
        if self.error is not None:
            log.info("git.fetch_recovered", remote=self.name, after_failures=self.failures)
        self.error, self.failures, self.fetched_at = None, 0, time.time()
        if fetched.commit != fetched.previous:
            log.info(
                "git.fetched",
                remote=self.name,
                ref=self.ref,
                commit=fetched.commit,
                previous=fetched.previous,
                changed=fetched.changed,
                ms=round((time.monotonic() - started) * 1000),
            )
        return fetched

    def _update(self) -> Fetched:
        if not (self.checkout / ".git").is_dir():
            self._clone()
        if not self._prepared:
            self._git("remote", "set-url", "origin", self.url)
            if self.subdir:
                self._git("sparse-checkout", "set", self.subdir)
            else:
                self._git("sparse-checkout", "disable")
            self._prepared = True
        previous = self._served()
        self._git("fetch", "--no-tags", "origin", f"+{self.ref}:{_TIP}", remote=True)
        commit = self._git("rev-parse", f"{_TIP}^{{commit}}").strip()
        self._check_subdir(commit)
        changed: int | None = None
        if commit != previous:
            self._git("checkout", "-q", "--force", "-B", _branch_name(self.ref), commit)
            self._git("update-ref", _SERVED, commit)
            changed = self._changed(previous, commit)
        self.commit = commit
        return Fetched(commit=commit, previous=previous, changed=changed)

    def _check_subdir(self, commit: str) -> None:
        """RUNBOOK_GIT_SUBDIR is a folder of `commit`: checked out without it, the runbooks
        would all look deleted. Trees come whole with a partial clone, so this reads no blob."""
        if (
            not self.subdir
            or self._git("ls-tree", "-d", "--name-only", commit, "--", self.subdir).strip()
        ):
            return
        parent = str(PurePosixPath(self.subdir).parent).removeprefix(".")
        at = f"{commit}:{parent}" if parent else commit
        folders = self._git("ls-tree", "-d", "--name-only", at).split()
        raise GitFetchError(
            f"RUNBOOK_GIT_SUBDIR={self.subdir!r} is not a folder of {self.name} at "
            f"{self.ref} ({commit[:12]}): set it to the runbooks' folder (folders there: "
            f"{', '.join(folders[:10]) or 'none'}); nothing is pruned until it is found"
        )

    def _clone(self) -> None:
        """Clone into a temporary folder and move it in place: a failed clone leaves none."""
        self.checkout.parent.mkdir(parents=True, exist_ok=True)
        partial = self.checkout.with_name(self.checkout.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        self._run(
            [
                "clone",
                "--quiet",
                "--filter=blob:none",
                "--no-checkout",
                "--no-tags",
                "--single-branch",
                "--branch",
                _branch_name(self.ref),
                self.url,
                str(partial),
            ],
            cwd=None,
            remote=True,
        )
        partial.rename(self.checkout)
        self._prepared = False

    def _served(self) -> str | None:
        try:
            return self._git("rev-parse", "--verify", "--quiet", _SERVED).strip() or None
        except GitFetchError:  # a fresh clone: nothing checked out yet
            return None

    def _changed(self, previous: str | None, commit: str) -> int | None:
        if previous is None:
            return None
        try:
            names = self._git(
                "diff", "--no-renames", "--name-only", previous, commit, "--", self.subdir or "."
            )
        except GitFetchError:  # the old commit is gone (force-push and gc): nothing to count
            return None
        return len(names.splitlines())

    def _git(self, *args: str, remote: bool = False) -> str:
        return self._run(list(args), cwd=self.checkout, remote=remote)

    def _run(self, args: list[str], *, cwd: Path | None, remote: bool) -> str:
        command = ["git", *(["-C", str(cwd)] if cwd else []), *args]
        timeout = FETCH_TIMEOUT_S if remote else _LOCAL_TIMEOUT_S
        try:
            done = subprocess.run(
                command, capture_output=True, env=self._env, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            raise GitFetchError(
                f"git {args[0]} of {self.name} took longer than {timeout:g} s: check that the "
                "remote is reachable from this host (proxy, firewall)"
            ) from None
        except OSError as exc:
            raise GitFetchError(f"cannot run git ({exc.strerror}): install git") from None
        if done.returncode != 0:
            raise GitFetchError(self._explain(args[0], done.stderr.decode(errors="replace")))
        return done.stdout.decode(errors="replace")

    def _explain(self, verb: str, stderr: str) -> str:
        said = self._redact(" ".join(stderr.split()))[-300:]
        low = said.lower()
        denied = (
            "authentication failed",
            "could not read username",
            "could not read password",
            "permission denied",
        )
        if DENIED.search(low) or any(s in low for s in denied):
            advice = (
                "authentication failed: set RUNBOOK_GIT_TOKEN to a token that can read the "
                "repository (or configure git's credential helper / ssh key for this user)"
            )
        elif any(
            s in low for s in ("couldn't find remote ref", "not found in upstream", "remote branch")
        ):
            advice = (
                f"the ref {self.ref!r} is not on the remote (deleted or renamed?): "
                "set RUNBOOK_GIT_REF to an existing branch or tag"
            )
        elif any(
            s in low
            for s in (
                "could not resolve",
                "connection refused",
                "timed out",
                "connect to",
                "unreachable",
                "connection reset",
            )
        ):
            advice = "the remote is unreachable: check RUNBOOK_GIT_URL and the network"
        elif any(s in low for s in ("not found", "does not appear to be a git repository")):
            advice = "no repository at that address: check RUNBOOK_GIT_URL"
        else:
            advice = "see git's message"
        return f"git {verb} of {self.name} failed: {advice} (git: {said or 'no message'})"

    def _redact(self, text: str) -> str:
        text = display_url(text)
        return text.replace(self.secret, "***") if self.secret else text
