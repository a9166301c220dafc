"""What the idle service keeps resident (issue 18: 850 MB): embedding a sync's batches does not
leave onnxruntime's arena holding their high-water mark, and the default engine does not
import qdrant-client. Each check runs in a fresh interpreter, so nothing else loaded here
counts."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import MODELS_DIR, REPO

#: Embedding 128 runbook chunks (256 tokens) in batches of 32 left a process about 500 MB
#: bigger with onnxruntime's arena, 100-350 MB without it (what glibc kept of the freed
#: activations), and under 10 MB once glibc gives large blocks back.
GROWTH_MAX_MB = 150

EMBED_BATCHES = f"""
from pathlib import Path
from enricher.index.embedding import Embedder
from enricher.settings import Settings
from scripts.benchlib import rss_kb

def rss_mb():
    return rss_kb() // 1024

embedder = Embedder(Settings(models_dir=Path({str(MODELS_DIR)!r})))
embedder.dense_query("warm up")
before = rss_mb()
texts = [p.read_text() for p in sorted(Path("golden/runbooks").glob("*/*.md"))]
chunks = [t[i : i + 1400] for t in texts for i in range(0, len(t), 1400)][:128]
embedder.dense(chunks, batch_size=32)
embedder.dense_query("after")
print(rss_mb() - before)
"""


def run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


class TestResident:
    def test_embedding_batches_gives_the_memory_back(self) -> None:
        """After a sync's batches, the process is not left holding their memory."""
        assert int(run(EMBED_BATCHES)) < GROWTH_MAX_MB

    def test_the_service_does_not_import_qdrant_client(self) -> None:
        """qdrant-client (about 44 MB) is for a Qdrant server; the embedded engine is edge."""
        out = run("import sys, enricher.app, enricher.service, enricher.__main__; "
                  "print('qdrant_client' in sys.modules)")
        assert out == "False"
