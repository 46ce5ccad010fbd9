"""Do the from_generator pipelines slow the others in ``npyio bench``? An A/B experiment.

After a ``Dataset.from_generator`` pipeline has run, tf.data pipelines that run later in the same
process are slower. ``npyio bench`` therefore runs the generator pipelines in a worker process
(``npyio.cli.bench.Worker``). This script checks that this isolates them, against the
two alternatives, each in a fresh process (so that no trial inherits another's state):

- ``none``: the bench's in-process pipelines (npyio graph, py_function, floor) alone;
- ``worker``: the same, with the generator pipelines drained in a worker between them, as
  ``npyio bench`` does;
- ``inprocess_gc``: the generator pipelines drained in this process instead, last in each
  round, each followed by ``gc.collect()``.

Each process measures the in-process pipelines for ``--rounds`` rounds ("before"), then starts
the generator pipelines as its configuration says (none, in the worker, or in-process) and
measures ``--rounds`` more rounds with them interleaved as ``npyio bench`` does ("after"). The
figure per pipeline is after/before of the median seconds: 1.0 means unaffected. Comparing within
one process cancels most of the drift of a shared machine; configurations alternate across
``--trials`` so that load changes spread over all of them.

    .venv/bin/python bench/isolation.py                      # small=2000, large=100, 3 trials
    .venv/bin/python bench/isolation.py --trials 5 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile

CONFIGS = ("none", "worker", "inprocess_gc")

CHILD = r"""
import gc, json, os, statistics, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import dataclasses
from npyio.cli import bench, pipelines, sample

config, name, root = sys.argv[1], sys.argv[2], sys.argv[5]
count, rounds = int(sys.argv[3]), int(sys.argv[4])
profile = dataclasses.replace(sample.PROFILES[name], count=count)
where = sample.ensure(profile, root, quiet=True)
local = {k: v for k, v in bench.drains(profile, where, ["graph"]).items() if k != bench.NUMPY_LOOP}
for drain in local.values():
    drain()

def measure(generators):
    seconds = {k: [] for k in local}
    cpu = {k: [] for k in local}
    for _ in range(rounds):
        for key, drain in local.items():
            c = time.process_time()
            n, s = drain()
            cpu[key].append(time.process_time() - c)
            assert n == count, (key, n)
            seconds[key].append(s)
        for drain in generators:
            n, _s = drain()
            assert n == count, n
            if config == "inprocess_gc":
                gc.collect()
    return {k: (statistics.median(seconds[k]), statistics.median(cpu[k])) for k in local}

before = measure([])
worker = None
if config == "worker":
    worker = bench.Worker()
    remote = bench.drains(profile, where, [], worker)
    generators = [remote[k] for k in bench.GENERATOR_KEYS]
elif config == "inprocess_gc":
    xs, ys = sample.paths(profile, where)
    datasets = [
        pipelines.generator_pipeline(
            xs, ys, profile.input_shape, profile.label_shape, bench.BATCH, k
        )
        for k in (1, bench.GENERATORS)
    ]
    generators = [lambda ds=ds: pipelines.drain(ds) for ds in datasets]
else:
    generators = []
for drain in generators:  # their warm-up, as in npyio bench
    drain()
    if config == "inprocess_gc":
        gc.collect()
after = measure(generators)
if worker is not None:
    worker.close()
print(json.dumps({k: [after[k][0] / before[k][0], after[k][1] / before[k][1]] for k in local}))
"""


def trial(config: str, profile: str, count: int, rounds: int, root: str) -> dict[str, list[float]]:
    """One fresh process: for each in-process pipeline, after/before of its median wall
    seconds and of its median CPU seconds (this process's, all threads)."""
    from npyio.cli.bench import child_env

    out = subprocess.run(
        [sys.executable, "-c", CHILD, config, profile, str(count), str(rounds), root],
        check=True,
        capture_output=True,
        text=True,
        env=child_env(),
    ).stdout
    result: dict[str, list[float]] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--count",
        action="append",
        metavar="PROFILE=N",
        help="profiles and their file counts (default: small=2000 large=100)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds before and after (5)")
    parser.add_argument("--trials", type=int, default=3, help="processes per configuration (3)")
    parser.add_argument("--root", default=None, help="where to write the files (a temp dir)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    counts = {
        k: int(v) for k, v in (c.split("=", 1) for c in (args.count or ["small=2000", "large=100"]))
    }
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for profile, count in counts.items():
            ratios: dict[str, list[dict[str, list[float]]]] = {c: [] for c in CONFIGS}
            for t in range(args.trials):
                # Alternate the order, so that no configuration always runs first or last.
                order = CONFIGS if t % 2 == 0 else CONFIGS[::-1]
                for config in order:
                    ratios[config].append(
                        trial(config, profile, count, args.rounds, args.root or tmp)
                    )
                    print(f"{profile} trial {t + 1} {config} done", file=sys.stderr)
            for config, found in ratios.items():
                for pipeline in found[0]:
                    wall = [f[pipeline][0] for f in found]
                    cpu = [f[pipeline][1] for f in found]
                    rows.append(
                        {
                            "profile": profile,
                            "files": count,
                            "config": config,
                            "pipeline": pipeline,
                            "wall_after_over_before": wall,
                            "cpu_after_over_before": cpu,
                            "wall_median": statistics.median(wall),
                            "cpu_median": statistics.median(cpu),
                        }
                    )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("after/before of the median epoch (1.00 = unaffected): wall, then CPU time;")
        print("median over the trials, then each trial's")
        print(f"{'profile':8} {'config':13} {'pipeline':18} {'wall':>5} {'CPU':>5}  trials")
        for r in rows:
            each = " ".join(
                f"{w:.2f}/{c:.2f}"
                for w, c in zip(r["wall_after_over_before"], r["cpu_after_over_before"])  # type: ignore[call-overload]
            )
            print(
                f"{r['profile']:8} {r['config']:13} {r['pipeline']:18} "
                f"{r['wall_median']:5.2f} {r['cpu_median']:5.2f}  {each}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
