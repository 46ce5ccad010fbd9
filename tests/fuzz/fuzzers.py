"""The fuzz targets, each a Hypothesis strategy and a body that runs the oracle.

One definition serves three runners: ``test_fuzz.py`` (a short, derandomized run in
``make test``), ``python -m tests.fuzz`` (``make fuzz``: random, for as long as asked, saving
failures as regression files) and ``atheris_harness.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npyio._format import npy
from tests.fuzz import oracle, pack_index, strategies

#: The input of the body that failed last (the fuzz driver saves it as a regression file).
LAST_FAILURE: list[tuple[str, Any]] = []
#: Inputs each target has checked in this process.
RUNS: Counter[str] = Counter()


@dataclass(frozen=True)
class Fuzzer:
    """A fuzz target.

    Attributes:
        name: Its id (``make fuzz FUZZERS=name``, regression file names).
        strategy: Draws one input.
        body: Checks one input (raises on a broken invariant).
        ci_examples: Examples in the ``make test`` run.
        saves: Whether a failing input is saved as a regression file (``.npy`` inputs only).
    """

    name: str
    strategy: st.SearchStrategy
    body: Callable[[Any], object]
    ci_examples: int
    saves: bool = True

    def run(self, value: Any) -> None:
        """The body, remembering ``value`` if it fails."""
        RUNS[self.name] += 1
        try:
            self.body(value)
        except BaseException:
            LAST_FAILURE[:] = [(self.name, value)]
            raise

    def test(self, parent: settings | None = None, **overrides: Any) -> Callable[[], None]:
        """A Hypothesis test of this target: at least ``ci_examples`` examples by default."""
        base = parent or settings.default
        options = {
            "max_examples": max(self.ci_examples, base.max_examples),
            "suppress_health_check": [
                HealthCheck.too_slow,
                HealthCheck.data_too_large,
                HealthCheck.filter_too_much,
            ],
            **overrides,
        }

        @settings(base, **options)
        @given(self.strategy)
        def fuzz(value: Any) -> None:
            self.run(value)

        fuzz.__name__ = fuzz.__qualname__ = f"fuzz_{self.name.replace('-', '_')}"
        return fuzz


@st.composite
def _cases(draw: st.DrawFn, files: st.SearchStrategy, other_dtypes: bool = True) -> oracle.Case:
    data, name = draw(files)
    dtype = draw(strategies.declared(name)) if other_dtypes else name
    return oracle.Case(data, dtype, None, via_path=draw(st.integers(0, 7)) == 0)


@st.composite
def _static_cases(draw: st.DrawFn) -> oracle.Case:
    data, dtype, shape = draw(strategies.static_files())
    return oracle.Case(data, dtype, shape, via_path=draw(st.integers(0, 7)) == 0)


#: Header limits the limits fuzzer reads with: a few, since each one is a trace of its own.
#: numpy's writer makes headers of 118 (version 1.0) and 116 bytes (2.0, 3.0).
HEADER_LIMITS = [npy.MAX_HEADER_SIZE, 0, 64, 115, 116, 117, 118, 119, 200]


@st.composite
def _limit_cases(draw: st.DrawFn) -> oracle.Case:
    data, name = draw(
        st.one_of(strategies.valid_files().map(lambda f: f[:2]), strategies.damaged_files())
    )
    n = len(data)
    max_file_size = draw(
        st.one_of(
            st.none(),
            st.sampled_from([n - 1, n, n + 1, 0]).map(lambda v: max(v, 0)),
            st.integers(0, n + 16),
        )
    )
    return oracle.Case(
        data,
        name,
        None,
        via_path=draw(st.integers(0, 3)) == 0,
        max_header_size=draw(st.sampled_from(HEADER_LIMITS)),
        max_file_size=max_file_size,
    )


def _check(case: oracle.Case) -> None:
    oracle.check(case, known_bugs=True)


def _check_batch(batch: tuple[list[bytes], str]) -> None:
    oracle.check_batch(*batch, known_bugs=True)


FUZZERS: dict[str, Fuzzer] = {
    f.name: f
    for f in (
        Fuzzer("damaged", _cases(strategies.damaged_files()), _check, 300),
        Fuzzer("lenient", _cases(strategies.lenient_files(), other_dtypes=False), _check, 150),
        Fuzzer("properties", _cases(strategies.mutated_files()), _check, 100),
        Fuzzer("random", _cases(strategies.random_files()), _check, 100),
        Fuzzer("static", _static_cases(), _check, 100),
        Fuzzer("batch", strategies.batches(), _check_batch, 60),
        Fuzzer("limits", _limit_cases(), _check, 100),
        Fuzzer("index", pack_index.mutated_indexes(), pack_index.check, 30, saves=False),
    )
}
