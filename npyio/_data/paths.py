"""Sources to paths: the one resolver and the one pairing rule of every entry point.

A *source* is what a user passes as ``inputs`` or ``labels`` (or a ``PATH`` on the command
line): a directory (its ``*.npy`` files), a glob pattern, one file, or a sequence of paths.
`resolve` turns it into a `Source`; `pair` pairs two of them. `npyio.dataset`, `npyio.rows`,
`npyio.inspect` and the ``inspect``/``verify`` commands all go through here, so they agree on
which files a source means and which files pair.

Rules:
- A directory stands for its ``*.npy`` files (``*.npz`` with ``key=``), not recursively; a glob
  for the files it matches. Both are sorted by file name (then by path). A sequence keeps its
  order. One file is taken whatever its name.
- Inputs and labels pair **by file name** when either side is a directory or a glob (the file
  names then carry the meaning), and **by position** otherwise (sequences, single files).
- Local paths are listed with ``os.scandir`` and ``glob``; any other path (``gs://``,
  ``ram://``, ...) with ``tf.io.gfile``, imported only then: this module imports no TensorFlow.
"""

from __future__ import annotations

import glob as globlib
import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "NO_SUCH_FILE",
    "PathSpec",
    "Source",
    "by_name",
    "gfile",
    "is_local",
    "one_path",
    "pair",
    "parse_shard",
    "resolve",
    "shard_list",
    "unpaired",
]

PathSpec = Any  # str | bytes | os.PathLike | a sequence, array or 1-D string tensor of those
GLOB_CHARS = frozenset("*?[")
#: Names listed in a pairing error (the rest are counted).
MAX_NAMED = 10
#: Items of a bad argument shown in an error.
MAX_SHOWN = 3

NO_SUCH_FILE = "no such file or directory"
NO_MATCH = "no file matches this pattern"
NOT_A_DIR = "not a directory"
EMPTY = "the sequence of paths is empty"


def is_local(path: str) -> bool:
    """Whether ``path`` is on the local file system (read with ``os``, not ``tf.io.gfile``)."""
    return "://" not in path


def gfile() -> Any:
    """``tf.io.gfile``, importing TensorFlow on first use."""
    import tensorflow as tf

    return tf.io.gfile


def no_files(suffix: str) -> str:
    return f"directory has no {suffix} files"


@dataclass
class Source:
    """One source and the files it stands for.

    ``kind`` is ``"dir"``, ``"glob"``, ``"file"``, ``"list"`` or ``"missing"``; ``problem``
    says why it stands for no file at all (a missing path, an empty directory, ...).
    """

    arg: str
    kind: str
    paths: list[str] = field(default_factory=list)
    problem: str | None = None

    @property
    def by_name(self) -> bool:
        """Whether the file names carry the meaning (a directory or a glob)."""
        return self.kind in ("dir", "glob")

    def error(self, what: str) -> ValueError:
        """The API's error for a source with a problem, naming it."""
        if self.problem == NO_SUCH_FILE:
            return ValueError(f"{what}: {self.arg!r} does not exist (no such file or directory)")
        if self.kind == "glob":
            return ValueError(f"{what}: glob {self.arg!r} matches no files")
        if self.kind == "dir" and self.problem and self.problem.startswith("directory has no"):
            return ValueError(f"{what}: directory {self.arg!r} has no *{self.problem[17:]}")
        return ValueError(f"{what}: {self.arg!r}: {self.problem}")


def basename(path: str) -> str:
    return posixpath.basename(path.replace("\\", "/"))


def _name_key(path: str) -> tuple[str, str]:
    return basename(path), path


def _shown(items: Sequence[Any]) -> str:
    head = ", ".join(repr(x) for x in list(items[:MAX_SHOWN]))
    more = f", ... ({len(items)} in all)" if len(items) > MAX_SHOWN else ""
    return f"[{head}{more}]"


