"""Readers: how one part of an element (a ``.npy`` file, or a member of an ``.npz`` archive)
becomes its tensor, in two steps that every builder and backend share.

1. **fetch** (`npyio._read.backends.Reader.fetch`): a path and the part's `Spec` -> a
   `npyio._graph.decode.Fetched`: the part's ``.npy`` bytes and the name its errors use (the
   path, or ``path[key]``); in a *reporting* read (for ``ignore_errors``), also the verdict of
   fetching (the file exists, the archive is sound).
2. **decode** (`npyio._read.backends.Reader.decode`): the fetched parts of one element, or of
   a batch of them -> their tensors, checked against their specs under each spec's limits.

`npyio.dataset`'s two strategies differ only in where the batch goes: between the two steps
(batch-then-decode, the graph backend's raw bytes), or after both (decode-then-batch). The
graph reader is here; `npyio._read.py_function` and `npyio._read.native` read from the path
themselves, so their fetch only names the file (and, reporting, checks that it exists).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import tensorflow as tf

from npyio._format.files import NO_SUCH_FILE
from npyio._format.spec import Spec
from npyio._format.window import CENTER, RANDOM
from npyio._graph.decode import Fetched, check_group, decode_group, report_then_assert
from npyio._graph.ops import assert_verdict
from npyio._graph.window import cut, cut_batch, same_sizes
from npyio._graph.zip import checked_member, npz_member
from npyio._read import CAPABILITIES, Capabilities
from npyio._read.objects import read_sized
from npyio._tf import undecorated

__all__ = [
    "Batching",
    "GraphReader",
    "PathReader",
    "Reader",
    "cut_parts",
    "exists_in_graph",
    "member_name",
    "read_error",
    "read_file",
]


def read_error(error: tf.errors.OpError, name: str) -> str:
    """The reason in a ``tf.io.read_file`` error about ``name``, without TensorFlow's
    decorations: `NO_SUCH_FILE` for a missing file (whose message some file systems, ram://,
    leave empty), else TensorFlow's words ("is a directory", ...)."""
    if isinstance(error, tf.errors.NotFoundError):
        return NO_SUCH_FILE
    # TensorFlow's eager ReadFile errors: "{{function_node ...}} PATH; REASON [Op:ReadFile] name: "
    reason = undecorated(error.message)
    for separator in ("; ", ": "):
        if reason.startswith(name + separator):
            reason = reason[len(name) + len(separator) :]
    return reason[:1].lower() + reason[1:] if reason else type(error).__name__


def read_file(path: tf.Tensor) -> tf.Tensor:
    """``tf.io.read_file(path)`` (a scalar string); eagerly, an error's message is
    ``"PATH: reason"``, as npyio's own are, not TensorFlow's ``"{{function_node ...}} PATH;
    No such file or directory [Op:ReadFile]"``. (In a graph its error is TensorFlow's.)"""
    if not tf.executing_eagerly():
        return tf.io.read_file(path)
    try:
        return tf.io.read_file(path)
    except tf.errors.OpError as e:
        name = path.numpy().decode("utf-8", "replace")
        raise type(e)(None, None, f"{name}: {read_error(e, name)}") from None


def member_name(path: tf.Tensor, key: str | tf.Tensor) -> tf.Tensor:
    """How errors name a member of an ``.npz`` archive, in the graph: ``path[key]`` (the twin
    of `npyio._format.files.member_name`)."""
    return tf.strings.join([path, "[", key, "]"])


def exists_in_graph(path: tf.Tensor) -> tf.Tensor:
    """Whether the file ``path`` exists, checked in the graph (``MatchingFiles`` of a path
    without glob characters checks that one path, without listing its directory). A path with
    any of ``*?[\\`` is taken to exist: as a pattern it would list its whole directory for every
    element, so a missing one is left to ``tf.io.read_file``'s error."""
    globbed = tf.strings.regex_full_match(path, r".*[*?\[\\].*")
    return tf.cond(
        globbed, lambda: tf.constant(True), lambda: tf.size(tf.io.matching_files(path)) > 0
    )


