"""``make fuzz``: run the fuzz targets for a while, with random (not derandomized) inputs.

    python -m tests.fuzz --seconds 600              # all targets, taking turns
    python -m tests.fuzz --seconds 60 --fuzzers damaged,batch
    python -m tests.fuzz --seconds 60 --no-save     # report failures without saving them

Each target runs in rounds of ``--chunk`` examples until the time is up. A failure is shrunk by
Hypothesis, printed, and saved as a regression case under ``tests/fuzz/regressions/`` (which
``make test`` then re-checks for good); that target then stops, the others go on. Exit status:
0 if nothing failed, 1 otherwise. ``--json PATH`` writes the counts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from hypothesis import Phase, settings

from tests.fuzz import oracle, regressions
from tests.fuzz.fuzzers import FUZZERS, LAST_FAILURE, RUNS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fuzz",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="total run time")
    parser.add_argument(
        "--fuzzers",
        default=",".join(FUZZERS),
        help=f"comma-separated targets (default: all of {', '.join(FUZZERS)})",
    )
    parser.add_argument("--chunk", type=int, default=200, help="examples per round and target")
    parser.add_argument("--no-save", action="store_true", help="do not save failing inputs")
    parser.add_argument("--json", help="write the counts to this file")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.fuzzers.split(",") if n.strip()]
    unknown = [n for n in names if n not in FUZZERS]
    if unknown:
        parser.error(f"unknown fuzzers {unknown}; choose from {list(FUZZERS)}")

    run_settings = settings(
        max_examples=args.chunk,
        derandomize=False,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        print_blob=True,
    )
    tests = {n: FUZZERS[n].test(run_settings, max_examples=args.chunk) for n in names}
    failures: dict[str, str] = {}
    start = time.monotonic()
    deadline = start + args.seconds
    print(f"fuzzing {', '.join(names)} for {args.seconds:.0f} s", flush=True)
    while time.monotonic() < deadline and len(failures) < len(names):
        for name in names:
            if name in failures or time.monotonic() >= deadline:
                continue
            LAST_FAILURE.clear()
            try:
                tests[name]()
            except Exception as e:
                traceback.print_exc()
                saved = "not saved"
                if LAST_FAILURE and not args.no_save and FUZZERS[name].saves:
                    saved = str(regressions.save(*LAST_FAILURE[0], e))
                failures[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                print(f"\n*** {name}: FAILED ({failures[name]}); saved: {saved}\n", flush=True)
        elapsed = time.monotonic() - start
        print(f"  {elapsed:6.0f} s: " + ", ".join(f"{n} {RUNS[n]}" for n in names), flush=True)

    elapsed = time.monotonic() - start
    total = sum(RUNS[n] for n in names)
    print(f"\n{total} inputs in {elapsed:.0f} s, {len(failures)} failing target(s)")
    for n in names:
        print(f"  {n:12} {RUNS[n]:8} inputs  {'FAILED: ' + failures[n] if n in failures else 'ok'}")
    print("outcomes (single files, batch rows included):")
    for key, count in sorted(oracle.STATS.items()):
        print(f"  {key:32} {count}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "seconds": round(elapsed, 1),
                    "inputs": {n: RUNS[n] for n in names},
                    "failures": failures,
                    "outcomes": dict(oracle.STATS),
                },
                f,
                indent=2,
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
