"""A small SVG line chart for the quality reports (docs/calibration.svg). No dependencies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT, PAD = 640, 360, 48
Y_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Series:
    name: str
    colour: str
    #: (x, y) with y in 0..1; None where the value is undefined (the line skips it).
    points: Sequence[tuple[float, float | None]]


def line_chart(
    series: Sequence[Series],
    *,
    x_range: tuple[float, float],
    x_ticks: Sequence[float],
    x_label: str,
    marker: float,
) -> str:
    """Lines over x in `x_range` and y in [0, 1], a dashed line at `marker`, and a legend
    along the top."""
    lo, hi = x_range

    def x(value: float) -> float:
        return PAD + (value - lo) / ((hi - lo) or 1) * (WIDTH - 2 * PAD)

    def y(value: float) -> float:
        return HEIGHT - PAD - value * (HEIGHT - 2 * PAD)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
    ]
    for tick in Y_TICKS:
        parts.append(
            f'<line x1="{PAD}" x2="{WIDTH - PAD}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}" stroke="#ddd"/><text x="{PAD - 6}" '
            f'y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>'
        )
    for tick in x_ticks:
        parts.append(
            f'<text x="{x(tick):.1f}" y="{HEIGHT - PAD + 16}" '
            f'text-anchor="middle">{tick:.2f}</text>'
        )
    parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 10}" text-anchor="middle">{x_label}</text>')
    parts.append(
        f'<line x1="{x(marker):.1f}" x2="{x(marker):.1f}" '
        f'y1="{PAD}" y2="{HEIGHT - PAD}" stroke="#555" stroke-dasharray="4 3"/>'
    )
    for i, line in enumerate(series):
        coords = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py in line.points if py is not None)
        if coords:
            parts.append(
                f'<polyline fill="none" stroke="{line.colour}" stroke-width="2" points="{coords}"/>'
            )
        parts.append(
            f'<rect x="{PAD + 8 + i * 140}" y="14" width="12" height="3" '
            f'fill="{line.colour}"/><text x="{PAD + 24 + i * 140}" y="19">{line.name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
