"""Heading anchors per host: GitHub, GitLab, and static sites (Hugo, Docusaurus)."""

from __future__ import annotations

import pytest

from ingest.anchors import DEFAULT_STYLE, Style, anchors, heading_text, slug, style_for


@pytest.mark.parametrize(
    ("heading", "style", "anchor"),
    [
        # GitHub: lower-case, punctuation except "-" and "_" dropped, each space a "-".
        ("Scale up", "github", "scale-up"),
        ("Restart the pods (fast!)", "github", "restart-the-pods-fast"),
        ("Use `kubectl rollout`", "github", "use-kubectl-rollout"),
        ("TLS/SSL: what's wrong?", "github", "tlsssl-whats-wrong"),
        ("pg_basebackup & friends", "github", "pg_basebackup--friends"),
        ("Step 2 - rebuild", "github", "step-2---rebuild"),
        ("See [the wiki](https://wiki/x)", "github", "see-the-wiki"),
        ("Überprüfen", "github", "überprüfen"),
        ("KubePodCrashLooping", "github", "kubepodcrashlooping"),
        ("Scale up {#scale}", "github", "scale-up-scale"),
        # GitLab: the same, but a run of hyphens becomes one.
        ("Step 2 - rebuild", "gitlab", "step-2-rebuild"),
        ("pg_basebackup & friends", "gitlab", "pg_basebackup-friends"),
        ("etcdNoLeader", "gitlab", "etcdnoleader"),
        ("Scale up {#scale}", "gitlab", "scale-up-scale"),
        # Hugo and Docusaurus: an explicit id wins, else GitHub's slug.
        ("Scale up {#scale}", "site", "scale"),
        ("etcdNoLeader {#etcd-no-leader}", "site", "etcd-no-leader"),
        ("Step 2 - rebuild", "site", "step-2---rebuild"),
        ("Mid {#not-at-end} text", "site", "mid-not-at-end-text"),
    ],
)
def test_slug(heading: str, style: Style, anchor: str) -> None:
    assert slug(heading, style) == anchor


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("github", ["steps", "a", "steps-1", "steps-2"]),
        ("gitlab", ["steps", "a", "steps-1", "steps-2"]),
        ("site", ["steps", "a", "steps-1", "steps-2"]),
    ],
)
def test_repeats_are_numbered_in_page_order(style: Style, expected: list[str]) -> None:
    assert anchors(["Steps", "A", "Steps", "Steps"], style) == expected


def test_an_explicit_id_repeated_is_numbered_too() -> None:
    assert anchors(["One {#x}", "Two {#x}"], "site") == ["x", "x-1"]


@pytest.mark.parametrize(
    ("heading", "style", "shown"),
    [
        ("Scale up {#scale}", "site", "Scale up"),
        ("Scale up {#scale}", "github", "Scale up {#scale}"),
        ("Scale up {#scale}", "gitlab", "Scale up {#scale}"),
        ("Scale up", "site", "Scale up"),
    ],
)
def test_a_site_hides_the_explicit_id(heading: str, style: Style, shown: str) -> None:
    assert heading_text(heading, style) == shown


@pytest.mark.parametrize(
    ("url", "style"),
    [
        ("https://github.com/acme/runbooks/blob/main/ops/a.md", "github"),
        ("https://github.example.com/acme/runbooks/blob/main/a.md", "github"),
        ("https://gitlab.com/acme/runbooks/-/blob/main/a.md", "gitlab"),
        ("https://gitlab.internal/acme/runbooks/-/blob/main/a.md", "gitlab"),
        ("https://docs.example.com/runbooks/a", DEFAULT_STYLE),
        (None, DEFAULT_STYLE),
        ("", DEFAULT_STYLE),
    ],
)
def test_style_follows_the_web_link_host(url: str | None, style: Style) -> None:
    assert style_for(url) == style


def test_a_host_named_by_runbook_git_web_takes_its_kinds_anchors() -> None:
    """A self-hosted GitLab under another name collapses hyphens like gitlab.com."""
    kinds = {"code.acme.com": "gitlab", "git.acme.internal": "gitea"}
    assert style_for("https://code.acme.com/sre/rb/-/blob/main/a.md", kinds) == "gitlab"
    assert style_for("https://git.acme.internal/sre/rb/src/branch/main/a.md", kinds) == (
        DEFAULT_STYLE
    )
