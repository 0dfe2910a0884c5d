"""Plots of traced launches as byte-stable SVG (matplotlib, imported only when drawing).

- :func:`access_svg`: per buffer, which workitem last wrote each element, with read and write
  counts; racy, out-of-bounds and uninitialised-read elements highlighted (from
  ``launch(..., trace=True)``: a :class:`~loom.interp.LaunchResult` or the runtime error it
  raised). Used by ``loom-run --plot`` and by ``loom_jupyter.pictures``.
- :func:`histogram_svg`: value histograms of named arrays.

The SVG has no date, a fixed creator, fixed ids (``svg.hashsalt``) and text kept as text, so
the same input gives the same bytes (nbval compares saved notebooks byte for byte). Core
``loom`` does not need matplotlib: only these functions import it, with a clear error.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.errors import LoomError

RACE, UNINIT, OOB, UNWRITTEN = "#d62728", "#ff7f0e", "#7b1fa2", "#f2f2f2"
MAX_CELLS = 512
"""Most elements drawn per buffer (the rest are counted in the title)."""
LABEL_CELLS = 96
"""Up to this many elements per buffer, each cell is labelled with writer and counts."""


class PictureError(LoomError):
    """A picture cannot be drawn (matplotlib missing, nothing traced)."""


def figure_class() -> Any:
    """matplotlib's ``Figure`` (a clear error when matplotlib is missing)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PictureError(
            "pictures need matplotlib: pip install matplotlib (it is in the 'jupyter' extra)"
        ) from exc
    return Figure


def svg_of(fig: Any) -> str:
    """The figure as SVG text with fixed metadata and ids (byte-stable)."""
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "loom", "svg.fonttype": "none"}):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": "loom_jupyter"})
    return out.getvalue()


# --------------------------------------------------------------------------- access maps


@dataclass
class _Elements:
    """One buffer's trace folded to elements of ``size`` bytes."""

    name: str
    size: int
    writer: np.ndarray
    reads: np.ndarray
    writes: np.ndarray
    race: np.ndarray
    uninit: np.ndarray
    oob: dict[int, int]
    """Element index past the end (or before the start) -> the workitem that tried it."""
    rows: int
    cols: int


def _element_size(trace: Any, dtypes: Mapping[str, Any]) -> int:
    base = trace.name.split("@", 1)[0].lstrip("%")
    for key in (trace.name, base, "%" + base):
        if key in dtypes:
            return int(np.dtype(dtypes[key]).itemsize)
    return 4 if trace.nbytes % 4 == 0 and trace.nbytes else 1


