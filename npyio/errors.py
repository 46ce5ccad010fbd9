"""Exceptions raised by npyio.

Errors found while a dataset is *built* (in Python) are raised as the classes below. Errors found
when the ops *run* come from TensorFlow ops, so they are ``tf.errors.InvalidArgumentError`` (or
``tf.errors.NotFoundError`` for a missing file); their messages use the same words as the
Python-side errors, ``"PATH: reason"``:

- eagerly (`npyio.read_npy`, `npyio.decode_npy`, `npyio.read_npz`, `npyio.decode_npz`), the
  message is exactly ``"PATH: reason"`` (``<bytes>``, ``<bytes>[i]`` or ``<bytes>[key]`` for
  bytes; ``"PATH: no such file"`` for a missing file);
- while a dataset is iterated, TensorFlow wraps it: the first line of the message ends with
  ``assertion failed: [PATH: reason]``, with quotes and backslashes escaped;
- with ``npyio.dataset(..., ignore_errors=True)``, each skipped file is printed to stderr as
  ``npyio: skipping PATH: reason``, whatever ``TF_CPP_MIN_LOG_LEVEL`` says.
"""

from __future__ import annotations

__all__ = [
    "BackendUnavailableError",
    "IncompletePackError",
    "NpyFormatError",
    "NpyioError",
    "PackIndexError",
]


class NpyioError(Exception):
    """Base class of every exception npyio raises itself."""


class NpyFormatError(NpyioError, ValueError):
    """A file is not a `.npy` file npyio can decode.

    The message has the form ``"{path}: {what is wrong} -- expected {x}, got {y}"``. The separator
    is ASCII because eager TensorFlow shows assertion data as escaped bytes.

    Attributes:
        path: The file (or a label such as ``"<bytes>"``) the error is about.
        reason: The message without the leading path.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class PackIndexError(NpyFormatError):
    """A pack's index (``npyio-pack.json``) is not one npyio can read, or its shards contradict
    it: ``path`` is the index, ``reason`` names the entry (``shards[0].rows``) or the shard."""


class BackendUnavailableError(NpyioError, RuntimeError):
    """The requested decoding backend cannot run in this environment."""


class IncompletePackError(NpyioError, ValueError):
    """A directory holds part of a pack but no index: the pack was interrupted (run
    ``npyio pack`` again, with ``overwrite``)."""