@dataclasses.dataclass(frozen=True)
class Batching:
    """How the loader batches, for a reader that batches itself (`Reader.batches`): the
    loader's ``batch_size`` and ``drop_remainder``, its ``num_parallel_calls`` and
    ``prefetch`` (None, AUTOTUNE or a count) as the reader's reads and batches in flight, and
    its ``deterministic`` (only ``False`` lets a full batch read early go first)."""

    batch_size: int
    drop_remainder: bool
    parallelism: int | None
    prefetch: int | None
    deterministic: bool | None = None


class Reader(abc.ABC):
    """What every builder reads a part through: *fetch* (a path -> its ``.npy`` bytes, or
    the path itself for readers that read it in decode), then *decode* (fetched parts ->
    tensors, checked against their specs). ``capabilities`` says what the reader can do
    (`npyio._read.Capabilities`): with ``decodes_batches``, ``decode`` takes a batch of
    fetched parts; without ``fetches``, ``fetch`` only names the path (what this base does).

    ``report`` (for ``ignore_errors``): each file refused is also named on stderr, as
    ``npyio: skipping PATH: reason``, whatever ``TF_CPP_MIN_LOG_LEVEL`` says.
    """

    capabilities: ClassVar[Capabilities]

    def __init__(self, report: bool = False) -> None:
        self.report = report

    def fetch(self, path: tf.Tensor, spec: Spec) -> Fetched:
        """The part of ``path`` that ``spec`` names (``path``: a scalar string, or a [B] batch
        for a reader that does not fetch): here, the path itself, read in `decode`; reporting,
        with the verdict that the file exists."""
        if not self.report:
            return Fetched(path, path)
        return Fetched(path, path, (exists_in_graph(path), _missing(path)))

    def decode(
        self,
        fetched: Sequence[Fetched],
        specs: Sequence[Spec],
        batched: bool = False,
        draws: Sequence[tf.Tensor | None] | None = None,
    ) -> list[tf.Tensor]:
        """The tensors of one element's fetched parts, or with ``batched`` of a batch of them
        (each `Fetched` field then has a batch dim). A cropped part (``spec.crop``) gives its
        window, placed by its ``draws`` entry where the window is random: here cut out of the
        whole array (`decode_whole`), the graph path's crop."""
        whole = self.decode_whole(fetched, [spec.read_whole() for spec in specs], batched)
        report = self.report and not tf.executing_eagerly()
        return cut_parts(whole, fetched, specs, draws, batched, report=report)

    @abc.abstractmethod
    def decode_whole(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool = False
    ) -> list[tf.Tensor]:
        """`decode` of parts read whole."""

    def read_doubting(
        self,
        fetched: Sequence[Fetched],
        specs: Sequence[Spec],
        draws: Sequence[tf.Tensor | None] | None = None,
    ) -> tuple[list[tf.Tensor], tf.Tensor]:
        """For a reader that ``doubts`` (`npyio._read.Capabilities`): a batch of fetched parts
        read without deciding the files it doubts: per part the [K] values of the K elements
        whose every part it read, in order, and [B] whether each element was so read (where
        not, its files go to another reader; nothing was kept of them). Never raises for a
        bad file."""
        # (`choose_strategy` sends ignore_errors here only for a reader whose capabilities
        # say ``doubts``: the native reader, which overrides this)
        raise ValueError(f"{type(self).__name__} does not say which files it doubts")

    def batches(
        self,
        units: tf.data.Dataset,
        specs: Sequence[Spec],
        firsts: Sequence[str],
        batching: Batching,
        make: Callable[[Any, list[Any]], Any],
    ) -> tf.data.Dataset | None:
        """For a reader with a dataset op of its own that reads the loader's stream of
        ``units`` into batches (the native reader's ``NpyioBatchDataset``): the batches, each
        the structure ``make(units, parts)`` builds of a batch of units and its parts read
        (``make`` only arranges them: the reader may call it on placeholders). Each unit's
        first components are its paths, a part each (``specs``, whose first files are
        ``firsts``). None (here, and where the op does not serve the parts): the loader
        batches the units and `decode` reads each batch."""
        return None

    def check(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec]
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """For a reporting reader that can decide without raising (the graph reader): one
        element's fetched parts (scalars, with the verdicts of its reporting `fetch`) checked
        as its reporting `decode` checks them, raising nothing: whether every part is
        accepted (its `decode` then raises nothing), and the skip lines that `decode` would
        print for the others ("" for none)."""
        raise ValueError(f"{type(self).__name__} does not check elements without raising")

    def read(self, paths: Sequence[tf.Tensor], specs: Sequence[Spec]) -> list[tf.Tensor]:
        """Fetch and decode one element's parts: a scalar path per part."""
        return self.decode([self.fetch(p, s) for p, s in zip(paths, specs)], specs)