def _describe(spec: object) -> str:
    """A short description of a bad argument: never a whole array."""
    if isinstance(spec, (str, bytes, os.PathLike)):
        return repr(spec)
    try:
        items = list(spec)  # type: ignore[call-overload]
    except TypeError:
        return f"{type(spec).__name__} {spec!r:.80}"
    return f"{type(spec).__name__} {_shown(items)}"


def _text(item: object) -> str | None:
    """One path as a str: str, bytes, os.PathLike, numpy str/bytes scalars; else None."""
    if isinstance(item, (str, bytes, os.PathLike)):
        text = os.fsdecode(item)
        return text if text else None
    return None


def _items(spec: object) -> list[object] | None:
    """The items of a sequence-like source (sequence, numpy array, 1-D string tensor)."""
    if hasattr(spec, "numpy") and hasattr(spec, "dtype") and hasattr(spec, "shape"):
        value = spec.numpy()  # an eager tf.Tensor (a symbolic one has no value to list)
        return [value] if getattr(value, "ndim", 1) == 0 else list(value)
    if isinstance(spec, np.ndarray):
        if spec.ndim == 0:
            return [spec.item()]
        return list(spec.tolist()) if spec.ndim == 1 else None
    if isinstance(spec, Sequence) and not isinstance(spec, (str, bytes, bytearray)):
        return list(spec)
    return None


def one_path(spec: object, what: str = "path") -> str:
    """A single path argument as a str (``str``, ``bytes``, ``os.PathLike``, a 0-d array).

    Raises:
        TypeError: for anything else.
    """
    text = _text(spec)
    if text is None and len(getattr(spec, "shape", (0,))) == 0:  # a 0-d array or tensor
        items = _items(spec)
        text = _text(items[0]) if items else None
    if text is None:
        raise TypeError(
            f"{what}: expected a path (str, bytes or os.PathLike), got {_describe(spec)}"
        )
    return text


def _list_dir(path: str, suffix: str) -> list[str]:
    """The directory's ``*{suffix}`` files, sorted by name. Raises OSError if unlistable."""
    if is_local(path):
        with os.scandir(path) as entries:
            names = [e.name for e in entries if e.name.endswith(suffix)]
        names.sort()
        return [os.path.join(path, n) for n in names]
    import tensorflow as tf

    try:
        found = gfile().glob(posixpath.join(path, "*" + suffix))
    except tf.errors.OpError as e:
        raise OSError(e.message) from e
    return sorted(found, key=_name_key)


def _isdir(path: str) -> bool:
    return os.path.isdir(path) if is_local(path) else bool(gfile().isdir(path))


def _exists(path: str) -> bool:
    return os.path.lexists(path) if is_local(path) else bool(gfile().exists(path))


def _glob(pattern: str) -> list[str]:
    found = globlib.glob(pattern) if is_local(pattern) else gfile().glob(pattern)
    return sorted(found, key=_name_key)


def resolve(
    spec: PathSpec, what: str = "inputs", suffix: str = ".npy", *, strict: bool = True
) -> Source:
    """The files ``spec`` stands for (see the module docstring).

    With ``strict`` (the API), a source that stands for no file raises; without (the command
    line, which reports every problem), it comes back with its ``problem`` set.

    Raises:
        ValueError: with ``strict``: a path that does not exist (named), a directory with no
            ``*{suffix}`` files, a glob that matches nothing, an empty sequence.
        TypeError: for a source of another type; at most a few of its items are shown.
    """
    text = _text(spec)
    if text is not None:
        source = _resolve_text(text, suffix)
    else:
        items = _items(spec)
        if items is None:
            raise TypeError(
                f"{what}: expected a directory, a glob pattern or a sequence of paths, "
                f"got {_describe(spec)}"
            )
        paths = [_text(item) for item in items]
        if any(p is None for p in paths):
            bad = [item for item, p in zip(items, paths) if p is None]
            raise TypeError(
                f"{what}: expected paths (str, bytes or os.PathLike), got {len(bad)} other "
                f"item{'s' * (len(bad) != 1)} in {_describe(spec)}: {_shown(bad)}"
            )
        source = Source(f"<{len(paths)} paths>", "list", paths, None if paths else EMPTY)  # type: ignore[arg-type]
    if strict and source.problem is not None:
        raise source.error(what)
    return source


