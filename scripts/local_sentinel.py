"""A private Redis Sentinel deployment on 127.0.0.1: one primary, its replicas and three
Sentinels, all Debian's `redis-server` (a Sentinel is `redis-server sentinel.conf --sentinel`).

For the failover test and `python -m scripts.chaos --redis-failover`. Every server writes
an AOF with fsync on every write, as production should, so what a failover loses is what
replication had not delivered, never what a disk had not kept. `kill_primary()` is a
`kill -9`; `wait_for_failover()` waits until the Sentinels name another server.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis

from scripts.local_redis import RedisServer, free_port

MASTER_NAME = "rbe"
#: The issue's setting: Sentinel calls the primary down after 5 s without an answer.
DOWN_AFTER_MS = 5000
START_TIMEOUT_S = 30.0


class SentinelCluster:
    def __init__(
        self,
        workdir: Path,
        *,
        replicas: int = 2,
        sentinels: int = 3,
        down_after_ms: int = DOWN_AFTER_MS,
    ) -> None:
        self.workdir = workdir
        self.down_after_ms = down_after_ms
        self.primary = RedisServer(self._dir("primary"), durable=True)
        self.replicas = [
            RedisServer(self._dir(f"replica-{n}"), durable=True, replica_of=self.primary.port)
            for n in range(replicas)
        ]
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        self.sentinel_procs: list[subprocess.Popen[bytes]] = []

    def _dir(self, name: str) -> Path:
        path = self.workdir / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def sentinels(self) -> str:
        """REDIS_SENTINELS for this deployment."""
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)

    @property
    def servers(self) -> list[RedisServer]:
        return [self.primary, *self.replicas]

    def start(self) -> None:
        for server in self.servers:
            server.start()
        binary = shutil.which("redis-server")
        assert binary is not None  # RedisServer.start checked
        quorum = len(self.sentinel_ports) // 2 + 1
        for number, port in enumerate(self.sentinel_ports):
            folder = self._dir(f"sentinel-{number}")
            conf = folder / "sentinel.conf"
            # Sentinel rewrites its own config file (the peers and replicas it found).
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.primary.port} {quorum}\n"
                f"sentinel down-after-milliseconds {MASTER_NAME} {self.down_after_ms}\n"
                f"sentinel failover-timeout {MASTER_NAME} {max(2 * self.down_after_ms, 10000)}\n"
                f"sentinel parallel-syncs {MASTER_NAME} 1\n"
            )
            self.sentinel_procs.append(subprocess.Popen(
                [binary, str(conf), "--sentinel"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        self._wait(self._settled, "the Sentinels to find each other and the replicas")

    def _wait(
        self, ready: Callable[[], bool], what: str, timeout_s: float = START_TIMEOUT_S
    ) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")
            time.sleep(0.1)

    def _settled(self) -> bool:
        """Every Sentinel sees the primary, every replica linked, and every other Sentinel."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(port=port, socket_timeout=1, decode_responses=True) as client:
                    state = client.sentinel_master(MASTER_NAME)
            except redis.RedisError:
                return False
            if int(state["num-slaves"]) < len(self.replicas):
                return False
            if int(state["num-other-sentinels"]) < len(self.sentinel_ports) - 1:
                return False
        for replica in self.replicas:
            with redis.Redis(port=replica.port, socket_timeout=1, decode_responses=True) as client:
                if client.info("replication").get("master_link_status") != "up":
                    return False
        return True

    def primary_port(self) -> int | None:
        """The port the Sentinels name as primary now (the first one that answers)."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(port=port, socket_timeout=1) as client:
                    found = client.sentinel_get_master_addr_by_name(MASTER_NAME)
            except redis.RedisError:
                continue
            if found:
                return int(found[1])
        return None

    def primary_url(self) -> str:
        port = self.primary_port()
        if port is None:
            raise RuntimeError("no Sentinel names a primary")
        return f"redis://127.0.0.1:{port}/0"

    def server(self, port: int) -> RedisServer:
        return next(s for s in self.servers if s.port == port)

    def kill_primary(self) -> int:
        """`kill -9` of the server the Sentinels name as primary; returns its port."""
        port = self.primary_port()
        assert port is not None
        self.server(port).kill()
        return port

    def wait_for_failover(self, old_port: int, timeout_s: float = 120) -> int:
        """Wait until the Sentinels name another primary and it takes writes; its port."""

        def promoted() -> bool:
            port = self.primary_port()
            if port is None or port == old_port:
                return False
            try:
                with redis.Redis(port=port, socket_timeout=1, decode_responses=True) as client:
                    return str(client.info("replication")["role"]) == "master"
            except redis.RedisError:
                return False

        self._wait(promoted, "Sentinel to promote a replica", timeout_s)
        port = self.primary_port()
        assert port is not None
        return port

    def stop(self) -> None:
        for proc in self.sentinel_procs:
            proc.kill()
            proc.wait()
        self.sentinel_procs = []
        for server in self.servers:
            server.kill()


__all__ = ["DOWN_AFTER_MS", "MASTER_NAME", "SentinelCluster"]