class PathReader(Reader):
    """The readers of the backends that read one file from its path themselves, one element
    at a time (`read_path`)."""

    def decode_whole(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool = False
    ) -> list[tf.Tensor]:
        if batched:
            raise ValueError(f"{type(self).__name__} decodes one element at a time")
        verdicts = [f.verdict for f in fetched if f.verdict]
        # npyio reports the missing files here; the backend reports the rest itself.
        with tf.control_dependencies(report_then_assert(verdicts) if verdicts else []):
            # (this reader's fetch gives the path as the contents: it reads the file itself)
            return [self.read_path(f.contents, spec) for f, spec in zip(fetched, specs)]

    @abc.abstractmethod
    def read_path(self, path: tf.Tensor, spec: Spec) -> tf.Tensor:
        """One file through the backend (a scalar path in, its tensor out)."""


class GraphReader(Reader):
    """npyio's graph parser: ``tf.io.read_file``, the ``.npz`` member, then `decode_group`.

    ``one_get`` (for object storage): a ``.npy`` part whose spec knows its files' size (a hint)
    is read by `npyio._read.objects.read_sized`, in one request whatever TensorFlow's GCS
    read block.
    """

    capabilities = CAPABILITIES["graph"]

    def __init__(self, report: bool = False, one_get: bool = False) -> None:
        super().__init__(report)
        self.one_get = one_get

    def fetch(self, path: tf.Tensor, spec: Spec) -> Fetched:
        if self.report:
            return self._fetch_reporting(path, spec)
        if spec.member is None and self.one_get and spec.hint is not None:
            return Fetched(path, read_sized(path, spec.hint.size))
        if spec.member is None:
            return Fetched(path, read_file(path))
        return self.fetch_member(path, spec.member)

    def fetch_member(self, path: tf.Tensor, key: str | tf.Tensor) -> Fetched:
        """Member ``key`` of the archive ``path`` (``key``: a str or a scalar string tensor),
        named ``path[key]``; a bad archive or a missing member is an error naming it."""
        return self.take_member(read_file(path), key, member_name(path, key))

    def take_member(self, contents: tf.Tensor, key: str | tf.Tensor, name: tf.Tensor) -> Fetched:
        """Member ``key`` of the archive's bytes ``contents`` (a scalar string), named ``name``
        in errors: the step `fetch_member` and `npyio.decode_npz` share."""
        return Fetched(name, npz_member(contents, key, name))

    def _fetch_reporting(self, path: tf.Tensor, spec: Spec) -> Fetched:
        """As `fetch`, without asserting: a missing file or a bad archive is a verdict, and
        the file is read only if it exists (so that npyio, not ``read_file``, refuses it)."""
        found = exists_in_graph(path)
        contents = tf.cond(found, lambda: tf.io.read_file(path), lambda: tf.constant(""))
        if spec.member is None:
            return Fetched(path, contents, (found, _missing(path)))
        name = member_name(path, spec.member)
        data, ok, message = checked_member(contents, spec.member, name)
        verdict = (tf.logical_and(found, ok), tf.where(found, message, _missing(path)))
        return Fetched(name, data, verdict)

    def decode_whole(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool = False
    ) -> list[tf.Tensor]:
        """The tensors of fetched parts: each a scalar, or with ``batched`` a [B] batch."""
        report = self.report and not tf.executing_eagerly()
        if self.report:  # a skip line says what is wrong; where the spec came from, and the
            # advice to verify or skip, are for an error that stops the run
            specs = [dataclasses.replace(spec, origin="") for spec in specs]
        return decode_group(fetched, specs, batched, report=report)

    def check(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec]
    ) -> tuple[tf.Tensor, tf.Tensor]:
        if not self.report:  # the verdicts of fetching come from a reporting fetch
            raise ValueError("the graph reader checks elements only when it reports")
        # the specs as a reporting `decode` reads the parts: whole, and without their origin
        whole = [dataclasses.replace(spec.read_whole(), origin="") for spec in specs]
        return check_group(fetched, whole)


