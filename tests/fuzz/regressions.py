"""Regression files: inputs that once broke an invariant (or were crafted by hand), kept in
``tests/fuzz/regressions/`` and re-checked by ``test_regressions.py`` on every ``make test``.

Each case is a JSON file (``NAME.json``) beside its data file(s)::

    {
      "files": ["NAME.npy"],        # default: NAME.npy, else NAME.bin
      "dtype": "float64",           # the declared dtype; default: every dtype npyio decodes
      "shape": [null, 3],           # the declared shape; default null (any shape)
      "batch": false,               # true: the files are decoded as one rank-1 batch
      "expect": "accepted",         # optional: "accepted", or the exact reason npyio must give
      "xfail": "why",               # optional: a known bug, an expected (strict) failure
      "note": "what it is", "found": "when and by what"
    }

A data file that no JSON file names is checked on its own against every dtype.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npyio._format import npy
from tests.fuzz import oracle

DIRECTORY = Path(__file__).resolve().parent / "regressions"
DATA_SUFFIXES = (".npy", ".bin")


@dataclass(frozen=True)
class Regression:
    """One regression case, read back from its files."""

    id: str
    files: tuple[bytes, ...]
    dtypes: tuple[str, ...]
    shape: tuple[int | None, ...] | None = None
    batch: bool = False
    expect: str | None = None
    xfail: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def check(self) -> None:
        """Re-checks every invariant (and the expected outcome, if the case names one)."""
        if self.batch:
            oracle.check_batch(list(self.files), self.dtypes[0], self.shape)
            return
        for dtype in self.dtypes:
            outcome = oracle.check(oracle.Case(self.files[0], dtype, self.shape, via_path=True))
            if self.expect is not None:
                got = "accepted" if outcome.accepted else outcome.reason
                assert got == self.expect, (self.id, dtype, got, self.expect)


def _shape(value: Any) -> tuple[int | None, ...] | None:
    return None if value is None else tuple(value)


def load_all(directory: Path = DIRECTORY) -> list[Regression]:
    """Every case in ``directory`` (none if it is empty or missing), sorted by id."""
    if not directory.is_dir():
        return []
    cases, named = [], set()
    for spec_path in sorted(directory.glob("*.json")):
        spec = json.loads(spec_path.read_text())
        stem = spec_path.stem
        names = spec.get("files") or [
            next(
                (stem + s for s in DATA_SUFFIXES if (directory / (stem + s)).exists()),
                stem + ".npy",
            )
        ]
        named.update(names)
        dtype = spec.get("dtype")
        cases.append(
            Regression(
                id=stem,
                files=tuple((directory / n).read_bytes() for n in names),
                dtypes=(dtype,) if dtype else tuple(npy.CODES.values()),
                shape=_shape(spec.get("shape")),
                batch=bool(spec.get("batch", False)),
                expect=spec.get("expect"),
                xfail=spec.get("xfail"),
                meta=spec,
            )
        )
    for path in sorted(directory.iterdir()):
        if path.suffix in DATA_SUFFIXES and path.name not in named:
            cases.append(Regression(path.name, (path.read_bytes(),), tuple(npy.CODES.values())))
    return sorted(cases, key=lambda c: c.id)


def save(fuzzer: str, value: Any, error: BaseException, directory: Path = DIRECTORY) -> Path:
    """Saves a failing fuzz input as a regression case; returns its JSON file."""
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(value, oracle.Case):
        files, dtype, shape, batch = [value.data], value.dtype, value.shape, False
    else:  # a batch: (files, dtype)
        files, dtype, shape, batch = list(value[0]), value[1], None, True
    digest = hashlib.sha1(b"".join(files) + dtype.encode() + repr(shape).encode()).hexdigest()
    stem = f"fuzz-{fuzzer}-{digest[:12]}"
    names = [f"{stem}.npy"] if not batch else [f"{stem}-{i}.npy" for i in range(len(files))]
    for name, data in zip(names, files):
        (directory / name).write_bytes(data)
    spec = {
        "files": names,
        "dtype": dtype,
        "shape": None if shape is None else list(shape),
        "batch": batch,
        "found": f"{datetime.date.today().isoformat()} by make fuzz ({fuzzer})",
        "error": f"{type(error).__name__}: {error}"[:2000],
    }
    spec_path = directory / f"{stem}.json"
    spec_path.write_text(json.dumps(spec, indent=2) + "\n")
    return spec_path
