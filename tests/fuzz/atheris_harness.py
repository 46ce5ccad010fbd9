"""Coverage-guided fuzzing with atheris (libFuzzer for Python). Not part of ``make test``.

Set up once, then run from the repository root::

    .venv/bin/pip install atheris
    .venv/bin/python tests/fuzz/atheris_harness.py --seed-corpus .cache/npy-corpus
    .venv/bin/python tests/fuzz/atheris_harness.py -max_total_time=600 .cache/npy-corpus

Any libFuzzer flag works (``-atheris_runs=N``, ``-max_len=4096``, ``-jobs=1`` ...). Each input's
first byte picks the declared dtype (and, for values 224 and up, also a read through a
``ram://`` path); the rest is the file. Every input goes through the same oracle as the
Hypothesis fuzzers (``tests/fuzz/oracle.py``, known bugs skipped). npyio's Python modules are
instrumented for coverage; the graph decoder is TensorFlow's C++ and is not, so the guidance
mostly steers the reference parser and the oracle's numpy side.

A failing input is saved under ``tests/fuzz/regressions/`` like ``make fuzz`` does, then
libFuzzer stops and writes its own ``crash-<sha1>`` file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def one_input(data: bytes) -> None:
    """Checks one input: byte 0 picks the dtype (and a ram:// read), the rest is the file."""
    from tests._npy_testing import DTYPE_NAMES  # npyio's CODES order: byte 0 indexes it
    from tests.fuzz import oracle, regressions

    if not data:
        return
    dtype = DTYPE_NAMES[data[0] % len(DTYPE_NAMES)]
    case = oracle.Case(data[1:], dtype, None, via_path=data[0] >= 224)
    try:
        oracle.check(case, known_bugs=True)
    except Exception as e:
        print(f"\nsaved: {regressions.save('atheris', case, e)}", file=sys.stderr)
        raise


def seed_corpus(directory: Path) -> None:
    """Valid files numpy's writer makes, one per stored dtype and a few shapes and versions."""
    from tests._npy_testing import DTYPE_NAMES, STORED_DTYPES, npy_bytes, sample
    from tests.fuzz import regressions

    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for name, stored in STORED_DTYPES:
        for shape, version, order in [
            ((), (1, 0), "C"),
            ((3,), (2, 0), "C"),
            ((2, 3), (3, 0), "F"),
            ((0, 2), (1, 0), "C"),
        ]:
            arr = sample(stored, shape).copy(order=order)
            selector = bytes([DTYPE_NAMES.index(name)])
            (directory / f"seed-{n:03d}").write_bytes(selector + npy_bytes(arr, version))
            n += 1
    for path in sorted(regressions.DIRECTORY.glob("*.npy")):
        (directory / f"regression-{path.stem}").write_bytes(bytes([5]) + path.read_bytes())
    print(f"wrote {n} seeds and the regression files to {directory}")


def main() -> None:
    # Importable without atheris (pytest's doctest collection imports every module); the
    # fuzzing imports happen here, npyio's under atheris' coverage instrumentation.
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if len(sys.argv) == 3 and sys.argv[1] == "--seed-corpus":
        seed_corpus(Path(sys.argv[2]))
        return
    import atheris
    import numpy  # noqa: F401 -- imported before instrumentation: not instrumented
    import tensorflow  # noqa: F401

    with atheris.instrument_imports(include=["npyio"]):
        import npyio  # noqa: F401 -- instrumented for coverage
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
