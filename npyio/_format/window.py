"""Crops: a window of each array, what `npyio.Crop` asks for and what a part's files make of it.

`Crop` is the public option (``crop=`` of `npyio.dataset`), checked when it is made: a window's
size per axis (``shape``), where it starts (``"random"``, ``"center"`` or fixed ``start``, with
``end`` or ``shape``), which axes it names (``axes``; the leading ones by default, the others
whole), and what happens past the array's edge (``out_of_bounds``: ``"error"``, ``"trim"`` or
``"pad"`` with ``fill_value``). An int is a number of elements; a float in ``[0, 1]`` a
fraction of the axis.

`Foreground` (``foreground=``) centres a share of the random windows on a labelled voxel of the
case's mask, for 3-D segmentation; `npyio._sources.foreground` indexes the masks.

`resolve` turns it into a part's `Window`, against the first file's shape, when the dataset is
built: axes made absolute, fractions made sizes, and a window that the files' static shape
cannot hold refused there, naming the file. A `Window` is what every reader takes: the graph
path slices it out of the whole array (`npyio._graph.window`), the native kernel reads only its
bytes. No I/O, no TensorFlow.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from npyio.errors import NpyFormatError

__all__ = [
    "CENTER",
    "ERROR",
    "FOREGROUND_SAMPLES",
    "PAD",
    "POLICIES",
    "RANDOM",
    "SAME",
    "TRIM",
    "Crop",
    "Foreground",
    "Window",
    "as_crop",
    "as_foreground",
    "fill_for",
    "named_axes",
    "resolve",
    "unequal_axes",
]

RANDOM, CENTER = "random", "center"
#: ``label_crop``'s default: the labels' files take the inputs' window.
SAME = "same"
ERROR, TRIM, PAD = "error", "trim", "pad"
#: What a window past the array's edge does (DALI's ``out_of_bounds_policy``: ``error``,
#: ``trim_to_shape``, ``pad``).
POLICIES = (ERROR, TRIM, PAD)

Extent = int | float
#: The most axes a window names (the native kernel's limit too).
MAX_RANK = 32


def _extent(value: object, what: str, allow_negative: bool = False) -> Extent:
    """One entry of a window's ``shape``, ``start`` or ``end``: an int, or a float in [0, 1]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"crop: {what} must be ints or floats in [0, 1], got {value!r}")
    if isinstance(value, (float, np.floating)):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(
                f"crop: {what} {value!r} is a fraction of the axis, which must be in [0, 1] "
                "(an int is a number of elements)"
            )
        return float(value)
    if int(value) < 0 and not allow_negative:
        raise ValueError(
            f"crop: {what} must not be negative, got {int(value)} -- a window past the edge "
            "needs out_of_bounds='trim' or 'pad'"
        )
    return int(value)


def _extents(values: object, what: str, allow_negative: bool = False) -> tuple[Extent, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list)):
        raise TypeError(f"crop: {what} must be a tuple (one entry per axis), got {values!r}")
    return tuple(_extent(v, what, allow_negative) for v in values)