def _fold(trace: Any, size: int) -> _Elements:
    n = trace.nbytes // size
    cut = n * size

    def per(arr: np.ndarray, how: Any) -> np.ndarray:
        return how(arr[:cut].reshape(n, size), axis=1)

    oob: dict[int, int] = {}
    for o in trace.out_of_bounds:
        oob.setdefault(o.start // size, o.workitem)
    per_owner = trace.owner_bytes // size if trace.owner_bytes else 0
    if per_owner and per_owner <= 32:
        rows, cols = max(1, n // per_owner), per_owner
    else:
        cols = min(max(n, 1), 16)
        rows = -(-max(n, 1) // cols)
    return _Elements(
        trace.name,
        size,
        per(trace.last_writer, np.max),
        per(trace.reads, np.max),
        per(trace.writes, np.max),
        per(trace.race, np.any),
        per(trace.uninit_read, np.any),
        oob,
        rows,
        cols,
    )


def _writer_label(item: int, trace: Any) -> str:
    from loom.interp.trace import item_coords

    g, local = item_coords(item, trace.grid, trace.workgroup)
    gx, gy, _ = trace.grid
    sx, sy, _ = trace.workgroup
    gflat = g[0] + gx * (g[1] + gy * g[2])
    lflat = local[0] + sx * (local[1] + sy * local[2])
    return f"g{gflat}.{lflat}"


def _traces_of(source: Any) -> dict[str, Any]:
    traces = getattr(source, "accesses", source)
    if not isinstance(traces, Mapping) or not traces:
        raise PictureError("no access trace to draw: run the kernel with launch(..., trace=True)")
    return dict(traces)


def access_summary(source: Any, dtypes: Mapping[str, Any] | None = None) -> str:
    """Plain text of :func:`access_picture`: per buffer, counts of each highlighted kind."""
    lines = []
    for trace in _traces_of(source).values():
        e = _fold(trace, _element_size(trace, dtypes or {}))
        written = int((e.writer >= 0).sum())
        parts = [f"{written} of {len(e.writer)} elements written"]
        for label, count in (
            ("racy", int(e.race.sum())),
            ("read uninitialised", int(e.uninit.sum())),
            ("out of bounds", len(e.oob)),
        ):
            if count:
                parts.append(f"{count} {label}")
        lines.append(f"{trace.name} ({e.size}-byte elements): " + ", ".join(parts))
    return "access map: last writer (g<workgroup>.<workitem>), reads r, writes w\n" + "\n".join(
        lines
    )


def access_svg(
    source: Any, dtypes: Mapping[str, Any] | None = None, buffers: Sequence[str] | None = None
) -> str:
    """Per buffer: last writer and read/write counts of each element; races, uninitialised
    reads and out-of-bounds accesses highlighted. ``source``: a traced launch result, the
    runtime error a traced launch raised, or its ``accesses`` mapping."""
    Figure = figure_class()
    from matplotlib.patches import Patch

    traces = _traces_of(source)
    names = [n for n in traces if buffers is None or n in buffers]
    folded = [(traces[n], _fold(traces[n], _element_size(traces[n], dtypes or {}))) for n in names]
    heights = [e.rows + (1 if e.oob else 0) + 1.2 for _, e in folded]
    width = max(e.cols + (max(len(e.oob), 0) if e.rows == 1 else 0) for _, e in folded)
    fig = Figure(figsize=(min(1.0 + 0.62 * max(width, 4), 12.5), 0.5 + 0.55 * sum(heights)))
    axes = fig.subplots(len(folded), 1, squeeze=False, height_ratios=heights)[:, 0]
    import matplotlib

    cmap = matplotlib.colormaps["tab20"]
    for ax, (trace, e) in zip(axes, folded):
        n = min(len(e.writer), MAX_CELLS)
        _draw_cells(ax, trace, e, n, cmap)
        _draw_outside(ax, trace, e)
        _frame_buffer_axis(ax, trace, e, n)
    handles = [
        Patch(facecolor=UNWRITTEN, edgecolor="#777777", label="not written"),
        Patch(facecolor="white", edgecolor=RACE, hatch="xx", lw=2, label="data race"),
        Patch(facecolor="white", edgecolor=UNINIT, hatch="//", lw=2, label="read uninitialised"),
        Patch(facecolor="#efe3f5", edgecolor=OOB, ls="--", lw=2, label="out of bounds"),
    ]
    fig.legend(handles=handles, loc="lower center", ncols=4, fontsize=7, frameon=False)
    fig.suptitle(
        "last writer g<workgroup>.<workitem>; r reads, w writes", fontsize=8, x=0.01, ha="left"
    )
    fig.subplots_adjust(left=0.08, right=0.99, top=0.92, bottom=0.08, hspace=0.6)
    return svg_of(fig)


def _draw_cells(ax: Any, trace: Any, e: Any, n: int, cmap: Any) -> None:
    """The first ``n`` elements, one cell each: last writer's colour, races and uninitialised
    reads outlined, labels when there are few enough cells."""
    from matplotlib.patches import Rectangle

    label = n <= LABEL_CELLS
    for i in range(n):
        r, c = divmod(i, e.cols)
        w = int(e.writer[i])
        face = UNWRITTEN if w < 0 else cmap((w % 20) / 20 + 0.025)
        edge, lw, hatch = "#777777", 0.6, None
        if e.uninit[i]:
            edge, lw, hatch = UNINIT, 2.2, "//"
        if e.race[i]:
            edge, lw, hatch = RACE, 2.6, "xx"
        ax.add_patch(
            Rectangle((c, -r - 1), 1, 1, facecolor=face, edgecolor=edge, lw=lw, hatch=hatch)
        )
        if label:
            who = "-" if w < 0 else _writer_label(w, trace)
            ax.text(c + 0.5, -r - 0.35, who, ha="center", va="center", fontsize=6.5)
            ax.text(
                c + 0.5,
                -r - 0.75,
                f"r{int(e.reads[i])} w{int(e.writes[i])}",
                ha="center",
                va="center",
                fontsize=5.5,
                color="#333333",
            )


def _draw_outside(ax: Any, trace: Any, e: Any) -> None:
    """Out-of-bounds elements: drawn past the end, on the row after the last."""
    from matplotlib.patches import Rectangle

    for k, (elem, item) in enumerate(sorted(e.oob.items())):
        r, c = e.rows, k
        ax.add_patch(
            Rectangle((c, -r - 1), 1, 1, facecolor="#efe3f5", edgecolor=OOB, lw=2.2, ls="--")
        )
        ax.text(c + 0.5, -r - 0.35, f"[{elem}]", ha="center", va="center", fontsize=6.5)
        ax.text(
            c + 0.5,
            -r - 0.75,
            _writer_label(item, trace),
            ha="center",
            va="center",
            fontsize=5.5,
            color=OOB,
        )


def _frame_buffer_axis(ax: Any, trace: Any, e: Any, n: int) -> None:
    """Limits, element-number ticks and the title of one buffer's axis."""
    rows = e.rows + (1 if e.oob else 0)
    ax.set_xlim(0, max(e.cols, len(e.oob), 1))
    ax.set_ylim(-rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks([x + 0.5 for x in range(e.cols)], [str(x) for x in range(e.cols)])
    ax.set_yticks(
        [-r - 0.5 for r in range(rows)],
        [str(r * e.cols) if r < e.rows else "outside" for r in range(rows)],
    )
    ax.tick_params(labelsize=6, length=0)
    owner = (
        f", one row per {'workgroup' if trace.space == 'workgroup' else 'owner'}"
        if trace.owner_bytes and e.rows > 1
        else ""
    )
    more = f" (first {n} of {len(e.writer)})" if n < len(e.writer) else ""
    ax.set_title(
        f"{trace.name}: {len(e.writer)} x {e.size}-byte elements{more}{owner}",
        fontsize=8,
        loc="left",
    )
    for spine in ax.spines.values():
        spine.set_visible(False)


# --------------------------------------------------------------------------- histograms


def histogram_svg(
    arrays: Mapping[str, Any], bins: int = 16, masks: Mapping[str, Any] | None = None
) -> tuple[str, str]:
    """(SVG, summary): a value histogram per named array (``masks[name]``: elements to leave
    out)."""
    Figure = figure_class()
    items = list(arrays.items())
    if not items:
        raise PictureError("no buffers to draw")
    fig = Figure(figsize=(min(3.2 * len(items), 12.5), 2.4))
    axes = fig.subplots(1, len(items), squeeze=False)[0]
    lines = []
    for ax, (name, arr) in zip(axes, items):
        values = np.asarray(arr).reshape(-1)
        if masks and name in masks:
            values = values[~np.asarray(masks[name]).reshape(-1)]
        finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
        if finite.size:
            ax.hist(finite.astype(np.float64), bins=bins, color="#4c78a8", edgecolor="white")
            lo, hi = finite.min(), finite.max()
            lines.append(f"{name}: {finite.size} values in [{lo}, {hi}]")
        else:
            ax.text(0.5, 0.5, "no values", ha="center", va="center", transform=ax.transAxes)
            lines.append(f"{name}: no values")
        ax.set_title(f"{name} ({values.dtype})", fontsize=8, loc="left")
        ax.tick_params(labelsize=6)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.85, bottom=0.15, wspace=0.3)
    return svg_of(fig), "value histograms\n" + "\n".join(lines)
