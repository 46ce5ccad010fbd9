"""Nested sources: a dict or tuple of sources stands for one part of every element per leaf.

A *structure* is the shape of the sources with `LEAF` for each source (`structure_of`); every
part is then one column of files, flattened in the structure's order (`flatten`), and an
element is put back together from its decoded parts (`unflatten`). TF-free.
"""

from __future__ import annotations

import os

import numpy as np

from npyio._pipeline.paths import GLOB_CHARS, isdir

__all__ = [
    "LEAF",
    "flatten",
    "label_values",
    "leaf_names",
    "per_part",
    "structure_of",
    "unflatten",
]

#: A leaf of a structure template: one part of every element (one column of files).
LEAF = "<part>"


def _is_source_structure(spec: object) -> bool:
    """Whether ``spec`` is a structure of several sources (a dict, or a tuple whose items are
    sources), not one source. A list, an array or a tuple of *file* paths is one source: a
    tuple is a structure when an item is itself a structure or a sequence, or when its first
    item is a directory or a glob (a source that stands for many files)."""
    if isinstance(spec, dict):
        return True
    if not isinstance(spec, tuple) or not spec:
        return False
    if any(isinstance(item, (dict, tuple, list, np.ndarray)) for item in spec):
        return True
    first = spec[0]
    if isinstance(first, (str, bytes, os.PathLike)):
        text = os.fsdecode(first)
        return bool(GLOB_CHARS & set(text)) or isdir(text)
    return False


def structure_of(spec: object) -> object:
    """The structure of ``spec`` with `LEAF` for each source (dict keys sorted, as tf.nest)."""
    if isinstance(spec, dict):
        return {k: structure_of(spec[k]) for k in sorted(spec)}
    if _is_source_structure(spec):
        return tuple(structure_of(item) for item in spec)  # type: ignore[attr-defined]
    return LEAF


def flatten(tmpl: object, value: object) -> list[object]:
    """The leaves of ``value`` in the order of ``tmpl``'s leaves."""
    if isinstance(tmpl, dict):
        if not isinstance(value, dict) or set(value) != set(tmpl):
            raise ValueError(f"expected a dict with keys {sorted(tmpl)}, got {value!r:.200}")
        return [leaf for k in tmpl for leaf in flatten(tmpl[k], value[k])]
    if isinstance(tmpl, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(tmpl):
            raise ValueError(f"expected {len(tmpl)} items, got {value!r:.200}")
        return [leaf for t, v in zip(tmpl, value) for leaf in flatten(t, v)]
    return [value]


def unflatten(tmpl: object, leaves: list[object]) -> object:
    """``leaves`` (in `flatten`'s order) put back into ``tmpl``'s structure."""
    it = iter(leaves)

    def build(t: object) -> object:
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        if isinstance(t, tuple):
            return tuple(build(v) for v in t)
        return next(it)

    return build(tmpl)


def leaf_names(tmpl: object, root: str) -> list[str]:
    """How errors name each part: ``inputs``, ``inputs['image']``, ``inputs[1]``."""
    if isinstance(tmpl, dict):
        return [n for k, v in tmpl.items() for n in leaf_names(v, f"{root}[{k!r}]")]
    if isinstance(tmpl, tuple):
        return [n for i, v in enumerate(tmpl) for n in leaf_names(v, f"{root}[{i}]")]
    return [root]


def per_part(tmpl: object, value: object, kind: str) -> list[object]:
    """A ``dtype``/``shape`` argument for each leaf: one value for all, or the structure."""
    if tmpl == LEAF:
        return [value]
    structured = isinstance(value, dict) or (
        isinstance(value, tuple)
        and len(value) == len(tmpl)  # type: ignore[arg-type]
        and (kind == "dtype" or all(v is None or isinstance(v, (tuple, list)) for v in value))
    )
    return flatten(tmpl, value) if structured else [value] * len(flatten(tmpl, tmpl))


def label_values(labels: object) -> np.ndarray | None:
    """``labels`` as an array of values (one per input file), or None for label files."""
    if isinstance(labels, np.ndarray):
        return labels if labels.dtype.kind in "biuf" else None
    if isinstance(labels, (list, tuple)) and labels:
        first = labels[0]
        numeric = isinstance(first, (int, float, np.number, np.bool_)) or (
            isinstance(first, (list, tuple, np.ndarray))
            and len(first) > 0
            and isinstance(np.asarray(first).flat[0], (np.number, np.bool_))
        )
        if numeric and not isinstance(first, (str, bytes)):
            values = np.asarray(labels)
            if values.dtype.kind not in "biuf":
                raise TypeError(f"labels: expected numbers, got {values.dtype} values")
            return values
    return None
