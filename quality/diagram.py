"""Reliability diagrams as PNG (matplotlib, headless): does "match 70%" come true 70% of
the time? One panel per corpus: per bin of the first runbook's shown probability, the share
of pages whose first runbook was right, against the diagonal, with the bin's page count."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no screen: render to files only

import matplotlib.pyplot as plt


def reliability_png(
    path: Path, title: str, bins: Sequence[tuple[float, float, int]], ece: float | None
) -> None:
    """Write one diagram: `bins` are (mean probability, share right, pages)."""
    fig, ax = plt.subplots(figsize=(4.2, 4.2), dpi=100)
    ax.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1, label="calibrated")
    if bins:
        xs = [b[0] for b in bins]
        ys = [b[1] for b in bins]
        sizes = [20 + 180 * b[2] / max(n for _, _, n in bins) for b in bins]
        ax.plot(xs, ys, color="#1f77b4", linewidth=1.5)
        ax.scatter(xs, ys, s=sizes, color="#1f77b4", alpha=0.8, label="pages (area: count)")
        for x, y, n in bins:
            ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("shown probability of the first runbook")
    ax.set_ylabel("share of pages where it was right")
    suffix = "" if ece is None else f" (ECE {ece:.3f})"
    ax.set_title(f"{title}{suffix}", fontsize=10)
    ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