@dataclass(frozen=True)
class Crop:
    """A window of each array: what ``crop=`` of `npyio.dataset` reads instead of the whole.

    Args:
        shape: The window's size on each axis it names: an int (elements) or a float in
            ``[0, 1]`` (a fraction of the axis). Needed unless ``end`` is given.
        start: ``"random"`` (the default: a new window for every element and epoch, drawn
            from ``seed``), ``"center"``, or a tuple of fixed starts (ints, or floats as
            fractions of the axis; a negative int only with ``out_of_bounds="pad"``).
        end: With fixed starts, where the window ends (exclusive), instead of ``shape``.
        axes: The axes ``shape``/``start``/``end`` name (negative counts from the last); by
            default the leading ones. Axes not named are read whole.
        out_of_bounds: A window past an array's edge: ``"error"`` (the default: refused,
            naming the file), ``"trim"`` (cut to the array: a smaller window) or ``"pad"``
            (filled with ``fill_value``).
        fill_value: What pads, with ``out_of_bounds="pad"`` (0 by default): a number for every
            part, or a dict of numbers by part, keyed by the part's name (``"t1"`` for named
            inputs ``{"t1": ...}``) or its side (``"inputs"``, ``"labels"``), so that an image
            pads with 0 and its mask with an ignore label while they share the window. A dict
            is kept as a tuple of its ``(key, value)`` pairs.
        squeeze: Drop the axes the window is 1 long on, as ``tf.squeeze`` does: a slice one
            voxel deep of a 3-D volume, for a 2-D network. The labels' window (the inputs'
            by default) drops them too.

    Example:
        >>> import npyio
        >>> npyio.Crop((96, 96, 96)) == npyio.Crop((96, 96, 96), start="random")
        True
        >>> npyio.Crop((0.5, 0.5), start="center").shape
        (0.5, 0.5)
        >>> npyio.Crop(start=(10, 20), end=(74, 84)).end
        (74, 84)
        >>> pad = npyio.Crop((64, 64, 64), out_of_bounds="pad", fill_value={"labels": 255})
        >>> pad.fill_value  # the mask pads with an ignore label; give the image its own too
        (('labels', 255),)
        >>> npyio.Crop((1, 64, 64), squeeze=True).squeeze  # (D, H, W, 1) -> (64, 64, 1)
        True
    """

    shape: tuple[Extent, ...] | None = None
    start: Literal["random", "center"] | tuple[Extent, ...] = "random"
    end: tuple[Extent, ...] | None = None
    axes: tuple[int, ...] | None = None
    out_of_bounds: Literal["error", "trim", "pad"] = "error"
    fill_value: int | float | bool | Mapping[str, int | float | bool] = 0
    squeeze: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.squeeze, (bool, np.bool_)):
            raise TypeError(f"crop: squeeze must be True or False, got {self.squeeze!r}")
        object.__setattr__(self, "squeeze", bool(self.squeeze))
        if self.out_of_bounds not in POLICIES:
            raise ValueError(
                f"crop: out_of_bounds must be one of {', '.join(POLICIES)}, got "
                f"{self.out_of_bounds!r}"
            )
        edge = self.out_of_bounds != ERROR  # trimmed or padded: a window may start before 0
        shape = None if self.shape is None else _extents(self.shape, "shape")
        end = None if self.end is None else _extents(self.end, "end", allow_negative=edge)
        start: str | tuple[Extent, ...]
        if isinstance(self.start, str):
            if self.start not in (RANDOM, CENTER):
                raise ValueError(
                    f"crop: start must be 'random', 'center' or a tuple of starts, got "
                    f"{self.start!r}"
                )
            start = self.start
            if shape is None:
                raise ValueError(f"crop: a {start} window needs its shape")
            if end is not None:
                raise ValueError(f"crop: end needs fixed starts, not start={start!r}")
        else:
            start = _extents(self.start, "start", allow_negative=edge)
            if (shape is None) == (end is None):
                raise ValueError("crop: fixed starts need either shape or end (not both)")
        lengths = {
            len(v)
            for v in (shape, end, start if isinstance(start, tuple) else None)
            if v is not None
        }
        if self.axes is not None:
            if isinstance(self.axes, (str, bytes)) or not isinstance(self.axes, (tuple, list)):
                raise TypeError(f"crop: axes must be a tuple of ints, got {self.axes!r}")
            if not all(
                isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in self.axes
            ):
                raise TypeError(f"crop: axes must be a tuple of ints, got {self.axes!r}")
            lengths.add(len(self.axes))
            object.__setattr__(self, "axes", tuple(int(a) for a in self.axes))
        if len(lengths) > 1:
            raise ValueError(
                "crop: shape, start, end and axes must name as many axes each, got lengths "
                f"{sorted(lengths)}"
            )
        if lengths and lengths.pop() > MAX_RANK:
            raise ValueError(f"crop: at most {MAX_RANK} axes")
        if isinstance(start, tuple) and end is not None:
            for i, (s, e) in enumerate(zip(start, end)):
                if type(s) is type(e) and e < s:
                    raise ValueError(
                        f"crop: the window is reversed on axis {i}: start {s}, end {e}"
                    )
        object.__setattr__(self, "fill_value", _fill_values(self.fill_value))
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "end", end)
        object.__setattr__(self, "start", start)

    @property
    def random(self) -> bool:
        """Whether the window is drawn anew for every element (and epoch)."""
        return self.start == RANDOM


def _is_number(value: object) -> bool:
    return not isinstance(value, (str, bytes)) and isinstance(
        value, (int, float, np.number, np.bool_)
    )


def _fill_values(value: object) -> object:
    """``fill_value`` checked: a number, or a dict of numbers by part as a tuple of pairs
    (hashable, like the rest of a `Crop`)."""
    if _is_number(value):
        return value
    pairs = value.items() if isinstance(value, Mapping) else value
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"crop: fill_value must be a number or a dict of numbers, got {value!r}")
    pairs = tuple(pairs)
    if not pairs or not all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and _is_number(p[1])
        for p in pairs
    ):
        raise TypeError(
            "crop: fill_value must be a number, or a dict of numbers by part name or side "
            f"(for example {{'inputs': 0.0, 'labels': 255}}), got {value!r}"
        )
    return tuple(sorted(pairs))


