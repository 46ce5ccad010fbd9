"""npyio: feed NumPy ``.npy`` datasets into TensorFlow with graph ops only.

Files are read with ``tf.io.read_file`` and decoded by a pure-TensorFlow ``.npy`` parser, so an
input pipeline built with npyio runs no Python per element, scales across ``tf.data``'s parallel
map, serializes, and has static shapes.

The names that need TensorFlow are imported on first use, so that ``import npyio``,
``npyio.inspect`` and the ``npyio inspect``/``verify`` commands run without loading TensorFlow
(it is imported only for a path that is not local: ``gs://``, ``ram://``, ...).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from npyio._format.npy import NpyHeader
from npyio._format.window import Crop, Foreground
from npyio.errors import BackendUnavailableError, NpyFormatError, NpyioError, PackIndexError

if TYPE_CHECKING:
    from npyio._graph.decode import decode_npy
    from npyio._io.header import inspect
    from npyio._read.api import read_npy, read_npz
    from npyio._read.archive import decode_npz
    from npyio._sources.dataset import dataset
    from npyio._sources.directory import dataset_from_directory
    from npyio._sources.pack_write import pack
    from npyio._sources.rows import rows

__all__ = [
    "BackendUnavailableError",
    "Crop",
    "Foreground",
    "NpyFormatError",
    "NpyHeader",
    "NpyioError",
    "PackIndexError",
    "dataset",
    "dataset_from_directory",
    "decode_npy",
    "decode_npz",
    "inspect",
    "pack",
    "read_npy",
    "read_npz",
    "rows",
]
__version__ = "0.1.0"

if sys.modules.get("tensorflow") is not None:
    # TensorFlow came first (as in a tf.data service worker, docs/scaling.md): register the
    # native reader's op, if it is built, so that a graph that uses it can run here. This
    # never builds and never prints; `import npyio` alone still imports no TensorFlow.
    from npyio._native import preload as _preload

    _preload()

_LAZY = {
    "dataset": "npyio._sources.dataset",
    "dataset_from_directory": "npyio._sources.directory",
    "decode_npy": "npyio._graph.decode",
    "decode_npz": "npyio._read.archive",
    "inspect": "npyio._io.header",
    "pack": "npyio._sources.pack_write",
    "read_npy": "npyio._read.api",
    "read_npz": "npyio._read.api",
    "rows": "npyio._sources.rows",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'npyio' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
