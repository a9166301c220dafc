"""Copy a QDRANT_PATH folder for a benchmark, a chaos run or a test, keeping its holes.

The engines' segment files are sparse: the golden index holds about 5 MB of data in
230 MB of file length. `shutil.copytree` writes every hole out, and a run that copies an
index per replica or per test can fill a small disk. GNU cp skips the holes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def copy_index(source: Path, target: Path) -> None:
    """Copy the folder `source` to `target` (which must not exist yet), sparse files sparse."""
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-R", "--sparse=always", str(source), str(target)], check=True)
