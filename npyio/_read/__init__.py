"""Readers: how one part of an element (a file, or a member of an ``.npz`` archive) becomes
its tensor (`npyio._read.part`), by backend (`npyio._read.backends`), and the public readers
(`npyio._read.api`). This module itself imports nothing, so that TF-free planning can name the
backends and read what each can do (`CAPABILITIES`) without building one."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BACKENDS", "CAPABILITIES", "Capabilities", "capabilities"]


@dataclass(frozen=True)
class Capabilities:
    """What a reader can do: the planner and the builders ask this, never a backend's name.

    Attributes:
        batched: Fetched bytes may be batched before they are decoded (batch-then-decode).
        python_free: No Python runs per element: the graph serializes (tf.data service, other
            processes, TPU hosts).
        members: Reads members of ``.npz`` archives (``key=``).
        one_get: Reads an object of known size with one GET on object storage, past
            TensorFlow's GCS read block (`npyio._read.objects.read_sized`).
        rows: Reads row ranges of files, for ``npyio.rows`` and packed directories
            (`npyio._read.backends.row_reader` gives its reader of them); False unless the
            backend says so.
    """

    batched: bool
    python_free: bool
    members: bool
    one_get: bool
    rows: bool = False


#: Each backend's capabilities, by name (`npyio._read.backends.reader` builds its reader).
CAPABILITIES = {
    "graph": Capabilities(batched=True, python_free=True, members=True, one_get=True, rows=True),
    "tfio": Capabilities(batched=False, python_free=True, members=False, one_get=False),
    "py_function": Capabilities(batched=False, python_free=False, members=False, one_get=False),
}
#: The backends, by name.
BACKENDS = tuple(CAPABILITIES)


def capabilities(backend: str) -> Capabilities:
    """What ``backend`` can do.

    Raises:
        ValueError: for an unknown backend name.
    """
    found = CAPABILITIES.get(backend)
    if found is None:
        raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
    return found
