"""npyio: feed NumPy ``.npy`` datasets into TensorFlow with graph ops only.

Files are read with ``tf.io.read_file`` and decoded by a pure-TensorFlow ``.npy`` parser, so an
input pipeline built with npyio runs no Python per element, scales across ``tf.data``'s parallel
map, serializes, and has static shapes.

The names that need TensorFlow are imported on first use, so that ``import npyio`` (and the
``npyio inspect``/``verify`` commands) start without loading TensorFlow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from npyio._format import NpyHeader
from npyio.errors import BackendUnavailableError, NpyFormatError, NpyioError

if TYPE_CHECKING:
    from npyio._dataset import dataset
    from npyio._inspect import inspect
    from npyio._npz import decode_npz, read_npz
    from npyio._ops import decode_npy, read_npy
    from npyio._rows import rows

__all__ = [
    "BackendUnavailableError",
    "NpyFormatError",
    "NpyHeader",
    "NpyioError",
    "dataset",
    "decode_npy",
    "decode_npz",
    "inspect",
    "read_npy",
    "read_npz",
    "rows",
]
__version__ = "0.1.0"

_LAZY = {
    "dataset": "npyio._dataset",
    "decode_npy": "npyio._ops",
    "decode_npz": "npyio._npz",
    "inspect": "npyio._inspect",
    "read_npy": "npyio._ops",
    "read_npz": "npyio._npz",
    "rows": "npyio._rows",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'npyio' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
