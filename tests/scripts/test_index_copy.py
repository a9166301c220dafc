"""scripts.index_copy: a copied index folder has the same bytes and keeps its holes."""

from __future__ import annotations

from pathlib import Path

from scripts.index_copy import copy_index

LENGTH = 64 * 1024 * 1024


def test_same_bytes_and_the_holes_stay_holes(tmp_path: Path) -> None:
    source = tmp_path / "qdrant"
    (source / "segment").mkdir(parents=True)
    sparse = source / "segment" / "page_0.dat"
    with sparse.open("wb") as out:
        out.write(b"head")
        out.seek(LENGTH - 4)
        out.write(b"tail")
    (source / "meta.json").write_text('{"collections": {}}')

    copy_index(source, tmp_path / "replica" / "qdrant")

    copied = tmp_path / "replica" / "qdrant" / "segment" / "page_0.dat"
    assert copied.stat().st_size == LENGTH
    with copied.open("rb") as got:
        assert got.read(4) == b"head"
        got.seek(LENGTH - 4)
        assert got.read() == b"tail"
    assert copied.stat().st_blocks * 512 < LENGTH // 16  # not written out as zeros
    assert (tmp_path / "replica" / "qdrant" / "meta.json").read_text() == '{"collections": {}}'
