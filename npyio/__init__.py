"""npyio: feed NumPy ``.npy`` datasets into TensorFlow with graph ops only.

Files are read with ``tf.io.read_file`` and decoded by a pure-TensorFlow ``.npy`` parser, so an
input pipeline built with npyio runs no Python per element, scales across ``tf.data``'s parallel
map, serializes, and has static shapes.
"""

from npyio._dataset import dataset
from npyio._format import NpyHeader
from npyio._inspect import inspect
from npyio._npz import decode_npz, read_npz
from npyio._ops import decode_npy, read_npy
from npyio._rows import rows
from npyio.errors import BackendUnavailableError, NpyFormatError, NpyioError

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
