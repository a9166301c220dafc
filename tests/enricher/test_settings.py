"""A bad setting stops `python -m enricher` before anything starts: exit status 2 and one
sentence that names the setting and says what to fix, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from enricher.errors import ConfigError
from enricher.settings import load_settings
from scripts.chaos.harness import REPO, base_env
from scripts.local_redis import free_port


@pytest.fixture()
def busy_port() -> Iterator[int]:
    """A port another process listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m enricher` with good settings but those in `env`."""
    good = {
        "QDRANT_PATH": str(tmp_path / "qdrant"),
        # Never reached: every case here must stop before Redis is used.
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "ALLOW_UNAUTHENTICATED": "true",
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
    }
    return subprocess.run(
        [sys.executable, "-m", "enricher"],
        cwd=REPO,
        env=base_env(**{**good, **env}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def sentence(done: subprocess.CompletedProcess[str]) -> str:
    """The line for people; the lines before it are the JSON log events."""
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "service.started" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("enricher: cannot start: ")
    return last


class TestBadSettingsExitTwo:
    @pytest.mark.parametrize(
        ("env", "named", "fix"),
        [
            ({"LOG_LEVEL": "LOUD"}, "LOG_LEVEL='LOUD'", "set one of DEBUG, INFO"),
            ({"PORT": "99999"}, "PORT='99999'", "from 1 to 65535"),
            ({"REDIS_URL": "notaurl"}, "REDIS_URL", "write it as redis://"),
            ({"QDRANT_PATH": "/proc/x"}, "QDRANT_PATH='/proc/x'", "directory this user can"),
            ({"MAX_CONNECTIONS": str(10**9)}, "MAX_CONNECTIONS=", "lower MAX_CONNECTIONS"),
            ({"REDIS_SENTINELS": "127.0.0.1:26379"}, "REDIS_SENTINEL_MASTER",
             "set it to the name the Sentinels monitor"),
            ({"REDIS_SENTINELS": "127.0.0.1", "REDIS_SENTINEL_MASTER": "rbe"},
             "REDIS_SENTINELS='127.0.0.1'", "list the Sentinels as host:port"),
            ({"SLACK_WEBHOOK_URL": "notaurl"}, "SLACK_WEBHOOK_URL",
             "set it to the incoming webhook's https:// address"),
            ({"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL",
             "set it to the Web API's base address"),
        ],
        ids=["log-level", "port-range", "redis-url", "qdrant-path-proc", "max-connections",
             "sentinel-without-master", "sentinel-without-port", "slack-webhook-url",
             "slack-api-url"],
    )
    def test_one_sentence_names_the_setting(
        self, tmp_path: Path, env: dict[str, str], named: str, fix: str
    ) -> None:
        """Each gets exit status 2 and one line naming it and the fix."""
        last = sentence(start(tmp_path, **env))
        assert named in last and fix in last

    def test_qdrant_path_through_a_file(self, tmp_path: Path) -> None:
        """A QDRANT_PATH under a regular file says so, in the same form."""
        (tmp_path / "file").write_text("")
        last = sentence(start(tmp_path, QDRANT_PATH=str(tmp_path / "file" / "x")))
        assert "QDRANT_PATH=" in last and "Not a directory" in last

    def test_port_in_use_fails_before_the_workers_start(
        self, tmp_path: Path, busy_port: int
    ) -> None:
        """The listening socket is bound before the service is built, so a port in use is a
        sentence, not a traceback from uvicorn after the workers started."""
        last = sentence(start(tmp_path, PORT=str(busy_port)))
        assert f"PORT={busy_port}" in last and "in use" in last


ENTRY_POINTS = [
    ["ingest", "--root", "golden/runbooks"],
    ["enricher.search", "--payload", "golden/samples/pagerduty-incident.json"],
    ["enricher.audit", "golden/rules"],
    ["enricher.gaps"],
    ["enricher.feedback", "tallies"],
    ["scripts.demo"],
]


@pytest.mark.parametrize("argv", ENTRY_POINTS, ids=lambda argv: argv[0])
def test_every_entry_point_says_one_sentence(tmp_path: Path, argv: list[str]) -> None:
    """The command lines and `make demo` refuse a bad setting as the service does: exit
    status 2 and one line naming it, no traceback."""
    done = subprocess.run(
        [sys.executable, "-m", *argv], cwd=REPO, env=base_env(DEDUP_TTL_S="5"),
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "DEDUP_TTL_S='5'" in done.stderr.strip().splitlines()[-1]


class TestValidation:
    def test_log_level_in_any_case(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """`debug` is read as DEBUG, which both structlog and uvicorn take."""
        monkeypatch.setenv("LOG_LEVEL", "debug")
        assert load_settings().log_level == "DEBUG"

    def test_redis_url_problem_hides_the_url(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A REDIS_URL may hold a password: the message names it without echoing it."""
        monkeypatch.setenv("REDIS_URL", "redis://:hunter2@cache:port/0")
        with pytest.raises(ConfigError) as caught:
            load_settings()
        assert "REDIS_URL" in str(caught.value)
        assert "hunter2" not in str(caught.value)

    def test_slack_api_url_gets_its_trailing_slash(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """slack-sdk joins the method onto the base URL: without the slash it would call
        https://slack.com/chat.postMessage."""
        monkeypatch.setenv("SLACK_API_URL", "https://slack.example/api")
        assert load_settings().slack_api_url == "https://slack.example/api/"

    @pytest.mark.parametrize(
        "url", ["redis://localhost:6379/0", "rediss://:pw@cache:6380/2", "unix:///run/r.sock"]
    )
    def test_redis_urls_redis_reads_pass(self, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
        monkeypatch.setenv("REDIS_URL", url)
        assert load_settings().redis_url == url