def _resolve_text(text: str, suffix: str) -> Source:
    if _isdir(text):
        try:
            paths = _list_dir(text, suffix)
        except OSError as e:  # no permission to list it, ...
            return Source(text, "dir", [], e.strerror.lower() if e.strerror else str(e))
        return Source(text, "dir", paths, None if paths else no_files(suffix))
    if _exists(text):
        return Source(text, "file", [text])
    if GLOB_CHARS & set(text):
        paths = _glob(text)
        return Source(text, "glob", paths, None if paths else NO_MATCH)
    return Source(text, "missing", [], NO_SUCH_FILE)


def by_name(inputs: Source, labels: Source) -> bool:
    """The pairing rule: by file name when either side is a directory or a glob."""
    return inputs.by_name or labels.by_name


def _index(paths: list[str], side: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in paths:
        name = basename(p)
        if name in out:
            raise ValueError(
                f"{side}: two files share the name {name!r} ({out[name]} and {p}); "
                "pairing by name needs unique names"
            )
        out[name] = p
    return out


def unpaired(inputs: Source, labels: Source) -> tuple[list[str], list[str]]:
    """Under the pairing rule, the inputs with no label and the labels with no input."""
    if not by_name(inputs, labels):
        n = min(len(inputs.paths), len(labels.paths))
        return inputs.paths[n:], labels.paths[n:]
    xs = {basename(p) for p in inputs.paths}
    ys = {basename(p) for p in labels.paths}
    return (
        [p for p in inputs.paths if basename(p) not in ys],
        [p for p in labels.paths if basename(p) not in xs],
    )


def pair(inputs: Source, labels: Source) -> tuple[list[str], list[str]]:
    """Pairs inputs with labels under the pairing rule; pairs are in the inputs' order (by
    name: sorted by name).

    Raises:
        ValueError: for names found on one side only (the first ten are named), duplicate
            names, or sequences of unequal length.
    """
    xs, ys = inputs.paths, labels.paths
    if not by_name(inputs, labels):
        if len(xs) != len(ys):
            raise ValueError(
                f"inputs and labels pair by position but have different lengths: "
                f"{len(xs)} inputs, {len(ys)} labels"
            )
        return xs, ys
    by_input = _index(xs, "inputs")
    by_label = _index(ys, "labels")
    if by_input.keys() != by_label.keys():
        only_inputs = sorted(by_input.keys() - by_label.keys())
        only_labels = sorted(by_label.keys() - by_input.keys())
        parts = []
        for side, names in (("inputs", only_inputs), ("labels", only_labels)):
            if names:
                shown = ", ".join(names[:MAX_NAMED])
                more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
                parts.append(f"{len(names)} found only in {side}: {shown}{more}")
        raise ValueError("inputs and labels do not pair up by file name: " + "; ".join(parts))
    names = sorted(by_input)
    return [by_input[n] for n in names], [by_label[n] for n in names]


def shard_list(paths: list[str], num_shards: int, index: int) -> list[str]:
    """Every ``num_shards``-th path starting at ``index``: each path goes to exactly one shard."""
    return paths[index::num_shards]


def parse_shard(shard: object) -> tuple[int, int] | None:
    """``None``, ``(num_shards, index)`` or a ``tf.distribute.InputContext`` -> (n, i) or None."""
    if shard is None:
        return None
    if hasattr(shard, "num_input_pipelines") and hasattr(shard, "input_pipeline_id"):
        n, i = shard.num_input_pipelines, shard.input_pipeline_id  # a tf.distribute.InputContext
    else:
        try:
            n, i = shard  # type: ignore[misc]
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"shard must be (num_shards, index) or a tf.distribute.InputContext, got {shard!r}"
            ) from e
    if not (isinstance(n, int) and isinstance(i, int) and n >= 1 and 0 <= i < n):
        raise ValueError(
            f"shard must satisfy num_shards >= 1 and 0 <= index < num_shards, got {shard!r}"
        )
    return n, i
