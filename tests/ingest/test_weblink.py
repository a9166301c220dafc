"""Where runbooks are read: blob URLs on their git host (any host, of the kind
RUNBOOK_GIT_WEB names), and link templates of rendered sites."""

from __future__ import annotations

import pytest

from enricher.errors import ConfigError
from ingest.weblink import blob_template, fill, host_kinds, link_templates


class TestBlobBase:
    @pytest.mark.parametrize(
        ("remote", "ref", "prefix", "expected"),
        [
            (
                "git@github.com:acme/runbooks.git",
                "main",
                "",
                "https://github.com/acme/runbooks/blob/main/{path}",
            ),
            (
                "https://github.com/acme/runbooks",
                "main",
                "docs/rb/",
                "https://github.com/acme/runbooks/blob/main/docs/rb/{path}",
            ),
            (
                "https://user@github.com/acme/runbooks.git/",
                "v1.2",
                "",
                "https://github.com/acme/runbooks/blob/v1.2/{path}",
            ),
            (
                "ssh://git@gitlab.example.com:2222/ops/sre/runbooks.git",
                "main",
                "rb",
                "https://gitlab.example.com/ops/sre/runbooks/-/blob/main/rb/{path}",
            ),
            (
                "git@gitlab.com:ops/runbooks.git",
                "feature/x",
                "",
                "https://gitlab.com/ops/runbooks/-/blob/feature%2Fx/{path}",
            ),
            (
                "git@github.com:acme/runbooks.git",
                "main",
                "a b/",
                "https://github.com/acme/runbooks/blob/main/a%20b/{path}",
            ),
        ],
    )
    def test_github_and_gitlab(self, remote: str, ref: str, prefix: str, expected: str) -> None:
        assert blob_template(remote, ref, prefix) == expected

    @pytest.mark.parametrize(
        ("remote", "ref"),
        [
            ("git@git.acme.internal:acme/runbooks.git", "main"),  # a host of no known kind
            ("/srv/git/runbooks.git", "main"),  # a local path
            ("https://github.com/runbooks", "main"),  # no owner
            ("git@github.com:acme/runbooks.git", ""),  # no ref
            ("", "main"),
        ],
    )
    def test_no_link_rather_than_a_guess(self, remote: str, ref: str) -> None:
        assert blob_template(remote, ref, "") is None

    @pytest.mark.parametrize(
        ("remote", "kinds", "expected"),
        [
            ("git@bitbucket.org:acme/ops.git", "",
             "https://bitbucket.org/acme/ops/src/main/rb/{path}"),
            ("https://code.acme.com/scm/OPS/runbooks.git", "code.acme.com=bitbucket-server",
             "https://code.acme.com/projects/OPS/repos/runbooks/browse/rb/{path}?at=main"),
            ("git@git.acme.internal:sre/runbooks.git", "git.acme.internal=gitea",
             "https://git.acme.internal/sre/runbooks/src/branch/main/rb/{path}"),
            ("https://acme@dev.azure.com/acme/Ops/_git/runbooks", "",
             "https://dev.azure.com/acme/Ops/_git/runbooks?path=/rb/{path}&version=GBmain"),
            ("git@ssh.dev.azure.com:v3/acme/Ops/runbooks", "",
             "https://dev.azure.com/acme/Ops/_git/runbooks?path=/rb/{path}&version=GBmain"),
            ("https://src.acme.com/sre/runbooks.git", "gitlab",
             "https://src.acme.com/sre/runbooks/-/blob/main/rb/{path}"),
            ("https://ghe.acme.com/sre/runbooks.git", "ghe.acme.com=github",
             "https://ghe.acme.com/sre/runbooks/blob/main/rb/{path}"),
        ],
    )
    def test_any_host_of_a_named_kind(self, remote: str, kinds: str, expected: str) -> None:
        assert blob_template(remote, "main", "rb", host_kinds(kinds)) == expected

    def test_an_unknown_kind_is_a_config_error(self) -> None:
        with pytest.raises(ConfigError, match="bitbucket-server, gitea, azure"):
            host_kinds("git.acme.internal=forgejo")


class TestLinkTemplates:
    @pytest.mark.parametrize(
        ("template", "expected"),
        [
            ("https://docs.acme.com/runbooks/{path_noext}/#{anchor}",  # MkDocs, TechDocs
             "https://docs.acme.com/runbooks/postgres/Postgres_Disk%20Full/"),
            ("https://acme.com/docs/{path_noext}",  # Docusaurus
             "https://acme.com/docs/postgres/Postgres_Disk%20Full"),
            ("https://hugo.acme.com/{slug}/", "https://hugo.acme.com/postgres/postgres-disk-full/"),
            ("https://raw.acme.com/{path}", "https://raw.acme.com/postgres/Postgres_Disk%20Full.md"),
        ],
    )
    def test_a_template_is_filled_per_document(self, template: str, expected: str) -> None:
        assert fill(template, "postgres/Postgres_Disk Full.md") == expected

    def test_per_source_templates_and_the_base_url_for_the_rest(self) -> None:
        got = link_templates("ops=https://ops.acme.com/{path_noext}/", "https://rb.acme.com/")
        assert got == {"ops": "https://ops.acme.com/{path_noext}/",
                       "": "https://rb.acme.com/{path}"}
        with pytest.raises(ConfigError, match="has no"):
            link_templates("https://docs.acme.com/", None)
        with pytest.raises(ConfigError, match="at the very end"):
            link_templates("https://d.acme.com/{path}?a={anchor}", None)
