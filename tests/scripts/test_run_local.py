"""`make run` and `make stop` from a newcomer's terminal (scripts/run_local.sh)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from scripts.chaos.harness import REPO, base_env
from scripts.local_redis import free_port
from tests.conftest import wait_for

RUNBOOK = "# DiskFull\n\n## Mitigation\n\nDelete old logs under /var/log and rotate them.\n"


@pytest.fixture()
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """What `make run` would use, every path and port of its own."""
    (tmp_path / "runbooks" / "disk").mkdir(parents=True)
    (tmp_path / "runbooks" / "disk" / "DiskFull.md").write_text(RUNBOOK)
    values = base_env(
        RUN_DIR=str(tmp_path / "run"),
        REDIS_PORT=str(free_port()),
        PORT=str(free_port()),
        QDRANT_PATH=str(tmp_path / "qdrant"),
        RUNBOOK_ROOTS=str(tmp_path / "runbooks"),
        SYNC_USE_GIT="false",
    )
    yield values
    stop(values)


def stop(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-s", "stop"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_make_stop_stops_the_service_and_redis(env: dict[str, str], tmp_path: Path) -> None:
    """The service that run_local.sh started exits (0, drained), and so does its Redis."""
    with (tmp_path / "run.log").open("w") as log:
        service = subprocess.Popen(
            ["bash", "scripts/run_local.sh"], cwd=REPO, env=env, stdout=log, stderr=log
        )
    url = f"http://127.0.0.1:{env['PORT']}/healthz"

    def up() -> bool:
        assert service.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
        try:
            return httpx.get(url, timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(up, timeout_s=120, what="the service make run started")
    done = stop(env)
    assert service.wait(timeout=60) == 0
    ping = subprocess.run(
        ["redis-cli", "-p", env["REDIS_PORT"], "ping"], capture_output=True, text=True
    )
    assert "PONG" not in ping.stdout
    assert "stop: stopped the service" in done.stderr
    assert "stop: stopped redis-server" in done.stderr


def test_a_misspelt_models_dir_is_one_sentence(env: dict[str, str], tmp_path: Path) -> None:
    """MODELS_DIR=modles: exit 2 and the sentence that names it; nothing is built there."""
    misspelt = tmp_path / "modles"
    done = subprocess.run(
        ["bash", "scripts/run_local.sh"],
        cwd=REPO,
        env={**env, "MODELS_DIR": str(misspelt)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("enricher: cannot start: ") and "modles" in last
    assert not misspelt.exists()


def test_make_stop_after_the_service_is_gone_is_quiet(env: dict[str, str]) -> None:
    """A pid file left by a service that already exited: no shell error, the file is removed.

    The pid of a process that has exited and been reaped has no /proc entry, the case
    where the cmdline check once printed "No such file or directory".
    """
    gone = subprocess.Popen(["true"])
    gone.wait()
    pidfile = Path(env["RUN_DIR"]) / "enricher.pid"
    pidfile.parent.mkdir(parents=True)
    pidfile.write_text(f"{gone.pid}\n")
    done = stop(env)
    assert done.returncode == 0
    assert "No such file" not in done.stderr and "stop: stopped the service" not in done.stderr
    assert not pidfile.exists()
