"""The native reader's core under sanitizers: ``python -m tests.fuzz.native --seconds 60``.

Builds ``npyio/_native/src/driver.cc`` with the core and ``-fsanitize=address,undefined``, runs
its fuzz mode (damaged and racing files read whole, by range and by window, and on a racing,
cancelled read pool, the kernel's invariants checked in C++, see the driver's comment), then
the differential check of the sampled damaged files against the graph path: where the kernel
said OK, ``npyio.read_npy`` with the header's dtype and shape decodes the same bytes; where it
doubted the file, either is fine (the graph path decides). Exit status 0 when both hold; the
counts are printed (and written with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

SRC = Path(__file__).resolve().parents[2] / "npyio" / "_native" / "src"
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-O1", "-g"]


def build_driver(out: Path) -> Path:
    """The sanitized driver, built into ``out``."""
    exe = out / "driver"
    compiler = os.environ.get("CXX") or "g++"
    command = [compiler, "-std=c++17", *SANITIZE, "-pthread", "-o", str(exe)]
    core = ("npy_read.cc", "npy_header.cc", "read_pool.cc")
    sources = [str(SRC / name) for name in ("driver.cc", *core)]
    subprocess.run([*command, *sources], check=True)
    return exe


def run_driver(exe: Path, seconds: float, work: Path, seed: int) -> dict[str, int]:
    """Runs the fuzz mode; its counts (``inputs``, ``sampled``, ``status NAME``)."""
    done = subprocess.run(
        [str(exe), "fuzz", str(seconds), str(work), str(seed)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise AssertionError(f"the native fuzz driver failed:\n{done.stdout}\n{done.stderr}")
    counts = {}
    for line in done.stdout.splitlines():
        *name, value = line.split()
        counts[" ".join(name)] = int(value)
    return counts


def differential(cases: Path) -> tuple[int, int]:
    """Checks each sampled case against the graph path: (cases the kernel read, doubted)."""
    import numpy as np

    import npyio

    read = doubted = 0
    for line in (cases / "verdicts.tsv").read_text().splitlines():
        name, verdict, descr, dims = line.split("\t")
        shape = tuple(int(d) for d in dims.split(",")) if dims else ()
        path = cases / f"{name}.npy"
        if verdict != "OK":
            doubted += 1
            continue
        read += 1
        got = npyio.read_npy(str(path), np.dtype(descr), shape).numpy()
        header = (cases / f"{name}.header").read_bytes()
        payload = path.read_bytes()[len(header) :]
        if np.ascontiguousarray(got).tobytes() != payload:
            raise AssertionError(f"{path}: the kernel read it, the graph path decodes other bytes")
    return read, doubted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.native", description=__doc__)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    parser.add_argument("--json", help="write the counts to this file")
    args = parser.parse_args(argv)
    # Files in memory where there is a tmpfs: the fuzz loop is bound by file system calls.
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = Path(tempfile.mkdtemp(prefix="npyio-native-fuzz-", dir=base))
    try:
        exe = build_driver(work)
        counts = run_driver(exe, args.seconds, work / "run", args.seed)
        read, doubted = differential(work / "run" / "cases")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts |= {"differential read": read, "differential doubted": doubted, "seed": args.seed}
    print(f"native: {counts['inputs']} inputs in {args.seconds:.0f} s (seed {args.seed})")
    for key, value in sorted(counts.items()):
        print(f"  {key:28} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
