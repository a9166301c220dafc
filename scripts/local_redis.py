"""A private redis-server on 127.0.0.1 for the demo, the benchmarks, the chaos run and the tests.

Each caller gets its own process on a free port and its own data dir, so nothing touches a
Redis the user may be running. `durable=True` asks for what production should run (AOF,
fsync on every write) where a test kills the server and counts what survived.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

START_TIMEOUT_S = 10.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """`start()`, `stop()` and `kill()` can be called again: tests use them for outages."""

    def __init__(
        self,
        workdir: Path,
        *,
        port: int | None = None,
        durable: bool = False,
        replica_of: int | None = None,
    ) -> None:
        self.workdir = workdir
        self.port = port or free_port()
        self.durable = durable
        #: The port of the primary on 127.0.0.1 this server replicates (scripts.local_sentinel).
        self.replica_of = replica_of
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: run `make setup`")
        options = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else [
            "--appendonly",
            "no",
        ]
        if self.replica_of is not None:
            options += ["--replicaof", "127.0.0.1", str(self.replica_of)]
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             *options, "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        with redis.Redis.from_url(self.url, socket_timeout=1) as client:
            while True:
                try:
                    client.ping()
                    return
                except redis.ConnectionError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        self.kill()
                        raise RuntimeError(
                            f"redis-server did not come up on port {self.port} within "
                            f"{START_TIMEOUT_S:.0f} s"
                        ) from None
                    time.sleep(0.02)

    def flush(self) -> None:
        with redis.Redis.from_url(self.url) as client:
            client.flushall()

    def stop(self) -> None:
        """SIGTERM and wait: a clean shutdown."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def kill(self) -> None:
        """SIGKILL and wait: an outage."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@contextmanager
def running_redis(workdir: Path, *, durable: bool = False) -> Iterator[RedisServer]:
    server = RedisServer(workdir, durable=durable)
    server.start()
    try:
        yield server
    finally:
        server.stop()
