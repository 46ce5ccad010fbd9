"""The one description of a part of every element (`Spec`), from the plan to the graph parser:
what its files must hold (`Spec.file`), what it loads as (`Spec.output`), the header the fast
path expects, the ``.npz`` member and the limits it is read under; and the rules that derive it
from the first file's header (`spec_from_header`; `npyio._io.spec.derive_spec` reads that
header).

No I/O. A spec comes from the arguments (``dtype``, ``shape``), else from the first file's
header; arguments that contradict that header are refused when the dataset is built, naming
the file. Every file must then have the file layout's dtype and a shape its shape matches
(``None`` dims match any size): `Layout.reason`, the rule the graph parser applies too, so that
``npyio verify`` and ``npyio.dataset`` agree. Readers, the graph parser and the commands take a
`Spec` as it is; the graph layer's views of it are functions
(`npyio._graph.parser.spec_tensors`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from npyio._format import npy
from npyio._format.files import member_name
from npyio._format.header import Hint, Limits, make_hint
from npyio._format.window import Window
from npyio.errors import NpyFormatError

__all__ = ["Layout", "Spec", "spec_from_header"]


@dataclass(frozen=True)
class Layout:
    """A dtype and a shape: what a part's files hold, or what the part loads as.

    Attributes:
        dtype: The dtype, in native byte order (files of either order decode to it).
        shape: The shape; ``None`` dims match any size, ``shape=None`` any shape.
    """

    dtype: np.dtype
    shape: tuple[int | None, ...] | None

    @property
    def static(self) -> bool:
        """Whether every array has the same shape (batches need no padding)."""
        return self.shape is not None and all(d is not None for d in self.shape)

    def reason(self, header: npy.NpyHeader, path: str) -> str | None:
        """Why a file with ``header`` does not hold this layout (None: it does)."""
        try:
            npy.check_declared(header, self.dtype, self.shape, path)
        except NpyFormatError as e:
            return e.reason
        return None


@dataclass(frozen=True)
class Spec:
    """One part of every element: what its files hold, what it loads as, and the limits it is
    read under.

    Attributes:
        file: What every file of the part must hold (checked by every reader).
        output: What the part loads as: the same as ``file`` for a part read whole; the
            window's shape for a cropped part.
        hint: The header files are expected to share, for the graph's fast path.
        member: The ``.npz`` member to read, or None for ``.npy`` files.
        limits: The size limits every reader applies to this part.
        crop: The window read of each array (`npyio._format.window.Window`), or None for
            the whole array.
        origin: Where the spec came from, as a read-time mismatch names it: the file whose
            header set it, or the arguments; "" where nothing set it for a dataset (the
            decode ops' own ``dtype``/``shape``). Not part of a spec's identity.
    """

    file: Layout
    output: Layout
    hint: Hint | None = None
    member: str | None = None
    limits: Limits = Limits()
    crop: Window | None = None
    origin: str = field(default="", compare=False)

    @staticmethod
    def whole(
        dtype: np.dtype,
        shape: tuple[int | None, ...] | None,
        hint: Hint | None = None,
        member: str | None = None,
        limits: Limits = Limits(),
    ) -> Spec:
        """The spec of a part read whole: it loads as its files' layout, ``(dtype, shape)``."""
        layout = Layout(dtype, shape)
        return Spec(layout, layout, hint, member, limits)

    def cropped(self, window: Window) -> Spec:
        """This part, reading ``window`` of each array: it loads as the window's shape."""
        shape = None if self.file.shape is None else window.sizes(self.file.shape)
        return dataclasses.replace(self, output=Layout(self.file.dtype, shape), crop=window)

    def read_whole(self) -> Spec:
        """This part read whole (a reader that cuts the window out of the whole array
        decodes that first)."""
        return dataclasses.replace(self, output=self.file, crop=None)

    def usable_hint(self) -> Hint | None:
        """The hint, unless files like it must be refused under the limits (then the full
        parser says why)."""
        return self.hint if self.hint is not None and self.hint.usable(self.limits) else None

    def name(self, path: str) -> str:
        """How errors name this part of the file ``path``: the path, or ``path[member]``."""
        return path if self.member is None else member_name(path, self.member)


def _cast_hint(what: str, arg: str, want: np.dtype, paired: bool) -> str:
    """How to get ``want`` from files of another dtype: read them as they are, then cast the
    part that ``what`` names (and only it) in a map over the dataset's elements."""
    cast = f"tf.cast({'x' if what == 'inputs' else 'y'}, tf.{want.name})"
    if not paired:
        fn = f"lambda x: {cast}"
    elif what == "inputs":
        fn = f"lambda x, y: ({cast}, y)"
    else:
        fn = f"lambda x, y: (x, {cast})"
    return (
        f"; to load the {what} as {want.name}, leave {arg} out (it is read from the files) "
        f"and cast: ds = ds.map({fn})"
    )


def _castable(want: np.dtype, got: np.dtype) -> bool:
    """Whether a user who asks for ``want`` from files of ``got`` plausibly wants a cast:
    numbers (and bools) to numbers, except complex to real, which drops the imaginary part."""
    numeric = want.kind in "biufc" and got.kind in "biufc"
    return numeric and not (got.kind == "c" and want.kind != "c")


def _contradiction(
    header: npy.NpyHeader,
    dtype: np.dtype | None,
    shape: tuple[int | None, ...] | None,
    what: str,
    path: str,
    paired: bool,
) -> NpyFormatError | None:
    """The build-time error for a ``dtype``/``shape`` argument the first header contradicts:
    ``"{path}: dtype mismatch -- expected label_dtype=int64, got float32; ..."``."""
    prefix = "" if what == "inputs" else "label_"
    got = header.dtype.newbyteorder("=")
    if dtype is not None and got != dtype:
        reason = npy.dtype_mismatch(f"{prefix}dtype={dtype.name}", got.name)
        if _castable(dtype, got):
            reason += _cast_hint(what, f"{prefix}dtype", dtype, paired)
        return NpyFormatError(path, reason)
    if shape is not None:
        mismatch = Layout(got, shape).reason(header, path)
        if mismatch is not None:
            mismatch = mismatch.replace(" -- expected ", f" -- expected {prefix}shape=", 1)
            return NpyFormatError(path, mismatch.replace("pass shape=", f"pass {prefix}shape=", 1))
    return None


def spec_from_header(
    header: npy.NpyHeader,
    prefix: bytes,
    dt: np.dtype | None,
    dims: tuple[int | None, ...] | None,
    where: str,
    what: str,
    paired: bool,
    member: str | None = None,
    limits: Limits = Limits(),
) -> Spec:
    """The spec of a part whose first file (named ``where``) has ``header`` and starts with
    ``prefix``: ``dt`` and ``dims`` where given (None: the header's), checked against it.

    Raises:
        NpyFormatError: naming ``where``, when ``dt`` or ``dims`` contradicts the header (with
            a hint on how to cast, for a dtype).
    """
    error = _contradiction(header, dt, dims, what, where, paired)
    if error is not None:
        raise error
    dt = header.dtype.newbyteorder("=") if dt is None else dt
    dims = header.shape if dims is None else dims
    hint = make_hint(dt, dims, prefix) or make_hint(dt, dims)
    return dataclasses.replace(Spec.whole(dt, dims, hint, member, limits), origin=where)
