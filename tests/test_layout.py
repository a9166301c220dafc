"""The house layout holds: every module is at most 500 lines, and packages point one way.

STYLE.md §1 and §14. The order below is the data path as the code has it: a package may use
the packages in the tiers below its own, never one beside or above it. Wiring that joins two
features lives in `enricher/service.py`, which sees everything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOTS = ("enricher", "ingest", "quality", "golden", "scripts")
MAX_LINES = 500

#: The top-level packages, lowest first: the runtime, then what fills its index, then the
#: offline tools (golden's builder, the scripts, the quality tools, which generate corpora
#: with scripts.corpus_gen). `tests` is outside the order: the fuzz and benchmark scripts
#: reuse its fakes.
PROJECT = ("enricher", "ingest", "golden", "scripts", "quality")

#: enricher's tiers, lowest first. The first holds the plain modules every stage shares.
#: Packages in one tier stand beside each other: neither imports the other.
TIERS: tuple[frozenset[str], ...] = tuple(
    frozenset(tier)
    for tier in (
        {
            "__init__",
            "alert",
            "errors",
            "settings",
            "result",
            "signatures",
            "logs",
            "metrics",
            "redis_connect",
            "cli",
            "serving",
        },
        {"index"},
        {"sources"},
        {"bodies"},
        {"search"},
        {"slack"},
        # PagerDuty incident notes: plain text from a search result (it shares slack's
        # redaction), and PagerDuty's REST API.
        {"notes"},
        {"feedback"},
        {"gaps"},
        {"pipeline", "audit"},
        {"service"},
        # HTTP routes beside the webhooks' (the git push webhook): the app mounts them.
        {"githook"},
        {"app"},
        {"__main__"},
    )
)
#: A package's command line (`python -m enricher.<package>`) ranks with its package, and
#: may also take its wiring from here.
WIRING = "enricher.service"


def modules() -> Iterator[Path]:
    for root in ROOTS:
        yield from sorted((REPO / root).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file, at any depth (lazy imports too);
    `from enricher import logs` names enricher.logs."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                sub = REPO.joinpath(*candidate.split("."))
                named_module = sub.is_dir() or sub.with_suffix(".py").is_file()
                yield node.lineno, candidate if named_module else node.module


def tier(module: str) -> int | None:
    """The tier of an enricher module (by its first name under enricher), None outside."""
    parts = module.split(".")
    if parts[0] != "enricher":
        return None
    head = parts[1] if len(parts) > 1 else "__init__"
    return next(i for i, names in enumerate(TIERS) if head in names)


def package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def upward(importer: str, target: str) -> str | None:
    """Why `importer` may not import `target`; None when it may."""
    top, target_top = importer.split(".")[0], target.split(".")[0]
    if top not in PROJECT or target_top not in PROJECT:
        return None
    if PROJECT.index(target_top) > PROJECT.index(top):
        return f"{top} sits below {target_top} ({' < '.join(PROJECT)})"
    if top != "enricher" or target_top != "enricher" or package(importer) == package(target):
        return None
    if importer.endswith(".__main__") and target == WIRING:
        return None
    own, theirs = tier(importer), tier(target)
    assert own is not None and theirs is not None
    if theirs < own or (theirs == own and own == 0):
        return None
    where = "beside" if theirs == own else "above"
    return (
        f"{package(target)} stands {where} {package(importer)} on the data path; "
        f"move the wiring into {WIRING}"
    )


PATHS = list(modules())


def test_the_roots_hold_modules() -> None:
    """The scan sees the packages (a renamed root would pass every check below vacuously)."""
    assert {p.relative_to(REPO).parts[0] for p in PATHS} == set(ROOTS)


def test_every_enricher_package_has_a_tier() -> None:
    """A new package under enricher/ is placed on the data path on purpose."""
    heads = {
        p.relative_to(REPO / "enricher").with_suffix("").parts[0]
        for p in PATHS
        if p.is_relative_to(REPO / "enricher")
    }
    placed = frozenset().union(*TIERS)
    assert heads <= placed, f"add {sorted(heads - placed)} to TIERS"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(REPO)))
def test_module_size(path: Path) -> None:
    """A module past 500 lines holds more than one concept: split it along them."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{lines} lines: split it along the concepts it holds"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_down(path: Path) -> None:
    """No module imports a package above or beside its own."""
    name = module_name(path)
    if path.name == "__main__.py":
        name = f"{name}.__main__"
    problems = [
        f"line {line}: imports {target}: {why}"
        for line, target in imported(path)
        if (why := upward(name, target)) is not None
    ]
    assert not problems, "\n".join(problems)


class TestTheRule:
    """The checks above catch what they are for."""

    @pytest.mark.parametrize(
        ("importer", "target"),
        [
            ("enricher.search.__main__", "enricher.feedback.store"),
            ("enricher.feedback.loop", "enricher.gaps.digest"),
            ("enricher.search.searcher", "enricher.slack.render"),
            ("enricher.pipeline.processor", "enricher.audit.verdict"),
            ("enricher.errors", "enricher.index.schema"),
            ("ingest.sync", "quality.eval"),
            ("enricher.index.edge", "ingest.sync"),
        ],
    )
    def test_an_upward_or_sideways_import_is_named(self, importer: str, target: str) -> None:
        """Each of these points up or sideways, so each is reported."""
        assert upward(importer, target) is not None

    @pytest.mark.parametrize(
        ("importer", "target"),
        [
            ("enricher.search.__main__", "enricher.service"),
            ("enricher.pipeline.processor", "enricher.feedback.store"),
            ("enricher.service", "enricher.gaps.digest"),
            ("enricher.redis_connect", "enricher.settings"),
            ("quality.suite", "scripts.corpus_gen.cases"),
            ("scripts.fuzz.run", "tests.helpers"),
        ],
    )
    def test_a_downward_import_passes(self, importer: str, target: str) -> None:
        """Each of these points down (or is a command line taking its wiring)."""
        assert upward(importer, target) is None
