"""The charts of `--html` (render/html_page.py), drawn with matplotlib (the optional
`gpudoctor[html]` extra) and returned as SVG text to inline in the page: the glyphs
are drawn as paths, so the page needs no font and nothing from the network.

Each function takes what a report's JSON holds (docs/json.md) and draws it; nothing
here decides anything. matplotlib is imported inside each function (through
`_figure`), with no pyplot: no GUI backend, no global state between charts.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

# One palette for every chart: matplotlib's default cycle, by name.
MEASURED, PUBLISHED, SLOW = "tab:blue", "tab:green", "tab:red"
# The phases of the step clock (knowledge/stragglers.PHASES), each its colour; an unknown
# phase name (a newer report) gets grey rather than no bar.
PHASE_COLOURS = {
    "data": "tab:orange",
    "forward": "tab:blue",
    "backward": "tab:purple",
    "optimizer": "tab:olive",
    "other": "tab:gray",
    "collective": "tab:red",
}


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig, salt: str) -> str:
    """The figure as an <svg> element: no XML prolog or DOCTYPE (the page is HTML), and
    ids salted per chart so that two charts' clip paths never share an id."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}):
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _size_label(n: float) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g}{unit}"
    return f"{n:g}"


def busbw_svg(results: Sequence[dict[str, Any]], published_gbps: float | None, published_label: str = "") -> str:
    """Bus bandwidth against message size (the results table's busbw column), with the
    published figure for the hardware as a dashed line when there is one."""
    from matplotlib.ticker import FuncFormatter

    rows = [r for r in results if r.get("busbw_gbps") is not None and r.get("bytes")]
    fig = _figure(7.5, 3.6)
    ax = fig.add_subplot()
    ax.plot([r["bytes"] for r in rows], [r["busbw_gbps"] for r in rows], marker="o", color=MEASURED, label="this run (busbw, median)")
    if published_gbps is not None:
        ax.axhline(published_gbps, color=PUBLISHED, linestyle="--", label=published_label or f"published: {published_gbps:g} GB/s")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: _size_label(x)))
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    return _svg(fig, "busbw")


def pairs_svg(pairs: Sequence[dict[str, Any]], nproc: int, bytes_each: int | None = None) -> str:
    """`--bisect`: every pair's all-reduce time as a cell of an nproc x nproc heat map
    (symmetric; the diagonal and pairs not timed are blank). The time shown is the one
    the verdict compares (`held_us`: the faster of the pair's two passes)."""
    nan = float("nan")  # a cell not timed: drawn in the colour map's "bad" colour, transparent
    grid = [[nan] * nproc for _ in range(nproc)]
    for p in pairs:
        a, b = p["ranks"]
        if 0 <= a < nproc and 0 <= b < nproc:
            grid[a][b] = grid[b][a] = float(p.get("held_us", p["us"]))
    finite = [v for row in grid for v in row if math.isfinite(v)]
    side = min(2.5 + 0.45 * nproc, 9.0)
    fig = _figure(side + 1.2, side)
    ax = fig.add_subplot()
    image = ax.imshow(grid, cmap="viridis", origin="upper")
    fig.colorbar(image, ax=ax, label="µs per all-reduce" + (f" of {_size_label(bytes_each)}" if bytes_each else ""))
    ticks = range(nproc) if nproc <= 16 else range(0, nproc, max(1, nproc // 16))
    ax.set_xticks(list(ticks))
    ax.set_yticks(list(ticks))
    ax.set_xlabel("rank")
    ax.set_ylabel("rank")
    if nproc <= 12:  # room for the numbers in the cells
        middle = (min(finite) + max(finite)) / 2 if finite else 0.0
        for a in range(nproc):
            for b in range(nproc):
                if math.isfinite(grid[a][b]):
                    colour = "black" if grid[a][b] > middle else "white"  # viridis: dark low, bright high
                    ax.text(b, a, f"{grid[a][b]:.0f}", ha="center", va="center", fontsize="small", color=colour)
    return _svg(fig, "pairs")


def phases_svg(steps: dict[str, Any]) -> str:
    """`run --nproc`: one bar per rank along the time of its average step, cut into the
    step clock's phases in their order; the slowest rank's label in red."""
    phases = list(steps.get("phases") or [])
    ranks = list(steps.get("ranks") or [])
    slowest = (steps.get("slowest") or {}).get("rank")
    fig = _figure(7.5, 1.2 + 0.4 * max(len(ranks), 1))
    ax = fig.add_subplot()
    labels = [f"rank {r['rank']}" + (f" ({r['node']})" if r.get("node") else "") for r in ranks]
    left = [0.0] * len(ranks)
    for phase in phases:
        widths = [float((r.get("phases_ms") or {}).get(phase) or 0.0) for r in ranks]
        ax.barh(range(len(ranks)), widths, left=left, color=PHASE_COLOURS.get(phase, "lightgray"), label=phase, height=0.6)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_yticks(range(len(ranks)), labels=labels)
    for tick, row in zip(ax.get_yticklabels(), ranks):
        if row["rank"] == slowest:
            tick.set_color(SLOW)
            tick.set_fontweight("bold")
    ax.invert_yaxis()  # rank 0 on top
    ax.set_xlabel("ms into the average step")
    ax.grid(True, axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncol=max(len(phases), 1), fontsize="small", frameon=False)
    return _svg(fig, "phases")
