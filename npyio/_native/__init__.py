"""npyio's native reader, in a room of its own: a TensorFlow-free C++ core (``src/npy_read.cc``:
one file read into a caller's buffer, or doubted; ``src/npy_header.cc``: a file's header
parsed), thin TensorFlow ops over it (``src/op.cc``: ``NpyioReadFiles``, a batch of paths of
one shape into one tensor and an ``ok`` per file; ``NpyioReadFile``, one file of any shape;
``NpyioReadWindows``, a window of each file's array placed by the shape its header gives, only
its bytes read; ``NpyioReadRanges``, byte ranges of
files for the pieces of rows and packs; ``NpyioReadRows``, a batch of rows of files numbered
as one sequence, straight into one tensor), a dataset op (``src/batch_dataset.cc``:
``NpyioBatchDataset``, the loader's stream of units read into batches on threads of its own,
batches kept in flight ahead of the consumer, the graph path called only for a batch with a
file the core doubts),
a fuzz and benchmark driver (``src/driver.cc``), and one Python module that builds, caches
and loads the op (`npyio._native.library`).

``pip install`` compiles nothing: the library is built against the installed TensorFlow at
first use, or ahead of time with ``npyio native --build``. A file the kernel doubts goes
through the graph path, which decodes or refuses it with its own words.

Environment variables:

- ``NPYIO_NATIVE``: unset = use the native reader where it builds (else one line on stderr,
  once per process, says why not); ``0`` = never, silently; ``1`` = required (an error if it
  cannot be built or loaded).
- ``NPYIO_CACHE``: the cache directory (else ``$XDG_CACHE_HOME/npyio``, else
  ``~/.cache/npyio``); libraries go in ``native/KEY/``.
- ``CXX``: the C++ compiler (else ``c++`` or ``g++`` on ``PATH``).
- ``NPYIO_COMPILE_TIMEOUT_S``: how long one compiler run may take (300 s by default).
- ``NPYIO_REMOTE_BUFFER_MIB``: the most address space the remote reads' buffers ask at once
  (``library.remote_stats`` says what they did).
"""

from npyio._native.library import (
    NativeStatus,
    batch_dataset,
    build,
    ops,
    preload,
    read_file,
    read_files,
    read_ranges,
    read_rows,
    read_windows,
    status,
)

__all__ = [
    "NativeStatus",
    "batch_dataset",
    "build",
    "ops",
    "preload",
    "read_file",
    "read_files",
    "read_ranges",
    "read_rows",
    "read_windows",
    "status",
]