def fill_for(crop: Crop, name: str, side: str) -> int | float | bool:
    """What pads the part ``name`` (on ``side``) under ``crop``: its own value by name, else
    its side's, where ``fill_value`` is a dict.

    Raises:
        ValueError: for a dict that gives the part none.
    """
    value = crop.fill_value
    if _is_number(value):
        return cast("int | float | bool", value)
    given = dict(cast("tuple[tuple[str, int | float | bool], ...]", value))
    key = name[name.rindex("['") + 2 : -2] if name.endswith("']") else name  # inputs['t1']
    for candidate in (name, key, side):
        if candidate in given:
            return given[candidate]
    raise ValueError(
        f"crop: fill_value gives no value for {name} -- key each part by its name or by its "
        f"side ({', '.join(sorted(given))} given)"
    )


def as_crop(value: object, what: str = "crop") -> Crop | None:
    """``crop=`` as given: None, a `Crop`, or a tuple of sizes (a random window of that shape
    on the leading axes).

    Raises:
        TypeError: for anything else.
    """
    if value is None or isinstance(value, Crop):
        return value
    if isinstance(value, (tuple, list)):
        return Crop(tuple(value))
    raise TypeError(
        f"{what} must be a tuple of window sizes (e.g. (96, 96, 96)), an npyio.Crop or None, "
        f"got {value!r}"
    )


#: The foreground voxels an index keeps per class and case: nnU-Net's 10,000.
FOREGROUND_SAMPLES = 10_000


@dataclass(frozen=True)
class Foreground:
    """Patch sampling for segmentation (``foreground=`` of `npyio.dataset`): a share of the
    random windows centred on a voxel of a class present in the case's mask (the label file),
    as nnU-Net's sampler does; the rest are drawn uniformly, as without it.

    For each such window a class is chosen uniformly among those present in the case, then a
    voxel uniformly among that class's locations, and the window is centred on it (moved inside
    the range random windows take, so the voxel is always in it). A case without any of the
    classes gets a uniform window. The locations come from an index that npyio builds once per
    mask and caches (docs/layouts.md, "3-D segmentation").

    Args:
        fraction: The share of windows centred on the foreground, in [0, 1]: with batches, the
            last ``ceil(fraction * batch_size)`` of each batch (nnU-Net's
            ``oversample_foreground_percent``, 1/3 by default); without, each window with that
            probability. MONAI's ``RandCropByPosNegLabeld(pos, neg)`` is
            ``pos / (pos + neg)``, except that the other windows are uniform, not centred on
            the background.
        classes: The label values sampled; by default every value but 0 present in the mask
            (leave out an ignore label by listing the classes).
        samples: The most voxels kept per class and case (nnU-Net keeps 10,000): the index's
            size, and the variety of centres.

    Example:
        >>> import npyio
        >>> npyio.Foreground(0.33, classes=(1, 2)).classes
        (1, 2)
        >>> npyio.Foreground().fraction
        0.3333333333333333
    """

    fraction: float = 1 / 3
    classes: tuple[int, ...] | None = None
    samples: int = FOREGROUND_SAMPLES

    def __post_init__(self) -> None:
        fraction = self.fraction
        if isinstance(fraction, (bool, np.bool_)) or not isinstance(
            fraction, (int, float, np.integer, np.floating)
        ):
            raise TypeError(f"foreground: fraction must be a number in [0, 1], got {fraction!r}")
        if not 0.0 <= float(fraction) <= 1.0:
            raise ValueError(f"foreground: fraction must be in [0, 1], got {fraction!r}")
        object.__setattr__(self, "fraction", float(fraction))
        if self.classes is not None:
            classes = self.classes
            if isinstance(classes, (str, bytes)) or not isinstance(classes, (tuple, list)):
                raise TypeError(f"foreground: classes must be a tuple of ints, got {classes!r}")
            if not classes or not all(
                isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in classes
            ):
                raise TypeError(
                    f"foreground: classes must be a non-empty tuple of ints, got {classes!r}"
                )
            object.__setattr__(self, "classes", tuple(sorted({int(c) for c in classes})))
        samples = self.samples
        if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
            raise ValueError(f"foreground: samples must be a positive int, got {samples!r}")
        object.__setattr__(self, "samples", int(samples))


