"""The processes of a chaos run: the enricher as a restartable subprocess, the fake Slack, the
runbook index, and the settings they share (tokens, channel, environment)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO, get_args

import httpx

from scripts.benchlib import rss_kb
from scripts.local_redis import RedisServer, free_port

REPO = Path(__file__).resolve().parents[2]
RUNBOOKS = REPO / "golden" / "runbooks"
SLACK_TOKEN = "xoxb-test"
CHANNEL = "C1"
AM_TOKEN = "chaos-am-token"
PD_SECRET = "chaos-pd-secret"


def wait_until(
    predicate: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.1
) -> None:
    """Poll `predicate()` until true; the timeout only bounds a hang."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def start_fake_slack(
    rate_429: float = 0.0, rate_500: float = 0.0, seed: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m tests.fakeslack` as a subprocess; returns it and its base URL."""
    argv = [sys.executable, "-m", "tests.fakeslack", "--port", "0", "--token", SLACK_TOKEN,
            "--rate-429", str(rate_429), "--rate-500", str(rate_500)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url.startswith("http"):
        proc.kill()
        raise RuntimeError(f"fake Slack did not start (printed {url!r})")
    return proc, url


def base_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(HF_HUB_OFFLINE="1", MODELS_DIR=str(REPO / "models"), PYTHONUNBUFFERED="1")
    env.update(values)
    return env


def index_runbooks(qdrant_path: Path, redis_url: str, log: TextIO) -> None:
    env = base_env(QDRANT_PATH=str(qdrant_path), REDIS_URL=redis_url)
    subprocess.run(
        [sys.executable, "-m", "ingest", "--root", str(RUNBOOKS), "--no-git"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True,
    )


@dataclass
class Enricher:
    """`python -m enricher` as a subprocess; restartable with the same settings.

    Its stdout and stderr (the log) go to `log_path`, unless `stdout_path` is given: console
    mode prints its messages on stdout, and a test reads them there."""

    env: dict[str, str]
    log_path: Path
    stdout_path: Path | None = None
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        if self.proc is None:
            raise RuntimeError("the enricher is not running")
        return self.proc.pid

    def start(self, timeout_s: float = 120) -> None:
        env = {**self.env, "HOST": "127.0.0.1", "PORT": str(self.port)}
        out_path = self.stdout_path or self.log_path
        with self.log_path.open("ab") as log, out_path.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "enricher"], cwd=REPO, env=env, stdout=out, stderr=log,
            )
        wait_until(self._ready, timeout_s, f"the enricher on port {self.port} to be ready")

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the enricher exited with {self.proc.returncode}:\n{tail}")
        try:
            return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def terminate(self, timeout_s: float = 60) -> int:
        """SIGTERM and wait; returns the exit code (negative: killed by that signal)."""
        if self.proc is None:
            raise RuntimeError("the enricher is not running")
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        self.proc = None
        return code

    def stop(self) -> None:
        """Best-effort cleanup: SIGTERM, then SIGKILL."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def metric(self, name: str) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        return float(match.group(1)) if match else 0.0

    def rss_kb(self) -> int:
        return rss_kb(self.pid)


DeliveryMode = Literal["bot", "webhook", "console"]
DELIVERY_MODES: tuple[DeliveryMode, ...] = get_args(DeliveryMode)


def stop_all(
    enricher: Enricher | None, slack: subprocess.Popen[bytes] | None, redis: RedisServer
) -> None:
    """Stop what a run started, the enricher first, whatever it got to."""
    if enricher is not None:
        enricher.stop()
    if slack is not None:
        slack.terminate()
        slack.wait()
    redis.stop()


def webhook_url(slack_url: str) -> str:
    """The fake Slack's incoming webhook, next to its Web API at `slack_url`."""
    return slack_url.removesuffix("/api/") + "/webhook/incoming"


def enricher_env(
    *, qdrant_path: Path, redis_url: str, slack_url: str, worker_id: str,
    delivery: DeliveryMode = "bot", **extra: str
) -> dict[str, str]:
    """Settings of an enricher that delivers through the fake Slack at `slack_url`: its Web
    API with a bot token, its incoming webhook, or (console) not at all: to stdout."""
    slack = {
        "bot": {"SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_CHANNEL": CHANNEL,
                "SLACK_API_URL": slack_url},
        "webhook": {"SLACK_WEBHOOK_URL": webhook_url(slack_url)},
        "console": {},
    }[delivery]
    return base_env(
        QDRANT_PATH=str(qdrant_path),
        REDIS_URL=redis_url,
        WORKER_ID=worker_id,
        ALERTMANAGER_BEARER_TOKENS=AM_TOKEN,
        PAGERDUTY_SIGNING_SECRETS=PD_SECRET,
        **slack,
        **extra,
    )
