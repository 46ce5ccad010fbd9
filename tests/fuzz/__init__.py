"""Differential fuzzing of npyio's parsers against ``np.load``.

- ``_oracle``: one file through the graph decoder, the reference parser and ``np.load``, the
  invariants between them, and the documented policy as a predicate.
- ``strategies``: Hypothesis strategies that mutate valid files and make random ones.
- ``fuzzers``: the fuzz targets, shared by the short ``make test`` run (``test_fuzz.py``), the
  long ``make fuzz`` run (``python -m tests.fuzz``) and the atheris harness.
- ``regressions``: saving a failing input under ``tests/fuzz/regressions/`` and reading it back.
"""
