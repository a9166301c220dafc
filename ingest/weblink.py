"""Where a person reads a runbook: a link template per source, filled per document. Pure.

A page links each runbook section at its document's URL plus `#<anchor>`. The URL comes,
first found, from:

1. the source's RUNBOOK_LINK_TEMPLATE (a rendered site: MkDocs, Backstage TechDocs, Hugo,
   Docusaurus), with `{path}` (`postgres/PgLag.md`), `{path_noext}` (`postgres/PgLag`) and
   `{slug}` (`postgres/pglag`: lower case, spaces and underscores as hyphens, Hugo's URL);
   a trailing `#{anchor}` marks where the section goes, which is always at the end;
2. RUNBOOK_BASE_URL: `<base>/{path}`;
3. the blob URL of the file on the git host its work tree came from (`origin`, at the
   checked-out branch, the commit when detached). The host's kind is RUNBOOK_GIT_WEB's for
   that host name (github, gitlab, bitbucket, bitbucket-server, gitea, azure), else read
   from the name (github, gitlab, bitbucket.org, dev.azure.com); a host of no known kind
   gets no link rather than a guessed one that 404s.

Confluence pages keep their own URL: none of this applies to them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Literal, get_args
from urllib.parse import quote

from enricher.errors import ConfigError
from ingest.naming import split_name

__all__ = ["KINDS", "Kind", "blob_template", "fill", "host_kinds", "link_templates"]

Kind = Literal["github", "gitlab", "bitbucket", "bitbucket-server", "gitea", "azure"]
KINDS: tuple[Kind, ...] = get_args(Kind)

#: scp-like `git@host:owner/repo.git`, and URL forms `ssh://git@host[:port]/owner/repo`,
#: `https://[user@]host/owner/repo(.git)`.
_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!/)[^\s]+?)(?:\.git)?/?$")
_URL = re.compile(
    r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[\w.-]+)(?::\d+)?/(?P<path>[^\s]+?)(?:\.git)?/?$"
)
_PLACEHOLDERS = ("{path}", "{path_noext}", "{slug}")
_KNOWN_HOSTS: dict[str, Kind] = {
    "bitbucket.org": "bitbucket", "dev.azure.com": "azure", "ssh.dev.azure.com": "azure"
}


def _kind_of(host: str, kinds: Mapping[str, Kind]) -> Kind | None:
    if host in kinds:
        return kinds[host]
    if "" in kinds:
        return kinds[""]
    if "github" in host:
        return "github"
    if "gitlab" in host:
        return "gitlab"
    return _KNOWN_HOSTS.get(host)


def blob_template(
    remote: str, ref: str, prefix: str, kinds: Mapping[str, Kind] | None = None
) -> str | None:
    """The link template (`{path}` the file's path under `prefix`) of files of folder
    `prefix` of the repository `remote` at `ref`, or None on a host of no known kind."""
    match = _URL.match(remote.strip()) or _SCP.match(remote.strip())
    if match is None or not ref:
        return None
    host, path = match["host"].lower(), match["path"].strip("/")
    kind = _kind_of(host, kinds or {})
    if kind is None or path.count("/") < 1:
        return None
    folder = "/".join(quote(part) for part in prefix.strip("/").split("/") if part)
    inside = f"{folder}/{{path}}" if folder else "{path}"
    at = quote(ref, safe="")
    if kind == "github":
        return f"https://{host}/{path}/blob/{at}/{inside}"
    if kind == "gitlab":
        return f"https://{host}/{path}/-/blob/{at}/{inside}"
    if kind == "bitbucket":
        return f"https://{host}/{path}/src/{at}/{inside}"
    if kind == "gitea":
        what = "commit" if re.fullmatch(r"[0-9a-f]{40,64}", ref) else "branch"
        return f"https://{host}/{path}/src/{what}/{at}/{inside}"
    if kind == "bitbucket-server":
        project, _, repo = path.removeprefix("scm/").partition("/")
        return f"https://{host}/projects/{project}/repos/{repo}/browse/{inside}?at={at}"
    # azure: https://dev.azure.com/ORG/PROJECT/_git/REPO, or ssh v3/ORG/PROJECT/REPO
    parts = path.split("/")
    if parts[0] == "v3" and len(parts) == 4:
        host, parts = "dev.azure.com", [parts[1], parts[2], "_git", parts[3]]
    if "_git" not in parts:
        return None
    return f"https://{host}/{'/'.join(parts)}?path=/{inside}&version=GB{at}"


def fill(template: str, path: str) -> str:
    """The URL of the document at `path` (relative to its source's root)."""
    noext = str(PurePosixPath(path).with_suffix("")) if path.endswith(".md") else path
    slug = re.sub(r"[\s_]+", "-", noext.lower())
    return (
        template.removesuffix("#{anchor}")
        .replace("{path_noext}", quote(noext))
        .replace("{slug}", quote(slug))
        .replace("{path}", quote(path))
    )


def link_templates(setting: str, base_url: str | None) -> dict[str, str]:
    """RUNBOOK_LINK_TEMPLATE (`[SOURCE=]TEMPLATE`, comma separated) by source name; the key
    "" is the template of every source without one of its own (RUNBOOK_BASE_URL/{path}
    when no entry gives one)."""
    templates: dict[str, str] = {}
    for entry in filter(None, (e.strip() for e in setting.split(","))):
        source, template = split_name(entry)
        if not any(p in template for p in _PLACEHOLDERS):
            raise ConfigError(
                f"RUNBOOK_LINK_TEMPLATE entry {entry!r} has no {{path}}, {{path_noext}} or "
                "{slug}: write where a runbook is read, e.g. "
                "https://docs.example.com/runbooks/{path_noext}/#{anchor}"
            )
        if "{anchor}" in template.removesuffix("#{anchor}"):
            raise ConfigError(
                f"RUNBOOK_LINK_TEMPLATE entry {entry!r}: {{anchor}} goes at the very end, "
                "after #"
            )
        templates[source or ""] = template
    if "" not in templates and base_url:
        templates[""] = base_url.rstrip("/") + "/{path}"
    return templates


def host_kinds(setting: str) -> dict[str, Kind]:
    """RUNBOOK_GIT_WEB (`[HOST=]KIND`, comma separated): the kind of each git host name;
    a kind without a host is that of every host."""
    kinds: dict[str, Kind] = {}
    for entry in filter(None, (e.strip() for e in setting.split(","))):
        host, _, kind = entry.rpartition("=")
        if kind not in KINDS:
            raise ConfigError(
                f"RUNBOOK_GIT_WEB entry {entry!r}: the kind is one of {', '.join(KINDS)}, "
                "as HOST=KIND (git.acme.internal=gitea) or KIND for every host"
            )
        kinds[host.strip().lower()] = kind
    return kinds
