"""The native reader: a batch of files read straight into one tensor by npyio's C++ op
(`npyio._native`), with the graph parser deciding every file the kernel doubts.

The plan sends it only parts it serves (`npyio._read.serves`: one static shape, a native-order
C-order header). Whole files of one static shape on the local disk are read by the dataset op
``NpyioBatchDataset`` (`NativeReader.batches`): the loader's stream of units in, batches out,
read on the op's own threads with batches in flight, and `settle` (the graph path) called only
for a batch with a file the kernel doubts, so no function runs per batch. Other parts (crops,
per-case shapes, object storage) are read per batch by the ops below, in the loader's parallel
map. With ``ignore_errors``, the builder reads batches through `read_doubting` (the kernel's
reads, and which files it doubted) and sends only the elements of doubted files to the graph
reader's skip-and-report (`npyio._sources.dataset.build_skipping`).

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

A part of per-case shapes (``None`` dims, local files, whole arrays, not with
``ignore_errors``) is read one file at a time by ``NpyioReadFile`` (`read_one`): the core parses
each file's own header (``src/npy_header.cc``, a strict subset of npyio's grammar, held to it by
a differential fuzz) and reads the file if it holds the part's dtype in native order and C
order and fits the part's shape; it doubts any other file, which the graph parser decides.

A cropped part (``spec.crop``, local files, not of bools) is read by ``NpyioReadWindows``: each
file's header parsed once by the kernel, its window placed by the file's own shape (npyio's
rule, which the graph path's `npyio._graph.window.starts` follows, from the element's draws)
and only its runs read (`_windows`). A file the kernel doubts is read whole by the graph parser
and its window cut there (`read_cases`: with the pair checks of shared windows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import tensorflow as tf

from npyio._format.files import is_local
from npyio._format.header import Hint
from npyio._format.spec import Spec
from npyio._format.window import CENTER, PAD, RANDOM
from npyio._graph.decode import Fetched, decode_group
from npyio._graph.window import cut_batch
from npyio._native import batch_dataset, read_files, read_windows
from npyio._native import read_file as read_parsed
from npyio._read import CAPABILITIES
from npyio._read.objects import read_sized
from npyio._read.part import Batching, Reader, cut_parts, read_file
from npyio._tf import single_device_function

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
        if any(_case_window(spec) for spec in specs):
            return read_cases(fetched, specs, batched, draws)
        out = []
        for f, spec, draw in zip(fetched, specs, draws or [None] * len(specs)):
            if not spec.file.static and not batched:  # per-case shapes: one file at a time
                out.append(read_one(f.contents, spec))
                continue
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

    def batches(
        self,
        units: tf.data.Dataset,
        specs: Sequence[Spec],
        firsts: Sequence[str],
        batching: Batching,
        make: Callable[[Any, list[Any]], Any],
    ) -> tf.data.Dataset | None:
        """Batches read by ``NpyioBatchDataset`` where it serves every part (`batch_parts`),
        with `settle` as its fallback for the batches with a doubted file; else None."""
        parts = batch_parts(specs, firsts)
        if parts is None:
            return None
        flat = tf.nest.flatten(units.element_spec)
        n, lead = len(flat), batching.batch_size if batching.drop_remainder else None
        full = [tf.TensorSpec([lead, *s.shape], s.dtype) for s in flat]
        full += [tf.TensorSpec([lead, *dims], dtype) for dtype, dims, _ in parts]
        # the element's structure, of positions in `full` (make builds structure only)
        marks = make(
            tf.nest.pack_sequence_as(units.element_spec, list(range(n))),
            list(range(n, n + len(parts))),
        )

        def fallback(*read: tf.Tensor) -> list[tf.Tensor]:
            return [
                settle(read[i], read[n + 2 * i], read[n + 2 * i + 1], spec)
                for i, spec in enumerate(specs)
            ]

        signature = [tf.TensorSpec([None, *s.shape], s.dtype) for s in flat]
        for dtype, dims, _ in parts:
            signature += [tf.TensorSpec([None, *dims], dtype), tf.TensorSpec([None], tf.bool)]
        return batch_dataset(
            units,
            batching.batch_size,
            batching.drop_remainder,
            [(i, *part) for i, part in enumerate(parts)],
            READS_IN_FLIGHT if batching.parallelism in (None, -1) else batching.parallelism,
            0 if batching.prefetch in (None, -1) else max(1, batching.prefetch),
            batching.deterministic is not False,
            single_device_function(fallback, signature),
            tf.nest.flatten(marks),
            tf.nest.map_structure(lambda i: full[i], marks),
        )

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


#: The files NpyioBatchDataset reads at once (its own threads), where the loader's
#: ``num_parallel_calls`` is AUTOTUNE: a read waits on storage more than it computes, so more
#: than the cores, for a cold cache or a slow disk: 32, as the C loop that `npyio bench --cold`
#: measures (bench/README.md, "The batch source").
READS_IN_FLIGHT = 32


def batch_parts(
    specs: Sequence[Spec], firsts: Sequence[str]
) -> list[tuple[tf.DType, tuple[int, ...], bytes]] | None:
    """What ``NpyioBatchDataset`` reads of each part (its dtype, static shape and the header
    every file holds), where it serves them all: whole files of one static shape on the local
    disk. None for any other plan (a crop, per-case shapes, object storage), which the loader's
    batches and `decode` read."""
    if not all(is_local(path) for path in firsts):
        return None
    out = []
    for spec in specs:
        if spec.crop is not None or not spec.file.static or spec.output != spec.file:
            return None
        hint, dims = _static(spec)
        out.append((tf.as_dtype(spec.file.dtype), dims, hint.header))
    return out


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
    read = _windows(paths, spec, draw)
    return read.values, read.ok


def read_batch(paths: tf.Tensor, spec: Spec, one_get: bool = False) -> tf.Tensor:
    """The files ``paths`` ([B]) of a part the native reader serves, as one [B, *shape]
    tensor: the kernel's reads, settled (`settle`)."""
    hint, dims = _static(spec)
    values, ok = read_files(paths, tf.as_dtype(spec.file.dtype), dims, hint.header)
    return settle(paths, values, ok, spec, one_get)


