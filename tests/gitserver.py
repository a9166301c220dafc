"""A real git server on loopback for tests: `git http-backend` behind a small HTTP server.

It serves the bare repositories under one folder over smart HTTP (clone, fetch, partial
clone), and can demand a token as the password of HTTP basic auth, as GitHub and GitLab do.
The token can be changed while it runs (a revoked or rotated token). Repositories are made
and pushed to with the `git` command, as a team would.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

AUTHOR_DATE = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
#: What a test server demands as the password of HTTP basic auth, unless told otherwise.
TEAM_TOKEN = "glpat-team-token-1234"


def git(cwd: Path, *args: str, when: datetime = AUTHOR_DATE) -> str:
    """git with a fixed identity and dates, independent of the user's configuration."""
    stamp = when.isoformat()
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Runbook Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Runbook Author",
        "GIT_COMMITTER_EMAIL": "author@example.com",
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
    }
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], env=env, capture_output=True, check=True, timeout=60
    )
    return done.stdout.decode().strip()


class TeamRepo:
    """A bare repository on the server and a team member's clone of it that pushes."""

    def __init__(self, base: Path, name: str = "runbooks") -> None:
        self.bare = base / f"{name}.git"
        self.work = base.parent / f"{name}-work"
        self.bare.mkdir(parents=True)
        git(self.bare, "init", "-q", "--bare", "--initial-branch=main")
        # What GitHub and GitLab allow: partial clone, and fetching a blob a partial clone lacks.
        git(self.bare, "config", "uploadpack.allowFilter", "true")
        git(self.bare, "config", "uploadpack.allowAnySHA1InWant", "true")
        git(self.bare, "config", "http.receivepack", "true")
        self.work.mkdir()
        git(self.work, "init", "-q", "--initial-branch=main")
        git(self.work, "remote", "add", "origin", str(self.bare))

    def write(self, rel: str, text: str) -> None:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def remove(self, rel: str) -> None:
        (self.work / rel).unlink()

    def commit_and_push(
        self, message: str, *, when: datetime = AUTHOR_DATE, force: bool = False, ref: str = "main"
    ) -> str:
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "--allow-empty", "-m", message, when=when)
        git(self.work, "push", "-q", *(["--force"] if force else []), "origin", f"HEAD:{ref}")
        return git(self.work, "rev-parse", "HEAD")


class GitHttpServer:
    def __init__(self, base: Path, token: str | None = None) -> None:
        self.base = base
        self.token = token
        self.requests = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, repo: str = "runbooks") -> str:
        return f"http://127.0.0.1:{self.port}/{repo}.git"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def _authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            pair = base64.b64decode(header.removeprefix("Basic ")).decode()
        except ValueError:
            return False
        return pair.partition(":")[2] == self.token

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._cgi()

            def do_POST(self) -> None:
                self._cgi()

            def _cgi(self) -> None:
                server.requests += 1
                if not server._authorized(self.headers.get("Authorization")):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": str(server.base),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": parts.path,
                    "QUERY_STRING": parts.query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_ADDR": "127.0.0.1",
                    "REMOTE_USER": "team",
                    "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                    "GIT_CONFIG_NOSYSTEM": "1",
                    "GIT_CONFIG_GLOBAL": os.devnull,
                }
                done = subprocess.run(
                    ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60
                )
                out = done.stdout
                head, _, payload = out.partition(b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n")
                status, headers = 200, []
                for line in head.decode("latin-1").splitlines():
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@contextmanager
def git_server(base: Path, token: str | None = None) -> Iterator[GitHttpServer]:
    server = GitHttpServer(base, token)
    server.start()
    try:
        yield server
    finally:
        server.stop()
