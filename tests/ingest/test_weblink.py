"""Blob URLs of runbooks on their git host, from the origin remote."""

from __future__ import annotations

import pytest

from ingest.weblink import blob_base


class TestBlobBase:
    @pytest.mark.parametrize(
        ("remote", "ref", "prefix", "expected"),
        [
            (
                "git@github.com:acme/runbooks.git",
                "main",
                "",
                "https://github.com/acme/runbooks/blob/main",
            ),
            (
                "https://github.com/acme/runbooks",
                "main",
                "docs/rb/",
                "https://github.com/acme/runbooks/blob/main/docs/rb",
            ),
            (
                "https://user@github.com/acme/runbooks.git/",
                "v1.2",
                "",
                "https://github.com/acme/runbooks/blob/v1.2",
            ),
            (
                "ssh://git@gitlab.example.com:2222/ops/sre/runbooks.git",
                "main",
                "rb",
                "https://gitlab.example.com/ops/sre/runbooks/-/blob/main/rb",
            ),
            (
                "git@gitlab.com:ops/runbooks.git",
                "feature/x",
                "",
                "https://gitlab.com/ops/runbooks/-/blob/feature%2Fx",
            ),
            (
                "git@github.com:acme/runbooks.git",
                "main",
                "a b/",
                "https://github.com/acme/runbooks/blob/main/a%20b",
            ),
        ],
    )
    def test_github_and_gitlab(self, remote: str, ref: str, prefix: str, expected: str) -> None:
        assert blob_base(remote, ref, prefix) == expected

    @pytest.mark.parametrize(
        ("remote", "ref"),
        [
            ("git@bitbucket.org:acme/runbooks.git", "main"),  # a host we cannot name
            ("/srv/git/runbooks.git", "main"),  # a local path
            ("https://github.com/runbooks", "main"),  # no owner
            ("git@github.com:acme/runbooks.git", ""),  # no ref
            ("", "main"),
        ],
    )
    def test_no_link_rather_than_a_guess(self, remote: str, ref: str) -> None:
        assert blob_base(remote, ref, "") is None
