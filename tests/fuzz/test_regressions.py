"""Every case in ``tests/fuzz/regressions/`` re-checked against all the fuzz invariants.

``make fuzz`` adds a case there for each failure it finds; hand-made cases sit beside them.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._npy_testing import npy_bytes
from tests.fuzz import oracle, regressions


def _params() -> list[object]:
    cases = regressions.load_all()
    if not cases:  # still one test, which passes: there is nothing to re-check
        return [pytest.param(None, id="none")]
    return [
        pytest.param(
            c,
            id=c.id,
            marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [],
        )
        for c in cases
    ]


@pytest.mark.parametrize("case", _params())
def test_regression(case: regressions.Regression | None) -> None:
    if case is not None:
        case.check()


def test_the_corpus_is_found():
    """load_all reads the checked-in corpus (a wrong DIRECTORY once made every case vanish
    into the one passing "none" test)."""
    assert regressions.DIRECTORY.is_dir(), regressions.DIRECTORY
    ids = {c.id for c in regressions.load_all()}
    assert {"bool-bytes-not-0-or-1", "python2-longs", "numpy-win64python2"} <= ids, sorted(ids)


def test_save_and_load_round_trip(tmp_path):
    """What make fuzz saves, the regression test reads back and checks."""
    assert regressions.load_all(tmp_path) == []
    assert regressions.load_all(tmp_path / "missing") == []
    good = npy_bytes(np.arange(3, dtype="<i2"))
    regressions.save("unit", oracle.Case(good, "int16", (3,)), AssertionError("boom"), tmp_path)
    regressions.save("unit", ([good, good], "int16"), AssertionError("boom"), tmp_path)
    (tmp_path / "loose.bin").write_bytes(b"\x93NUMPY")
    cases = regressions.load_all(tmp_path)
    assert sorted(c.batch for c in cases) == [False, False, True]
    assert cases[-1].id == "loose.bin" and len(cases[-1].dtypes) == len(oracle.SUPPORTED)
    for c in cases:
        c.check()
    single = next(c for c in cases if c.id.startswith("fuzz-unit") and not c.batch)
    assert single.files == (good,) and single.dtypes == ("int16",) and single.shape == (3,)
    assert "AssertionError: boom" in single.meta["error"]
