"""The service under uvicorn in a thread, and the burst client that runs in a child process
(so its threads do not share the server's GIL)."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from scripts.local_redis import free_port


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise SystemExit("the service did not start under uvicorn")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=120)


def burst_client(url: str, bodies_file: Path, threads: int) -> dict[str, Any]:
    """Run in a child process: POST every body as fast as `threads` clients can."""
    bodies = [b.encode() for b in json.loads(bodies_file.read_text())]
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def worker(share: list[bytes]) -> None:
        with httpx.Client(timeout=30) as client:
            barrier.wait()
            for body in share:
                started = time.perf_counter()
                response = client.post(url, content=body,
                                       headers={"Content-Type": "application/json"})
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    statuses[response.status_code] += 1

    pool = [threading.Thread(target=worker, args=(bodies[i::threads],)) for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    started_at = time.time()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    return {"latencies": latencies, "statuses": dict(statuses), "started_at": started_at,
            "wall_s": time.perf_counter() - started}
