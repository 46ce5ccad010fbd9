"""Draw docs/img/bench.svg from the recorded run docs/bench/run.json, with `npyio bench --plot`'s
own plotting code, titled with the run's date and machine (not today's).

Record a new run, then redraw (``make docs`` redraws)::

    npyio bench --profiles small medium --rounds 3 --json > docs/bench/run.json
    python docs/gen/chart.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
RUN = DOCS / "bench" / "run.json"
OUT = DOCS / "img" / "bench.svg"


def draw(run: Path, out: Path) -> str:
    """Write the chart of ``run`` to ``out``; returns its title."""
    import matplotlib

    from npyio.cli import bench

    recorded = json.loads(run.read_text())
    results = [bench.Result(**r) for r in recorded["results"]]
    matplotlib.rcParams["svg.hashsalt"] = "npyio"  # the same ids in every drawing
    fig = bench.plot(results, str(out))
    title = f"npyio bench, batches of {bench.BATCH}: {recorded['date']}, {recorded['machine']}"
    fig.axes[0].set_title(title, fontsize=9)
    fig.savefig(out, metadata={"Date": None})
    return title


def main(argv: list[str]) -> int:
    run = Path(argv[1]) if len(argv) > 1 else RUN
    out = Path(argv[2]) if len(argv) > 2 else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    print(draw(run, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