def settle(
    paths: tf.Tensor, values: tf.Tensor, ok: tf.Tensor, spec: Spec, one_get: bool = False
) -> tf.Tensor:
    """The kernel's read of ``paths`` ([B]: ``values``, [B, *shape] or [0, *shape], and ``ok``,
    [B]) as one [B, *shape] tensor, with the files it doubts decoded (or refused) by the graph
    parser and put in their places (read again by `npyio._read.objects.read_sized` with
    ``one_get``, else by ``tf.io.read_file``)."""
    hint, dims = _static(spec)

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


def read_one(path: tf.Tensor, spec: Spec) -> tf.Tensor:
    """The file ``path`` (a scalar) of a part of per-case shapes, whole: the kernel parses its
    header and reads it if it holds the part's dtype in native order and C order and fits the
    part's shape; any other file is decoded (or refused, naming it) by the graph parser."""
    if spec.crop is not None:  # the plan sends only whole parts here
        raise ValueError("the native reader reads per-case shapes whole only")
    limits = spec.limits
    value, ok = read_parsed(
        path,
        tf.as_dtype(spec.file.dtype),
        spec.file.shape,
        limits.max_header_size,
        limits.max_file_size,
    )

    def graph() -> tf.Tensor:
        return decode_group([Fetched(path, read_file(path))], [spec], batched=False)[0]

    out = tf.cond(ok, lambda: tf.identity(value), graph)
    out.set_shape(tf.TensorShape(spec.file.shape))
    return out


def _case_window(spec: Spec) -> bool:
    """Whether ``spec`` is a window of files of per-case shapes (the plan sends only those of a
    static window size): placed by each file's own shape, read by the kernel."""
    return spec.crop is not None and not spec.file.static


class Windows(NamedTuple):
    """A batch's windows of one part, as the kernel read them."""

    values: tf.Tensor  # [B, *window]
    dims: tf.Tensor  # [B, rank]: each file's shape, from its header
    ok: tf.Tensor  # [B]: read, and the window lies where its policy allows


def _windows(paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None) -> Windows:
    """The windows (``spec.crop``) of ``paths`` ([B]) as the kernel reads them first, by
    ``NpyioReadWindows``: each file's header parsed once, the window placed by its own shape
    (npyio's rule, the graph path's `starts`, from ``draw``: [B, k] or [B, 2k] for a random
    window) and only its runs read. The plan's static shape, where it has one, is what every
    file must hold. A file the kernel doubts, or whose window passes its edge under
    ``"error"``, is not ok."""
    window, shape = spec.crop, spec.file.shape
    assert window is not None and shape is not None
    sizes = tuple(int(d) for d in spec.output.shape or () if d is not None)  # static
    if draw is None:
        draw = tf.zeros([tf.shape(paths)[0], 0], tf.float64)
    fill = np.asarray(window.fill, spec.file.dtype).tobytes() if window.policy == PAD else b""
    limits = spec.limits
    values, dims, ok, _ = read_windows(
        paths,
        draw,
        tf.as_dtype(spec.file.dtype),
        shape,
        sizes,
        window.axes,
        window.start,
        window.policy,
        limits.max_header_size,
        limits.max_file_size,
        fill,
    )
    values.set_shape(paths.shape.concatenate(sizes))
    return Windows(values, dims, ok)


