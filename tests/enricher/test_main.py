"""`python -m enricher` stopped from the terminal: Ctrl-C once or twice is a clean exit."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from scripts.chaos.harness import Enricher, enricher_env
from scripts.index_copy import copy_index


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_exits_cleanly(
    tmp_path: Path, golden_index: Path, redis_url: str, presses: int
) -> None:
    """SIGINT (twice: the impatient newcomer) ends the process with status 0 and no
    KeyboardInterrupt traceback."""
    copy_index(golden_index, tmp_path / "qdrant")
    env = enricher_env(qdrant_path=tmp_path / "qdrant", redis_url=redis_url,
                       slack_url="", worker_id="ctrl-c", delivery="console")
    enricher = Enricher(env, tmp_path / "enricher.log")
    enricher.start()
    assert enricher.proc is not None
    for _ in range(presses):
        enricher.proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
    code = enricher.proc.wait(timeout=60)
    log = enricher.log_path.read_text(errors="replace")
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log[-3000:]
    assert code == 0
