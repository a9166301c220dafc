"""A runbook edit during the burst: the service syncs the corpus's folder itself
(RUNBOOK_ROOTS, enricher's ingest.periodic); one runbook gets a new section while the burst
runs, and this measures how long until the index the searcher reads holds it."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from enricher.index import schema
from enricher.index.engine import Equals, Filter, Index
from scripts.bench_enrich.corpus import write_pinned
from scripts.corpus_gen import Runbook

#: The bench index is built from a folder of this name (corpus.ensure_index), and the
#: folder's name is the documents' source: the same name makes the same doc ids.
ROOT_NAME = "runbooks"


def sync_root(work: Path, books: list[Runbook]) -> Path:
    """The indexed corpus, written again where the service can sync it (all unchanged)."""
    root = work / f"sync-{len(books)}" / ROOT_NAME
    write_pinned(root, len(books))
    return root


class EditProbe:
    def __init__(self, index: Index, root: Path, book: Runbook, timeout_s: float) -> None:
        self._index = index
        self._path = root / book.path
        self._doc_id = f"{ROOT_NAME}:{book.path}"
        self._timeout_s = timeout_s
        self._token = f"editprobe{time.time_ns()}"
        self.visible_after_s: float | None = None
        self._thread = threading.Thread(target=self._run, name="edit-probe", daemon=True)

    def start(self, delay_s: float) -> None:
        self._delay_s = delay_s
        self._thread.start()

    def join(self) -> dict[str, Any]:
        self._thread.join()
        return {"visible_after_s": self.visible_after_s, "timeout_s": self._timeout_s}

    def _run(self) -> None:
        time.sleep(self._delay_s)
        with self._path.open("a", encoding="utf-8") as out:
            out.write(f"\n\n## Edit probe\n\nThis section was added during the burst: "
                      f"{self._token}.\n")
        edited = time.monotonic()
        of_doc = Filter(must=(Equals(schema.F_DOC_ID, self._doc_id),))
        while time.monotonic() - edited < self._timeout_s:
            records, _ = self._index.scroll(of_doc, 256, fields=[schema.F_TEXT])
            if any(self._token in str(r.payload.get(schema.F_TEXT, "")) for r in records):
                self.visible_after_s = round(time.monotonic() - edited, 2)
                return
            time.sleep(0.1)