def read_cases(
    fetched: Sequence[Fetched],
    specs: Sequence[Spec],
    batched: bool,
    draws: Sequence[tf.Tensor | None] | None,
) -> list[tf.Tensor]:
    """The parts of a batch (or, without ``batched``, an element) with windows of per-case
    shapes: the windows read by the kernel (`_windows`), the other parts as the reader
    reads them. Where any window is not ok, or two parts that share a window disagree on its
    axes, that element's windowed parts are decoded whole and cut by the graph path, which
    reads them or refuses them with its own words (naming the file, or both files)."""
    draws = list(draws or [None] * len(specs))
    rows = [f if batched else _one_row(f) for f in fetched]
    row_draws = [d if batched or d is None else d[None] for d in draws]
    out: list[tf.Tensor | None] = []
    cases: dict[int, Windows] = {}
    for i, (f, spec, draw) in enumerate(zip(rows, specs, row_draws)):
        if _case_window(spec):
            cases[i] = _windows(f.contents, spec, draw)
        out.append(None if _case_window(spec) else _read_rows(f.contents, spec, draw))
    ok = _all_ok(specs, cases)
    windowed = sorted(cases)

    def native() -> list[tf.Tensor]:
        return [tf.identity(cases[i].values) for i in windowed]

    def graph() -> list[tf.Tensor]:
        def one(r: tf.Tensor) -> list[tf.Tensor]:
            return tf.cond(
                ok[r],
                lambda: [cases[i].values[r] for i in windowed],
                lambda: _graph_windows(rows, specs, row_draws, windowed, r),
            )

        signature = [tf.TensorSpec(specs[i].output.shape, specs[i].output.dtype) for i in windowed]
        n = tf.shape(ok)[0]
        return tf.map_fn(one, tf.range(n), fn_output_signature=signature)

    read = tf.cond(tf.reduce_all(ok), native, graph)
    for i, values in zip(windowed, read):
        values.set_shape(tf.TensorShape([None]).concatenate(specs[i].output.shape))
        out[i] = values
    done = [v for v in out if v is not None]
    assert len(done) == len(out)
    return done if batched else [v[0] for v in done]


def _read_rows(paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None) -> tf.Tensor:
    """A part without windows of per-case shapes, [B] files of it, as the reader reads it."""
    if not spec.file.static:  # per-case shapes, whole: one file at a time
        signature = tf.TensorSpec(spec.file.shape, spec.file.dtype)
        return tf.map_fn(lambda p: read_one(p, spec), paths, fn_output_signature=signature)
    return read_batch(paths, spec) if spec.crop is None else read_window_batch(paths, spec, draw)


def _row(draw: tf.Tensor | None, r: tf.Tensor) -> tf.Tensor | None:
    return None if draw is None else draw[r]


def _one_row(f: Fetched) -> Fetched:
    """An element's fetch as a batch of one."""
    return f._replace(contents=f.contents[None], name=None if f.name is None else f.name[None])


def _all_ok(specs: Sequence[Spec], cases: dict[int, Windows]) -> tf.Tensor:
    """[B]: whether every window of the row was read, and the parts that share one agree."""
    ok = tf.reduce_all(tf.stack([c.ok for c in cases.values()]), axis=0)
    return tf.logical_and(ok, _agree(specs, cases))


def _agree(specs: Sequence[Spec], cases: dict[int, Windows]) -> tf.Tensor:
    """[B]: whether the parts that share a random or centred window (its group) have the same
    sizes on its axes, row by row (else the graph path refuses the pair, naming both files)."""
    first: dict[int, int] = {}
    agree = [tf.ones_like(c.ok) for c in cases.values()][:1]
    for i in sorted(cases):
        window = specs[i].crop
        assert window is not None
        if window.start not in (RANDOM, CENTER):
            continue
        j = first.setdefault(window.group, i)
        if j == i:
            continue
        other = specs[j].crop
        assert other is not None
        mine = tf.gather(cases[i].dims, list(window.axes), axis=1)
        theirs = tf.gather(cases[j].dims, list(other.axes), axis=1)
        agree.append(tf.reduce_all(tf.equal(mine, theirs), axis=1))
    return tf.reduce_all(tf.stack(agree), axis=0)


def _graph_windows(
    rows: Sequence[Fetched],
    specs: Sequence[Spec],
    draws: Sequence[tf.Tensor | None],
    windowed: Sequence[int],
    r: tf.Tensor,
) -> list[tf.Tensor]:
    """Row ``r``'s windowed parts, read whole and cut by the graph path (`cut_parts`: pairs
    checked, windows past the edge refused or trimmed, each error naming its file)."""
    paths = [rows[i].contents[r] for i in windowed]
    whole = [specs[i].read_whole() for i in windowed]
    fetched = [Fetched(name=p, contents=read_file(p)) for p in paths]
    values = decode_group(fetched, whole, batched=False)
    row_draws = [_row(draws[i], r) for i in windowed]
    return cut_parts(values, fetched, [specs[i] for i in windowed], row_draws, batched=False)


def read_window_batch(paths: tf.Tensor, spec: Spec, draw: tf.Tensor | None) -> tf.Tensor:
    """The windows (``spec.crop``) of the files ``paths`` ([B]) of a part the native reader
    serves, as one [B, *window] tensor: the kernel reads each window's runs and nothing else of
    the payload; the files it doubts are read whole by the graph parser and cut there (or
    refused, naming the file). ``draw``: [B, axes] for a random window."""
    values, _, ok = _windows(paths, spec, draw)
    window = spec.crop
    assert window is not None  # _windows refuses others

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
    out.set_shape(values.shape)
    return out
