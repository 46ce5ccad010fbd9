"""Crops in the graph: where each element's window starts (`starts`), drawn from its key for a
random window (`draws`), and the window cut out of a whole array (`cut`): the graph path's crop,
and what the native reader's windows must equal (`npyio._format.window.Window.starts` is the
same arithmetic in Python, for the tests).
"""

from __future__ import annotations

import tensorflow as tf

from npyio._format.window import CENTER, ERROR, PAD, RANDOM, Window, unequal_axes
from npyio._graph.ops import assert_verdict, fmt

__all__ = ["cut", "cut_batch", "draws", "same_sizes", "starts"]


def draws(keys: tf.Tensor, window: Window) -> tf.Tensor:
    """The random numbers in [0, 1) that place ``window`` for each element: float64
    ``[..., len(window.axes)]`` from its key (``keys``: int64 ``[..., 2]``, the epoch's value
    and the element's index). Windows of one group draw alike."""
    k = len(window.axes)

    def one(key: tf.Tensor) -> tf.Tensor:
        seed = tf.random.experimental.stateless_fold_in(key, window.group)
        return tf.random.stateless_uniform([k], seed=seed, dtype=tf.float64)

    if keys.shape.rank == 1:
        return one(keys)
    return tf.map_fn(one, keys, fn_output_signature=tf.TensorSpec([k], tf.float64))


def starts(window: Window, dims: tf.Tensor, draw: tf.Tensor | None) -> tf.Tensor:
    """Where the window starts on every axis of arrays of shape ``dims`` (int64 [rank], or
    [B, rank]: each array's own, for files of per-case shapes): int64 ``[..., rank]``, one row
    per row of ``draw`` (``[..., len(axes)]``, random windows only) or of ``dims``, 0 on the
    axes not cropped. Before the policy: a random window larger than the array, with ``"pad"``,
    is placed so that the array lies inside it."""
    if dims.shape.rank == 2:
        lead = tf.shape(dims, out_type=tf.int64)[:-1]
    elif draw is not None:
        lead = tf.shape(draw, out_type=tf.int64)[:-1]
    else:
        lead = tf.constant([], tf.int64)
    zero = tf.zeros(lead, tf.int64)
    columns = [zero] * window.rank
    for i, (axis, size) in enumerate(zip(window.axes, window.size)):
        dim = dims[..., axis]
        if window.start == RANDOM:
            assert draw is not None
            lo = tf.minimum(tf.constant(0, tf.int64), dim - size)
            span = tf.abs(dim - size)  # hi - lo
            step = tf.cast(tf.floor(draw[..., i] * tf.cast(span + 1, tf.float64)), tf.int64)
            columns[axis] = lo + tf.minimum(step, span)
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
