"""Where a person reads a runbook: its blob URL on the git host the work tree came from.

A page links each runbook section at `<blob base>/<path>#<anchor>`. RUNBOOK_BASE_URL, when
set, wins at render time; without it the link comes from here: the `origin` remote of the
root's work tree, made into a GitHub (`/blob/<ref>/`) or GitLab (`/-/blob/<ref>/`) URL for
the checked-out branch (the commit when detached). Other hosts get no link: guessing a
URL scheme would produce links that 404.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: scp-like `git@host:owner/repo.git`, and URL forms `ssh://git@host[:port]/owner/repo`,
#: `https://[user@]host/owner/repo(.git)`.
_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!/)[^\s]+?)(?:\.git)?/?$")
_URL = re.compile(
    r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[\w.-]+)(?::\d+)?/(?P<path>[^\s]+?)(?:\.git)?/?$"
)


def blob_base(remote: str, ref: str, prefix: str) -> str | None:
    """The blob URL of folder `prefix` (relative to the repository root) at `ref`, or None
    when the remote is not a GitHub or GitLab repository we can name."""
    match = _URL.match(remote.strip()) or _SCP.match(remote.strip())
    if match is None or not ref:
        return None
    host, path = match["host"].lower(), match["path"].strip("/")
    if path.count("/") < 1:
        return None
    if "github" in host:
        kind = "blob"
    elif "gitlab" in host:
        kind = "-/blob"
    else:
        return None
    folder = "/".join(quote(part) for part in prefix.strip("/").split("/") if part)
    base = f"https://{host}/{path}/{kind}/{quote(ref, safe='')}"
    return f"{base}/{folder}" if folder else base


__all__ = ["blob_base"]
