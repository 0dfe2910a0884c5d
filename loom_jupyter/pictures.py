"""Pictures of launches and stepper states for notebooks (SVG drawn by :mod:`loom.plot`).

- :func:`access_picture`: per buffer, which workitem last wrote each element, with read and
  write counts; races, out-of-bounds accesses and uninitialised reads highlighted.
- :func:`grid_picture`: the stepper's workgroup, each workitem's state and next line.
- :func:`histogram_picture`: value histograms of buffers (arrays, or the stepper's buffers).

A :class:`Picture` shows as ``text/html`` holding an ``<img>`` with the SVG as a data URI
(JupyterLab renders untrusted HTML, never untrusted SVG), plus ``image/svg+xml`` and a
``text/plain`` summary; all byte-stable.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loom.plot import PictureError, access_summary, access_svg, histogram_svg, svg_of
from loom_jupyter.render import attrs, esc, wrap

__all__ = [
    "Picture",
    "PictureError",
    "access_picture",
    "grid_picture",
    "histogram_picture",
]

STATE_COLOURS = {
    "running": "#8fd18f",
    "at barrier": "#ffd966",
    "exited": "#c8c8c8",
    "done": "#9fc2ee",
}


@dataclass
class Picture:
    """An SVG picture with a plain-text summary; displays in notebooks."""

    svg: str
    summary: str
    kind: str = "picture"

    def html(self) -> str:
        """An ``<img>`` with the SVG as a data URI (survives JupyterLab's sanitizer)."""
        data = base64.b64encode(self.svg.encode()).decode()
        return (
            f'<img {attrs("loom-picture")} alt="{esc(self.summary)}" '
            f'src="data:image/svg+xml;base64,{data}"/>\n'
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            "text/plain": self.summary,
            "text/html": wrap(self.html(), self.kind),
            "image/svg+xml": self.svg,
        }

    def save(self, path: str) -> None:
        """Write the SVG to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)


def access_picture(
    source: Any, dtypes: Mapping[str, Any] | None = None, buffers: Sequence[str] | None = None
) -> Picture:
    """Per buffer: last writer and read/write counts of each element; races, uninitialised
    reads and out-of-bounds accesses highlighted (``source``: a ``launch(..., trace=True)``
    result, the runtime error such a launch raised, or its ``accesses``)."""
    return Picture(
        access_svg(source, dtypes, buffers), access_summary(source, dtypes), "access-map"
    )


def histogram_picture(
    arrays: Mapping[str, Any], bins: int = 16, masks: Mapping[str, Any] | None = None
) -> Picture:
    """A value histogram per named array (``masks[name]``: elements to leave out)."""
    svg, summary = histogram_svg(arrays, bins, masks)
    return Picture(svg, summary, "histogram")


# --------------------------------------------------------------------------- grid states


def grid_picture(snap: Any) -> Picture:
    """The shown workgroup of a stepper snapshot: each workitem's state and next line."""
    from matplotlib.patches import Patch, Rectangle

    from loom.plot import figure_class
    from loom_jupyter.snapshot import grid_title

    Figure = figure_class()
    sx, sy, sz = (*snap.workgroup_shape, 1, 1, 1)[:3]
    cols, rows = sx, sy * sz
    fig = Figure(figsize=(min(1.2 + 0.6 * cols, 12.5), 1.3 + 0.6 * rows))
    ax = fig.subplots()
    lines = getattr(snap, "lines", {}) or {}
    for z in range(sz):
        for y in range(sy):
            for x in range(sx):
                lid = (x, y, z)
                state = "done" if snap.done else snap.states.get(lid, "done")
                r = y + sy * z
                cur = lid == snap.current
                ax.add_patch(
                    Rectangle(
                        (x, -r - 1),
                        1,
                        1,
                        facecolor=STATE_COLOURS.get(state, "#ffffff"),
                        edgecolor="#d1495b" if cur else "#777777",
                        lw=2.6 if cur else 0.6,
                    )
                )
                line = lines.get(lid)
                ax.text(x + 0.5, -r - 0.35, f"{x}", ha="center", va="center", fontsize=7)
                ax.text(
                    x + 0.5,
                    -r - 0.72,
                    f"L{line}" if line else "-",
                    ha="center",
                    va="center",
                    fontsize=6,
                )
    ax.set_xlim(0, cols)
    ax.set_ylim(-rows, 0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(grid_title(snap) + "; L = next line", fontsize=8, loc="left")
    handles = [Patch(facecolor=c, edgecolor="#777777", label=s) for s, c in STATE_COLOURS.items()]
    handles.append(Patch(facecolor="white", edgecolor="#d1495b", lw=2, label="current"))
    fig.legend(handles=handles, loc="lower center", ncols=5, fontsize=7, frameon=False)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.85, bottom=0.22)
    counts: dict[str, int] = {}
    for lid in ((x, y, z) for z in range(sz) for y in range(sy) for x in range(sx)):
        state = "done" if snap.done else snap.states.get(lid, "done")
        counts[state] = counts.get(state, 0) + 1
    summary = grid_title(snap) + ": " + ", ".join(f"{n} {s}" for s, n in counts.items())
    return Picture(svg_of(fig), summary, "grid-picture")