def as_foreground(value: object, what: str = "foreground") -> Foreground | None:
    """``foreground=`` as given: None (or 0: no centred windows), a fraction, or a
    `Foreground`.

    Raises:
        TypeError: for anything else.
    """
    if value is None or isinstance(value, Foreground):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return None if float(value) == 0.0 else Foreground(float(value))
    raise TypeError(
        f"{what} must be a fraction in [0, 1] (e.g. 1/3) or an npyio.Foreground, got {value!r}"
    )


@dataclass(frozen=True)
class Window:
    """A `Crop` made concrete for one part: what its readers take (`resolve` makes it).

    Attributes:
        rank: The rank of the part's arrays.
        axes: The axes cropped (absolute, in the order the crop names them).
        size: The window's size on each of ``axes``.
        start: ``"random"``, ``"center"``, or the fixed start on each of ``axes``.
        policy: ``"error"``, ``"trim"`` or ``"pad"`` (`Crop.out_of_bounds`).
        fill: The value that pads, cast to the part's dtype.
        group: Parts of one group share their random windows: the same draw, so the same
            window on arrays of the same shape (an image and its mask).
        squeeze: The axes dropped once the window is read (`Crop.squeeze`: those it is 1 long
            on), ascending.
    """

    rank: int
    axes: tuple[int, ...]
    size: tuple[int, ...]
    start: str | tuple[int, ...]
    policy: str = ERROR
    fill: object = 0
    group: int = 0
    squeeze: tuple[int, ...] = ()

    @property
    def random(self) -> bool:
        """Whether each element draws its window."""
        return self.start == RANDOM

    def starts(
        self, dims: tuple[int, ...], draw: tuple[float, ...] | None = None
    ) -> tuple[int, ...]:
        """The window's start on every axis of an array of shape ``dims`` (0 where not
        cropped), before the policy trims it: the reference that the graph's
        `npyio._graph.window.starts` computes too (``draw``: one number in [0, 1) per cropped
        axis, for a random window; then, for a window centred on a foreground voxel, that
        voxel's index on each cropped axis, or -1 for a uniform window)."""
        out = [0] * self.rank
        k = len(self.axes)
        for i, (axis, size) in enumerate(zip(self.axes, self.size)):
            dim = dims[axis]
            if self.start == RANDOM:
                assert draw is not None
                lo, hi = min(0, dim - size), max(0, dim - size)
                centre = int(draw[k + i]) if len(draw) > k else -1
                if centre >= 0:  # the voxel at the centre, moved into the random range
                    out[axis] = min(max(centre - size // 2, lo), hi)
                    continue
                out[axis] = lo + min(int(draw[i] * (hi - lo + 1)), hi - lo)
            elif self.start == CENTER:
                out[axis] = (dim - size) // 2
            else:
                out[axis] = cast("tuple[int, ...]", self.start)[i]
        return tuple(out)

    def sizes(self, dims: tuple[int | None, ...]) -> tuple[int | None, ...]:
        """The output's shape for arrays of shape ``dims`` (None dims: varying), where it does
        not depend on the draw: a trimmed axis of unknown size is None."""
        out: list[int | None] = list(dims)
        for i, (axis, size) in enumerate(zip(self.axes, self.size)):
            dim = dims[axis]
            if self.policy != TRIM:
                out[axis] = size
            elif dim is None:
                out[axis] = None
            elif isinstance(self.start, tuple):
                start = self.start[i]
                out[axis] = max(0, min(start + size, dim) - max(start, 0))
            else:  # random and centre windows lie within the array where they fit
                out[axis] = min(size, dim)
        return tuple(out)


def _fraction(value: Extent, dim: int | None, what: str, path: str) -> int:
    if isinstance(value, int):
        return value
    if dim is None:
        raise NpyFormatError(
            path,
            f"crop: {what} {value} is a fraction of an axis whose size varies (None) -- give "
            "it as a number of elements",
        )
    return math.floor(value * dim)


def _axes(crop: Crop) -> tuple[int, ...]:
    """The axes ``crop`` names, as given (by default the leading ones)."""
    named = next(
        len(v) for v in (crop.shape, crop.end, crop.start, crop.axes) if isinstance(v, tuple)
    )
    return crop.axes if crop.axes is not None else tuple(range(named))


def named_axes(crop: Crop, rank: int) -> tuple[int, ...] | None:
    """The axes ``crop`` names in arrays of ``rank`` dims, made absolute; None where it names
    more axes than they have, or one out of range."""
    axes = _axes(crop)
    if len(axes) > rank or any(not -rank <= a < rank for a in axes):
        return None
    return tuple(a % rank for a in axes)


def unequal_axes(sizes: str, other: str, other_sizes: str) -> str:
    """Why a part is refused that shares a random or centred window with an earlier part
    (``other``) whose sizes on the cropped axes differ: the window, placed from ``other``'s
    sizes, would be cut from this part at another origin."""
    return (
        f"the cropped axes have sizes {sizes}, but those of {other} are {other_sizes}: one "
        "window cannot be cut from both -- each pair must agree on the cropped axes (npyio "
        "verify INPUTS LABELS --crop SIZES lists every pair that does not)"
    )


def resolve(crop: Crop, shape: tuple[int | None, ...], path: str, group: int = 0) -> Window:
    """``crop`` for a part whose arrays have ``shape`` (its first file, ``path``): its
    `Window`, checked against the shape where it is static.

    Raises:
        NpyFormatError: naming ``path``: a crop of more axes than the arrays have, an axis
            out of range or named twice, a fraction of an axis of varying size, or (with
            ``out_of_bounds="error"``) a window that does not fit the array.
    """
    rank = len(shape)
    axes = named_axes(crop, rank)
    if axes is None:
        raise NpyFormatError(
            path,
            f"crop names axes {list(_axes(crop))}, but the array has {rank} dims (shape "
            f"{tuple(shape)}) -- name fewer axes, or pass axes=",
        )
    if len(set(axes)) != len(axes):
        raise NpyFormatError(path, f"crop names an axis twice: axes {list(axes)}")
    dims = [shape[a] for a in axes]
    start: str | tuple[int, ...]
    if isinstance(crop.start, tuple):
        start = tuple(_fraction(s, d, "start", path) for s, d in zip(crop.start, dims))
        if crop.end is not None:
            ends = [_fraction(e, d, "end", path) for e, d in zip(crop.end, dims)]
            if any(e < s for s, e in zip(start, ends)):
                raise NpyFormatError(path, f"crop: the window {_show(start, ends)} is reversed")
            size = tuple(e - s for s, e in zip(start, ends))
        else:
            size = tuple(_fraction(x, d, "shape", path) for x, d in zip(crop.shape or (), dims))
    else:
        start = crop.start
        size = tuple(_fraction(x, d, "shape", path) for x, d in zip(crop.shape or (), dims))
    fill = crop.fill_value if _is_number(crop.fill_value) else 0  # per part: set when planned
    dropped = tuple(sorted(a for a, n in zip(axes, size) if n == 1)) if crop.squeeze else ()
    window = Window(rank, axes, size, start, crop.out_of_bounds, fill, group, dropped)
    if crop.out_of_bounds == ERROR:
        reason = outside(window, tuple(shape))
        if reason is not None:
            raise NpyFormatError(path, reason)
    if crop.squeeze:
        _check_squeeze(window, tuple(shape), path)
    return window


def _check_squeeze(window: Window, shape: tuple[int | None, ...], path: str) -> None:
    """A squeezed window drops axes that are 1 long in every element: it has some, and none of
    them can be trimmed to 0 (a fixed start past the edge, or an axis whose size varies).

    Raises:
        NpyFormatError: naming ``path``.
    """
    if not window.squeeze:
        raise NpyFormatError(
            path,
            f"crop: squeeze=True drops the axes the window is 1 long on, but it is "
            f"{tuple(window.size)} long on axes {list(window.axes)} -- make one size 1",
        )
    sizes = window.sizes(shape)
    short = [a for a in window.squeeze if sizes[a] != 1]
    if short:
        raise NpyFormatError(
            path,
            f"crop: squeeze=True drops axes {short}, but out_of_bounds='trim' may cut them "
            "to 0 -- use 'pad' or 'error'",
        )


def _show(start: tuple[int, ...], ends: list[int] | tuple[int, ...]) -> str:
    return "[" + ", ".join(f"{s}:{e}" for s, e in zip(start, ends)) + "]"


def outside(window: Window, shape: tuple[int | None, ...]) -> str | None:
    """Why ``window`` does not fit arrays of ``shape`` (None dims: not known here), or None."""
    for i, (axis, size) in enumerate(zip(window.axes, window.size)):
        dim = shape[axis]
        if dim is None:
            continue
        if isinstance(window.start, tuple):
            lo, hi = window.start[i], window.start[i] + size
            bad = lo < 0 or hi > dim
            where = f"[{lo}:{hi}]"
        else:
            bad = size > dim
            where = f"of size {size}"
        if bad:
            return (
                f"crop window {where} on axis {axis} is outside the array of shape "
                f"{tuple(shape)} -- pass npyio.Crop(..., out_of_bounds='trim' or 'pad')"
            )
    return None
