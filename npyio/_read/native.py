"""The native reader: a batch of files read straight into one tensor by npyio's C++ op
(`npyio._native`), with the graph parser deciding every file the kernel doubts.

The plan sends it only parts it serves (`npyio._read.serves`: one static shape, a native-order
C-order header). With ``ignore_errors``, the builder reads batches through `read_doubting` (the
kernel's reads, and which files it doubted) and sends only the elements of doubted files to the
graph reader's skip-and-report (`npyio._data.dataset.build_skipping`).

Local files are read with ``pread``; a path with a scheme (``gs://``, ``ram://``) through
TensorFlow's own file systems, one read per object that asks for more than TensorFlow's 64 MiB
GCS read block (no stat, no zero fill), all of a batch at once.

For such a part the spec's hint holds the header every file is expected to start with and the
size it must have; the kernel reads each file whose first bytes are exactly that header and
whose size is exactly that size into its slice of the batch, and reads nothing else. Any other
file (another writer's header, a byte-swapped one, a truncated, grown, missing or replaced file,
a bool byte other than 0 or 1, an object the store failed to serve after TensorFlow's retries)
is doubted: it goes through the graph parser, which reads it again (on ``gs://``, with
`npyio._read.objects.read_sized`, as `npyio._read.part.GraphReader` does there) and decodes it
or refuses it with the graph path's own error naming the file. So the native path cannot accept
what the graph path refuses, nor word an error differently.

A cropped part (``spec.crop``, local files, not of bools) is read by ``NpyioReadWindows``: each
file's window alone, its starts computed in the graph (`npyio._graph.window.starts`, from the
element's draws); a file the kernel doubts is read whole by the graph parser and its window
cut there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from npyio._format.header import Hint
from npyio._format.spec import Spec
from npyio._format.window import PAD, Window
from npyio._graph.decode import Fetched, decode_group
from npyio._graph.window import cut_batch, starts
from npyio._native import read_files, read_windows
from npyio._read import CAPABILITIES
from npyio._read.objects import read_sized
from npyio._read.part import Reader, read_file

__all__ = ["NativeReader"]


class NativeReader(Reader):
    """The native backend as a `npyio._read.part.Reader`: fetch names the path (the kernel
    reads it in decode), and decode reads a [B] batch of paths per part into one tensor."""

    capabilities = CAPABILITIES["native"]

    def __init__(self, report: bool = False, one_get: bool = False) -> None:
        super().__init__(report)
        #: on ``gs://``: the files the kernel doubts are read again as the graph reader reads
        #: them there (`npyio._read.objects.read_sized`), so that they fail with its words
        self.one_get = one_get

    def decode(
        self,
        fetched: Sequence[Fetched],
        specs: Sequence[Spec],
        batched: bool = False,
        draws: Sequence[tf.Tensor | None] | None = None,
    ) -> list[tf.Tensor]:
        out = []
        for f, spec, draw in zip(fetched, specs, draws or [None] * len(specs)):
            paths = f.contents if batched else tf.reshape(f.contents, [1])
            if spec.crop is None:
                values = read_batch(paths, spec, self.one_get)
            else:
                values = read_window_batch(
                    paths, spec, draw if batched or draw is None else draw[None]
                )
            out.append(values if batched else values[0])
        return out

    def decode_whole(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool = False
    ) -> list[tf.Tensor]:
        return self.decode(fetched, [spec.read_whole() for spec in specs], batched)

    def read_doubting(
        self,
        fetched: Sequence[Fetched],
        specs: Sequence[Spec],
        draws: Sequence[tf.Tensor | None] | None = None,
    ) -> tuple[list[tf.Tensor], tf.Tensor]:
        values, oks = [], []
        for f, spec, draw in zip(fetched, specs, draws or [None] * len(specs)):
            if spec.crop is None:
                part, ok = _kernel_batch(f.contents, spec)
            else:
                part, ok = _kernel_windows(f.contents, spec, draw)
            values.append(part)
            oks.append(ok)
        read = tf.reduce_all(tf.stack(oks), axis=0)
        return [_kept_rows(part, read) for part in values], read


def _static(spec: Spec) -> tuple[Hint, tuple[int, ...]]:
    """The hint and the static shape of the files of a part the native reader serves."""
    hint, shape = spec.usable_hint(), spec.file.shape
    if hint is None or shape is None or not spec.file.static:  # the plan never sends these
        raise ValueError("the native reader reads parts of one static shape with a usable hint")
    return hint, tuple(int(d) for d in shape if d is not None)


def _kept_rows(values: tf.Tensor, read: tf.Tensor) -> tf.Tensor:
    """The rows of ``values`` ([B] or [0] rows) of the elements ``read`` ([B]) says were read
    whole, in order. Nothing is allocated for the others: where the op allocated no rows (no
    file of the plan's size, so every file doubted), that is ``values`` itself, whatever size
    a lying header made the plan claim; and every shape here is int64 (int32 ones refuse dims
    past 2**31)."""
    rows = tf.shape(values, out_type=tf.int64)[0]
    whole = tf.logical_or(tf.reduce_all(read), tf.equal(rows, 0))
    out = tf.cond(
        whole,
        lambda: tf.identity(values),
        lambda: tf.gather(values, tf.where(read)[:, 0]),
    )
    out.set_shape(tf.TensorShape([None]).concatenate(values.shape[1:]))
    return out


def _kernel_batch(paths: tf.Tensor, spec: Spec) -> tuple[tf.Tensor, tf.Tensor]:
    """The kernel's read of ``paths`` ([B]) alone: [B, *shape] values (or [0, *shape], where
    no file has the plan's size) and [B] ``ok``, false where it doubted the file."""
    hint, dims = _static(spec)
    return read_files(paths, tf.as_dtype(spec.file.dtype), dims, hint.header)


def _kernel_windows(
    paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None
) -> tuple[tf.Tensor, tf.Tensor]:
    """The kernel's read of the windows (``spec.crop``) of ``paths`` ([B]) alone: [B, *window]
    values and [B] ``ok``, false where it doubted the file or its window."""
    values, ok, _, out_dims = _windows(paths, spec, draw)
    values.set_shape(paths.shape.concatenate(out_dims))
    return values, ok


def read_batch(paths: tf.Tensor, spec: Spec, one_get: bool = False) -> tf.Tensor:
    """The files ``paths`` ([B]) of a part the native reader serves, as one [B, *shape]
    tensor: the kernel's reads, with the files it doubts decoded (or refused) by the graph
    parser and put in their places (read again by `npyio._read.objects.read_sized` with
    ``one_get``, else by ``tf.io.read_file``)."""
    hint, dims = _static(spec)
    values, ok = read_files(paths, tf.as_dtype(spec.file.dtype), dims, hint.header)

    def graph() -> tf.Tensor:
        doubted = tf.where(tf.logical_not(ok))
        names = tf.gather_nd(paths, doubted)
        size = hint.size
        again = (lambda name: read_sized(name, size)) if one_get else read_file
        contents = tf.map_fn(again, names, fn_output_signature=tf.string)
        decoded = decode_group([Fetched(names, contents)], [spec], batched=True)[0]
        if 0 in dims:  # empty arrays: nothing to put in place, only the graph's verdicts
            with tf.control_dependencies([decoded]):
                return tf.identity(values)
        # no rows: the op allocated nothing, since no file had the plan's size (a large batch
        # whose shape no file holds), and every file is doubted: the graph decodes them all
        nothing = tf.equal(tf.shape(values, out_type=tf.int64)[0], 0)
        return tf.cond(
            nothing,
            lambda: decoded,
            lambda: tf.tensor_scatter_nd_update(values, doubted, decoded),
        )

    out = tf.cond(tf.reduce_all(ok), lambda: tf.identity(values), graph)
    out.set_shape(paths.shape.concatenate(dims))
    return out


def _windows(
    paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None
) -> tuple[tf.Tensor, tf.Tensor, Window, tuple[int, ...]]:
    """``NpyioReadWindows`` of ``spec.crop`` over ``paths`` ([B]): the kernel's values and
    ``ok``, the window, and its static dims."""
    hint, dims = _static(spec)
    window = spec.crop
    if window is None:  # the reader sends only cropped parts here
        raise ValueError("the native reader reads windows of cropped parts only")
    out_dims = tuple(int(d) for d in window.sizes(dims) if d is not None)
    n = tf.shape(paths, out_type=tf.int64)[0]
    start = starts(window, tf.constant(dims, tf.int64), draw)
    start = tf.broadcast_to(start, tf.stack([n, len(dims)]))
    if window.policy != PAD:  # trimmed (or, checked when planned, inside the array)
        start = tf.maximum(start, 0)
    fill = np.asarray(window.fill, spec.file.dtype).tobytes() if window.policy == PAD else b""
    dtype = tf.as_dtype(spec.file.dtype)
    values, ok, _ = read_windows(paths, start, dtype, dims, out_dims, hint.header, fill)
    return values, ok, window, out_dims


def read_window_batch(paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None) -> tf.Tensor:
    """The windows (``spec.crop``) of the files ``paths`` ([B]) of a part the native reader
    serves, as one [B, *window] tensor: the kernel reads each window's runs and nothing else of
    the payload; the files it doubts are read whole by the graph parser and cut there (or
    refused, naming the file). ``draw``: [B, axes] for a random window."""
    values, ok, window, out_dims = _windows(paths, spec, draw)

    def graph() -> tf.Tensor:
        doubted = tf.where(tf.logical_not(ok))
        names = tf.gather_nd(paths, doubted)
        contents = tf.map_fn(read_file, names, fn_output_signature=tf.string)
        whole = spec.read_whole()
        decoded = decode_group([Fetched(names, contents)], [whole], batched=True)[0]
        rows = None if draw is None else tf.gather_nd(draw, doubted)
        cut = cut_batch(decoded, window, rows, names)
        return tf.tensor_scatter_nd_update(values, doubted, cut)

    out = tf.cond(tf.reduce_all(ok), lambda: tf.identity(values), graph)
    out.set_shape(paths.shape.concatenate(out_dims))
    return out
