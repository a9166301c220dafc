"""What the benchmarks share: where the repo and models are, the machine they ran on, process
probes, latency distributions, and how results are printed and emitted."""

from __future__ import annotations

import importlib.metadata
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MODELS_DIR = Path(os.environ.get("MODELS_DIR", REPO / "models"))


def emit(result: dict[str, Any], out: Path | None, failures: Sequence[str]) -> int:
    """The JSON line on stdout (and in `out`), failures on stderr; the exit status."""
    line = json.dumps(result, sort_keys=True)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(line + "\n")
    print(line)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


def peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def rss_kb(pid: int | str = "self") -> int:
    """A process's resident set now (VmRSS, KiB; 0 when the kernel shows none), where
    `peak_rss_mb` is this process's high-water mark."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match.group(1)) if match else 0


def cpu_seconds() -> float:
    """CPU time of this process, all threads: divided by wall time it shows how much of
    the machine the benchmark actually got (2.0 = both cores of a quiet 2-core machine)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def dist(values: Sequence[float]) -> dict[str, float]:
    """p50/p99/max/mean in milliseconds."""
    if not values:
        return {"p50": 0.0, "p99": 0.0, "max": 0.0, "mean": 0.0}
    return {"p50": ms(percentile(values, 50)), "p99": ms(percentile(values, 99)),
            "max": ms(max(values)), "mean": ms(sum(values) / len(values))}


def machine() -> dict[str, Any]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as info:
        mem_kib = int(next(line for line in info if line.startswith("MemTotal")).split()[1])
    versions = {
        name: importlib.metadata.version(name)
        for name in ("qdrant-client", "fastembed", "onnxruntime", "numpy", "redis", "uvicorn")
    }
    return {
        "date": datetime.now(UTC).date().isoformat(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(mem_kib / 1024**2, 1),
        "python": platform.python_version(),
        "redis_server": _redis_version(),
        **versions,
    }


def _redis_version() -> str:
    out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout
    return next((p.split("=", 1)[1] for p in out.split() if p.startswith("v=")), "unknown")


def print_table(title: str, rows: Sequence[tuple[str, object]]) -> None:
    width = max(len(name) for name, _ in rows)
    print(f"\n{title}")
    print("-" * len(title))
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


def note(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)
