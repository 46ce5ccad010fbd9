"""Resolving ``inputs``/``labels`` arguments into lists of file paths, and pairing them."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

import tensorflow as tf

PathSpec = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
_GLOB_CHARS = frozenset("*?[")
_MAX_NAMED = 10


def _basename(path: str) -> str:
    return posixpath.basename(path.replace("\\", "/"))


def is_pattern(spec: object) -> bool:
    """True for a directory or glob given as one string (pairs by name), False for a sequence."""
    return isinstance(spec, (str, os.PathLike))


def resolve(spec: PathSpec, what: str, suffix: str = ".npy") -> list[str]:
    """Lists the files ``spec`` names: a directory (its ``*{suffix}``, sorted by name), a glob
    pattern (sorted by name), or a sequence of paths (kept in order).

    Raises:
        ValueError: if a directory or glob matches no file, or a sequence is empty.
        TypeError: for a spec of another type.
    """
    if is_pattern(spec):
        text = os.fspath(spec)  # type: ignore[arg-type]
        if tf.io.gfile.isdir(text):
            found = [p for p in tf.io.gfile.glob(posixpath.join(text, "*" + suffix))]
            where = f"directory {text!r} has no *{suffix} files"
        elif _GLOB_CHARS & set(text):
            found = tf.io.gfile.glob(text)
            where = f"glob {text!r} matches no files"
        else:
            found = [text]
            where = ""
        if not found:
            raise ValueError(f"{what}: {where}")
        return sorted(found, key=lambda p: (_basename(p), p))
    if isinstance(spec, Sequence) and not isinstance(spec, (bytes, bytearray)):
        paths = [os.fspath(p) for p in spec]
        if not paths:
            raise ValueError(f"{what}: the sequence of paths is empty")
        return paths
    raise TypeError(
        f"{what}: expected a directory, a glob pattern or a sequence of paths, got {spec!r}"
    )


def pair(
    inputs: list[str], labels: list[str], by_name: bool
) -> tuple[list[str], list[str]]:
    """Pairs inputs with labels, by file name (directories and globs) or by position.

    Raises:
        ValueError: for names found on one side only (the first ten are named), duplicate
            names, or sequences of unequal length.
    """
    if not by_name:
        if len(inputs) != len(labels):
            raise ValueError(
                f"inputs and labels pair by position but have different lengths: "
                f"{len(inputs)} inputs, {len(labels)} labels"
            )
        return inputs, labels
    by_input = _index(inputs, "inputs")
    by_label = _index(labels, "labels")
    only_inputs = sorted(by_input.keys() - by_label.keys())
    only_labels = sorted(by_label.keys() - by_input.keys())
    if only_inputs or only_labels:
        parts = []
        for side, names in (("inputs", only_inputs), ("labels", only_labels)):
            if names:
                shown = ", ".join(names[:_MAX_NAMED])
                more = f" and {len(names) - _MAX_NAMED} more" if len(names) > _MAX_NAMED else ""
                parts.append(f"{len(names)} found only in {side}: {shown}{more}")
        raise ValueError("inputs and labels do not pair up by file name: " + "; ".join(parts))
    names = sorted(by_input)
    return [by_input[n] for n in names], [by_label[n] for n in names]


def _index(paths: list[str], side: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in paths:
        name = _basename(p)
        if name in out:
            raise ValueError(
                f"{side}: two files share the name {name!r} ({out[name]} and {p}); "
                "pairing by name needs unique names"
            )
        out[name] = p
    return out


def shard_list(paths: list[str], num_shards: int, index: int) -> list[str]:
    """Every ``num_shards``-th path starting at ``index``: each path goes to exactly one shard."""
    return paths[index::num_shards]


def parse_shard(shard: object) -> tuple[int, int] | None:
    """``None``, ``(num_shards, index)`` or a ``tf.distribute.InputContext`` -> (n, i) or None."""
    if shard is None:
        return None
    if isinstance(shard, tf.distribute.InputContext):
        n, i = shard.num_input_pipelines, shard.input_pipeline_id
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
