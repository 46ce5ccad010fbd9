"""Crops in the graph: where each element's window starts (`starts`), drawn from its key for a
random window (`draws`), or centred on a foreground voxel of its case (`foreground_centres`,
for patch sampling), and the window cut out of a whole array (`cut`): the graph path's crop,
and what the native reader's windows must equal (`npyio._format.window.Window.starts` is the
same arithmetic in Python, for the tests).
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from npyio._format.window import CENTER, ERROR, PAD, RANDOM, Window, unequal_axes
from npyio._graph.ops import assert_verdict, fmt

__all__ = [
    "FOREGROUND_SALT",
    "cut",
    "cut_batch",
    "draws",
    "foreground_centres",
    "same_sizes",
    "starts",
    "uniforms",
]


def uniforms(keys: tf.Tensor, salt: int, k: int) -> tf.Tensor:
    """``k`` random numbers in [0, 1) for each element: float64 ``[..., k]`` from its key
    (``keys``: int64 ``[..., 2]``, the epoch's value and the element's index) folded with
    ``salt``, so that each use draws its own.

    A counter-based hash (SplitMix64's finalizer over the key's words, the salt and the
    number's place), in whole-tensor ops: the same numbers for any batch of keys, on any
    machine, at a fixed cost per batch (TF's stateless random ops take one seed each, so a
    draw per element needs a ``map_fn``, a loop step a window: bench/README.md, "Crops in the
    batch source", measures both)."""
    words = tf.bitcast(keys, tf.uint64)
    h = _mix(_mix(words[..., 0] * _GOLDEN) ^ words[..., 1])
    # numpy's uint64, not Python ints: TF 2.21 in a graph converts a list of uint64s through
    # float64 (2**64 - 1 became 0), so each TF version drew other windows
    h = _mix(h ^ tf.constant(np.uint64((salt * _GOLDEN + _SALTED) % 2**64)))
    places = tf.constant(np.array([(j + 1) * _GOLDEN % 2**64 for j in range(k)], np.uint64))
    bits = tf.bitwise.right_shift(_mix(h[..., None] + places), tf.constant(11, tf.uint64))
    return tf.cast(bits, tf.float64) * 2.0**-53


#: SplitMix64's increment (2**64 / the golden ratio), and a constant that keeps salt 0 apart
#: from no salt.
_GOLDEN = 0x9E3779B97F4A7C15
_SALTED = 0x632BE59BD9B4E019


def _mix(z: tf.Tensor) -> tf.Tensor:
    """SplitMix64's finalizer of uint64 ``z`` (wrapping arithmetic)."""
    z = (z ^ tf.bitwise.right_shift(z, tf.constant(30, tf.uint64))) * tf.constant(
        0xBF58476D1CE4E5B9, tf.uint64
    )
    z = (z ^ tf.bitwise.right_shift(z, tf.constant(27, tf.uint64))) * tf.constant(
        0x94D049BB133111EB, tf.uint64
    )
    return z ^ tf.bitwise.right_shift(z, tf.constant(31, tf.uint64))


def draws(keys: tf.Tensor, window: Window, centres: tf.Tensor | None = None) -> tf.Tensor:
    """The numbers that place ``window`` for each element, from its key (``keys``: int64
    ``[..., 2]``): float64 ``[..., k]`` (k: ``len(window.axes)``) in [0, 1), drawn alike by the
    windows of one group. With ``centres`` (int64 ``[..., k]``: a foreground voxel's index on
    each cropped axis, or -1 for a uniform window), float64 ``[..., 2k]``, the draws then the
    centres: one tensor, so that every reader that takes rows of the draws (a batch's, a
    doubted file's) takes each row's centre with it."""
    drawn = uniforms(keys, window.group, len(window.axes))
    if centres is None:
        return drawn
    return tf.concat([drawn, tf.cast(centres, tf.float64)], axis=-1)


def starts(window: Window, dims: tf.Tensor, draw: tf.Tensor | None) -> tf.Tensor:
    """Where the window starts on every axis of arrays of shape ``dims`` (int64 [rank], or
    [B, rank]: each array's own, for files of per-case shapes): int64 ``[..., rank]``, one row
    per row of ``draw`` (`draws`'s, random windows only) or of ``dims``, 0 on the axes not
    cropped. Before the policy: a random window larger than the array, with ``"pad"``, is
    placed so that the array lies inside it. A window centred on a foreground voxel is moved
    into the same range as the random ones, so the voxel always lies in it (nnU-Net's rule)."""
    if dims.shape.rank == 2:
        lead = tf.shape(dims, out_type=tf.int64)[:-1]
    elif draw is not None:
        lead = tf.shape(draw, out_type=tf.int64)[:-1]
    else:
        lead = tf.constant([], tf.int64)
    zero = tf.zeros(lead, tf.int64)
    columns = [zero] * window.rank
    k = len(window.axes)
    for i, (axis, size) in enumerate(zip(window.axes, window.size)):
        dim = dims[..., axis]
        if window.start == RANDOM:
            assert draw is not None
            lo = tf.minimum(tf.constant(0, tf.int64), dim - size)
            span = tf.abs(dim - size)  # hi - lo
            step = tf.cast(tf.floor(draw[..., i] * tf.cast(span + 1, tf.float64)), tf.int64)
            columns[axis] = lo + tf.minimum(step, span)
            if draw.shape[-1] == 2 * k:  # centred on a foreground voxel where one is given
                centre = tf.cast(draw[..., k + i], tf.int64)
                centred = tf.clip_by_value(centre - size // 2, lo, lo + span)
                columns[axis] = tf.where(centre >= 0, centred, columns[axis])
        elif window.start == CENTER:
            columns[axis] = zero + tf.math.floordiv(dim - size, 2)
        else:
            columns[axis] = zero + tf.constant(window.start[i], tf.int64)
    return tf.stack(columns, axis=-1)


def same_sizes(
    window: Window,
    dims: tf.Tensor,
    name: tf.Tensor,
    other: Window,
    other_dims: tf.Tensor,
    other_name: tf.Tensor,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The verdict ``(ok, message)`` on two parts that share a random or centred window (one
    draw, placed from the first part's sizes): their cropped axes must have the same sizes,
    or the second's window would be cut at another origin. ``dims``: int64 [rank] each."""
    mine = tf.gather(dims, list(window.axes))
    theirs = tf.gather(other_dims, list(other.axes))
    ok = tf.reduce_all(tf.equal(mine, theirs))

    def shown(values: tf.Tensor) -> tf.Tensor:
        text = tf.strings.reduce_join(tf.strings.as_string(values), separator=", ")
        return tf.strings.join(["(", text, "," if len(window.axes) == 1 else "", ")"])

    # (no quotes in the words: eager TensorFlow shows assertion data escaped)
    reason = fmt(unequal_axes, shown(theirs), name, shown(mine))
    return ok, tf.strings.join([other_name, ": ", reason])


def _sizes(window: Window, dims: tf.Tensor) -> tf.Tensor:
    """The window's size on every axis (the array's own where not cropped), int64 [rank]."""
    sizes = [dims[axis] for axis in range(window.rank)]
    for axis, size in zip(window.axes, window.size):
        sizes[axis] = tf.constant(size, tf.int64)
    return tf.stack(sizes) if sizes else tf.zeros([0], tf.int64)


def cut(array: tf.Tensor, window: Window, draw: tf.Tensor | None, name: tf.Tensor) -> tf.Tensor:
    """The window of one whole ``array`` (``draw``: its random numbers, for a random window):
    sliced, then trimmed, padded with the window's fill or refused (``"error"``, naming the
    file ``name``) where it passes the array's edge."""
    dims = tf.shape(array, out_type=tf.int64)
    start = starts(window, dims, draw)
    end = start + _sizes(window, dims)
    if window.policy == ERROR:  # a static shape was checked when the dataset was built
        fits = tf.logical_and(tf.reduce_all(start >= 0), tf.reduce_all(end <= dims))

        def joined(values: tf.Tensor, separator: str) -> tf.Tensor:
            return tf.strings.reduce_join(tf.strings.as_string(values), separator=separator)

        if isinstance(window.start, tuple):  # where it lies, for a fixed window
            where = [
                "[",
                tf.strings.reduce_join(
                    tf.strings.join([tf.strings.as_string(start), tf.strings.as_string(end)], ":"),
                    separator=", ",
                ),
                "]",
            ]
        else:  # its size: where a random or centred window lies says nothing
            where = ["of shape (", joined(end - start, ", "), ")"]
        # no quotes: eager TensorFlow shows assertion data escaped
        message = tf.strings.join(
            [
                name,
                ": crop window ",
                *where,
                " is outside the array of shape (",
                joined(dims, ", "),
                ") -- pass npyio.Crop(..., out_of_bounds=trim or pad)",
            ]
        )
        (array,) = assert_verdict(fits, message, array)
    lo = tf.clip_by_value(start, 0, dims)  # the window's intersection with the array
    hi = tf.clip_by_value(end, lo, dims)
    out = tf.slice(array, lo, hi - lo)
    if window.policy == PAD:  # the window's positions before the array, then after it
        size = end - start
        before = tf.minimum(tf.maximum(-start, 0), size)
        after = size - before - (hi - lo)
        fill = tf.constant(window.fill, array.dtype)
        out = tf.pad(out, tf.stack([before, after], axis=1), constant_values=fill)
    out.set_shape(window.sizes(tuple(array.shape.as_list())))
    return out


def cut_batch(
    arrays: tf.Tensor, window: Window, draw: tf.Tensor | None, names: tf.Tensor
) -> tf.Tensor:
    """`cut` of each of a batch of whole ``arrays`` ([B, ...]), with its row of ``draw`` and
    its name."""
    static = window.sizes(tuple(arrays.shape[1:].as_list()))
    spec = tf.TensorSpec(static, arrays.dtype)
    if draw is None:
        return tf.map_fn(
            lambda a: cut(a[0], window, None, a[1]), (arrays, names), fn_output_signature=spec
        )
    return tf.map_fn(
        lambda a: cut(a[0], window, a[1], a[2]), (arrays, draw, names), fn_output_signature=spec
    )


#: What the foreground's random numbers are folded with: numbers of their own, apart from every
#: window group's (`draws` folds the group, a small int).
FOREGROUND_SALT = 0xF09E


def foreground_centres(
    keys: tf.Tensor,
    index: tuple[np.ndarray, ...],
    files: int,
    axes: tuple[int, ...],
    fraction: float,
    batch_size: int | None,
) -> tf.Tensor:
    """Where each element's window is centred: int64 ``[..., len(axes)]``, a foreground voxel's
    index on each of the mask's cropped ``axes``, or -1 for a uniform window (`draws` carries
    it to `starts`).

    ``keys``: int64 ``[..., 3]``, the epoch's value, the unit's index (its case: the index
    modulo ``files``) and its position in the epoch. With ``batch_size``, the last
    ``ceil(fraction * batch_size)`` positions of each batch are centred (nnU-Net's rule); without,
    each element with probability ``fraction``. ``index``: a
    `npyio._sources.foreground.ForegroundIndex`'s ``first, classes, starts, counts, coords``. A
    class is chosen uniformly among the case's, then a location among the class's; a case with
    none gets a uniform window.
    """
    first, classes, starts_, counts, coords = (tf.constant(a) for a in index)
    u = uniforms(keys[..., :2], FOREGROUND_SALT, 3)
    if batch_size is not None:
        share = math.ceil(round(fraction * batch_size, 9))
        centred = keys[..., 2] % batch_size >= batch_size - share
    else:
        centred = u[..., 0] < fraction
    case = keys[..., 1] % files
    present = tf.gather(classes, case)
    centred = tf.logical_and(centred, present > 0)

    def pick(u: tf.Tensor, n: tf.Tensor) -> tf.Tensor:  # uniform in [0, n), n >= 1
        return tf.minimum(tf.cast(tf.floor(u * tf.cast(n, tf.float64)), tf.int64), n - 1)

    class_range = tf.gather(first, case) + pick(u[..., 1], tf.maximum(present, 1))
    class_range = tf.where(centred, class_range, 0)  # a case without classes reads range 0
    at = tf.gather(starts_, class_range) + pick(u[..., 2], tf.gather(counts, class_range))
    voxel = tf.gather(tf.cast(tf.gather(coords, at), tf.int64), list(axes), axis=-1)
    return tf.where(centred[..., None], voxel, tf.constant(-1, tf.int64))
