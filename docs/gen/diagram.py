"""Draw docs/img/pipeline.svg: npyio's pipeline from files to batches, as plain SVG.

Run ``python docs/gen/diagram.py`` (``make docs`` does) after changing the stages below; the
output is deterministic, so the committed SVG changes only when they do.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "img" / "pipeline.svg"

# (title, what happens, where): once in Python when the dataset is built, then per element in
# the graph. The stages are CONTRIBUTING.md's data flow.
BUILD = [
    ("sources", "directories, globs, lists, gs://", "your call"),
    ("paths", "listed, sorted, paired", "_pipeline/paths.py"),
    ("spec", "first header: dtype, shape", "_format/spec.py"),
    ("plan", "split and shard the file list", "_sources/plan.py"),
]
GRAPH = [
    ("read", "in shuffled order: read_file", "_pipeline/shuffle.py, _read/"),
    ("parse", "header checked with tf.strings", "_graph/parser.py"),
    ("decode", "tf.io.decode_raw, checked", "_graph/decode.py"),
    ("batches", "batch, prefetch: (x, y)", "_sources/dataset.py"),
]

BOX_W, BOX_H, GAP, MARGIN = 190, 70, 30, 20
ROW_Y = (50, 190)


def _box(x: int, y: int, title: str, what: str, where: str, fill: str) -> str:
    cx = x + BOX_W // 2
    return (
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="8" fill="{fill}" '
        f'stroke="#335" stroke-width="1.5"/>\n'
        f'<text x="{cx}" y="{y + 22}" class="t">{escape(title)}</text>\n'
        f'<text x="{cx}" y="{y + 42}" class="w">{escape(what)}</text>\n'
        f'<text x="{cx}" y="{y + 60}" class="m">{escape(where)}</text>\n'
    )


def _arrow(x1: int, y1: int, x2: int, y2: int) -> str:
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#335" stroke-width="1.5" '
        f'marker-end="url(#head)"/>\n'
    )


def _row(stages: list[tuple[str, str, str]], y: int, fill: str) -> str:
    parts = []
    for i, (title, what, where) in enumerate(stages):
        x = MARGIN + i * (BOX_W + GAP)
        parts.append(_box(x, y, title, what, where, fill))
        if i:
            parts.append(_arrow(x - GAP, y + BOX_H // 2, x - 2, y + BOX_H // 2))
    return "".join(parts)


def svg() -> str:
    """The diagram, as an SVG document."""
    width = 2 * MARGIN + len(BUILD) * BOX_W + (len(BUILD) - 1) * GAP
    height = ROW_Y[1] + BOX_H + 30
    last_x = MARGIN + (len(BUILD) - 1) * (BOX_W + GAP) + BOX_W // 2
    first_x = MARGIN + BOX_W // 2
    turn_y = (ROW_Y[0] + BOX_H + ROW_Y[1]) // 2
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
        '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="7" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#335"/></marker></defs>\n'
        "<style>.t{font-size:15px;font-weight:bold;text-anchor:middle}"
        ".w{font-size:11px;text-anchor:middle}"
        ".m{font-size:10px;fill:#556;font-family:monospace;text-anchor:middle}"
        ".h{font-size:13px;fill:#335}</style>\n"
        f'<text x="{MARGIN}" y="{ROW_Y[0] - 15}" class="h">Once, in Python, when the dataset '
        "is built (errors name the file)</text>\n"
        + _row(BUILD, ROW_Y[0], "#e8eefc")
        + f'<path d="M{last_x},{ROW_Y[0] + BOX_H} V{turn_y} H{first_x} V{ROW_Y[1] - 2}" '
        'fill="none" stroke="#335" stroke-width="1.5" marker-end="url(#head)"/>\n'
        f'<text x="{first_x + 15}" y="{turn_y + 20}" class="h">Per element, in the TensorFlow '
        "graph: no Python, parallel, serializable</text>\n"
        + _row(GRAPH, ROW_Y[1], "#e9f7ea")
        + "</svg>\n"
    )


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