def cut_parts(
    values: Sequence[tf.Tensor],
    fetched: Sequence[Fetched],
    specs: Sequence[Spec],
    draws: Sequence[tf.Tensor | None] | None,
    batched: bool,
    *,
    report: bool = False,
) -> list[tf.Tensor]:
    """``values`` (whole arrays, one per part, or [B] batches of them with ``batched``) with
    each cropped part's window cut out (`npyio._graph.window.cut`), named in errors as its
    fetch names the file; parts that share a window first checked to agree on its axes
    (`_shared_windows`; ``report``: a refused pair is named on stderr, for ignore_errors)."""
    verdicts = _shared_windows(values, fetched, specs, batched)
    if verdicts and report:
        with tf.control_dependencies(report_then_assert(verdicts)):
            values = [tf.identity(v) for v in values]
    for ok, message in [] if report else verdicts:
        values = assert_verdict(ok, message, *values)
    draws = draws or [None] * len(specs)
    out = []
    for value, f, spec, draw in zip(values, fetched, specs, draws):
        window = spec.crop
        if window is None:
            out.append(value)
        elif not batched:
            out.append(cut(value, window, draw, f.name))
        else:
            out.append(cut_batch(value, window, draw, f.name))
    return out


def _varies(spec: Spec) -> bool:
    """Whether a cropped part's sizes on the window's axes can differ from file to file."""
    shape, window = spec.file.shape, spec.crop
    return shape is None or window is None or any(shape[axis] is None for axis in window.axes)


def _shared_windows(
    values: Sequence[tf.Tensor],
    fetched: Sequence[Fetched],
    specs: Sequence[Spec],
    batched: bool,
) -> list[tuple[tf.Tensor, tf.Tensor]]:
    """The verdicts (`npyio._graph.window.same_sizes`) on each part that shares a random or
    centred window with an earlier part (the window's group), where their sizes on its axes
    can differ (a ``None`` dim): with static shapes, the plan compared them when it was built,
    and every file is checked against its shape."""
    verdicts = []
    first: dict[int, int] = {}  # a window's group -> its first part
    for i, spec in enumerate(specs):
        window = spec.crop
        if window is None or window.start not in (RANDOM, CENTER):
            continue
        j = first.setdefault(window.group, i)
        if j == i or not (_varies(spec) or _varies(specs[j])):
            continue
        dims = [tf.shape(values[k], out_type=tf.int64)[1 if batched else 0 :] for k in (j, i)]
        names: list[tf.Tensor] = []
        for k in (j, i):
            name = fetched[k].name
            assert name is not None, "a dataset's parts are named"
            names.append(name[0] if batched else name)  # a batch's arrays share a shape
        other = specs[j].crop
        assert other is not None
        verdicts.append(same_sizes(other, dims[0], names[0], window, dims[1], names[1]))
    return verdicts


def _missing(path: tf.Tensor) -> tf.Tensor:
    return tf.strings.join([path, ": ", NO_SUCH_FILE])
