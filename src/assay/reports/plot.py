"""Coverage-over-time charts as inline SVG (no script, no network: the HTML page stays self-contained).

A chart draws a target's timeline (:mod:`assay.core.timeline`) as two step lines,
edges on the left axis and corpus size on the right, against cases or seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

#: Chart size in CSS pixels, and its margins (left, right, top, bottom).
WIDTH, HEIGHT = 500, 250
MARGIN = (56, 56, 26, 40)
EDGES_COLOUR, CORPUS_COLOUR = "#1f6feb", "#d4731c"
_X = {"cases": 0, "seconds": 1}


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top`` (1-2-5 steps)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    ticks = [0.0]
    while ticks[-1] < top:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _label(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e4:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def _steps(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for x, y in points:
        if out:
            out.append((x, out[-1][1]))
        out.append((x, y))
    return out


def chart(timeline: Sequence[Sequence[float]], x: str, title: str) -> str:
    """One SVG chart of ``timeline`` (``[cases, seconds, edges, corpus]`` rows) against ``x``."""
    left, right, top, bottom = MARGIN
    w, h = WIDTH - left - right, HEIGHT - top - bottom
    xi = _X[x]
    xs_ticks = nice_ticks(max((p[xi] for p in timeline), default=0))
    e_ticks = nice_ticks(max((p[2] for p in timeline), default=0))
    c_ticks = nice_ticks(max((p[3] for p in timeline), default=0))

    def px(v: float) -> float:
        return left + w * v / xs_ticks[-1]

    def py(v: float, ticks: list[float]) -> float:
        return top + h - h * v / ticks[-1]

    parts = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fff" stroke="#d0d7de"/>',
    ]
    for t in xs_ticks:
        parts.append(
            f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + h}" stroke="#eef1f4"/>'
            f'<text x="{px(t):.1f}" y="{top + h + 14}" text-anchor="middle" class="tick">{_label(t)}</text>'
        )
    for t in e_ticks:
        parts.append(
            f'<text x="{left - 6}" y="{py(t, e_ticks) + 4:.1f}" text-anchor="end" class="tick" '
            f'fill="{EDGES_COLOUR}">{_label(t)}</text>'
        )
    for t in c_ticks:
        parts.append(
            f'<text x="{left + w + 6}" y="{py(t, c_ticks) + 4:.1f}" class="tick" '
            f'fill="{CORPUS_COLOUR}">{_label(t)}</text>'
        )
    parts.append(f'<text x="{left + w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" class="axis">{x}</text>')
    for col, ticks, colour, name in ((2, e_ticks, EDGES_COLOUR, "edges"), (3, c_ticks, CORPUS_COLOUR, "corpus")):
        pts = _steps([(px(p[xi]), py(p[col], ticks)) for p in timeline])
        coords = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
        parts.append(
            f'<polyline class="series {name}" data-series="{name}" points="{coords}" fill="none" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
    # The legend sits above the plot area, where no line can cover it.
    parts.append(
        f'<text x="{left}" y="{top - 9}" class="legend" fill="{EDGES_COLOUR}">edges (left)</text>'
        f'<text x="{left + w}" y="{top - 9}" text-anchor="end" class="legend" '
        f'fill="{CORPUS_COLOUR}">corpus (right)</text>'
    )
    parts.append("</svg>")
    return "".join(parts)
