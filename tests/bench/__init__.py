"""Tests of the scripts in ``bench/`` (``memory.py``, ``scale.py``), which are not a package:
`load` imports one by its path."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str) -> ModuleType:
    """``bench/{name}.py`` as a module of its own (``npyio_bench_{name}``)."""
    spec = importlib.util.spec_from_file_location(f"npyio_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
