"""Every Python example in README.md runs, in order, on the sample tree the README describes.

A block preceded by ``<!-- not run: REASON -->`` is skipped (servers, other machines); every
other ```` ```python ```` block runs in one namespace, in a temporary directory holding ``data/``
as the README lays it out. Examples rot silently otherwise.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"(<!-- not run: [^>]*-->\s*)?```python\n(.*?)```", re.DOTALL)


def blocks() -> list[tuple[int, str, bool]]:
    """(line, code, runs) for each Python block of the README."""
    text = README.read_text()
    return [
        (text[: m.start()].count("\n") + 1, m.group(2), m.group(1) is None)
        for m in _BLOCK.finditer(text)
    ]


def make_data(root: Path, n: int = 12) -> None:
    """The README's sample layouts under ``root/data``."""
    data = root / "data"
    dirs = ("inputs", "labels", "img", "mask", "archives", "classes/cat", "classes/dog/more")
    for d in (*dirs, "seq/x", "seq/y"):
        (data / d).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name = f"{i:04d}.npy"
        np.save(data / "inputs" / name, np.full((64, 64, 3), i, np.float32))
        np.save(data / "labels" / name, np.eye(10, dtype=np.float32)[i % 10])
        np.save(data / "img" / name, np.full((32, 32, 3), i, np.float32))
        np.save(data / "mask" / name, np.full((32, 32, 1), i % 2, np.uint8))
        np.savez_compressed(
            data / "archives" / f"{i:04d}.npz", x=np.full((8,), i, np.float32), y=np.int64(i % 2)
        )
        # variable-length sequences: 2 to 6 steps of 8 features
        np.save(data / "seq" / "x" / name, np.full((i % 5 + 2, 8), i, np.float32))
        np.save(data / "seq" / "y" / name, np.float32(i % 2))
        cls = "cat" if i % 2 else "dog/more" if i % 3 == 0 else "dog"
        np.save(data / "classes" / cls / name, np.full((16,), i, np.float32))
    np.save(data / "labels.npy", np.arange(n) % 3)
    np.save(data / "train_x.npy", np.arange(n * 1000 * 20, dtype=np.float32).reshape(-1, 20))
    np.save(data / "train_y.npy", np.arange(n * 1000) % 2)


@pytest.mark.slow
def test_readme_examples_run(tmp_path, monkeypatch):
    make_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    namespace: dict[str, object] = {"__name__": "readme"}
    ran = 0
    for line, code, runs in blocks():
        if not runs:
            continue
        try:
            with warnings.catch_warnings():
                # Keras 3 warns that fit's default shuffle=True is ignored for a tf.data
                # dataset (npyio shuffles): its noise, not the example's.
                warnings.filterwarnings("ignore", "`shuffle=True` was passed", UserWarning)
                exec(compile(code, f"README.md:{line}", "exec"), namespace)
        except Exception as e:
            raise AssertionError(f"README.md line {line}: {type(e).__name__}: {e}") from e
        ran += 1
    assert ran >= 5, "the README's examples are not being found"
