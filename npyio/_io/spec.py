"""Deriving what one part loads as from its first file (`derive_spec`): the header is read here,
the rules are `npyio._format.spec`'s."""

from __future__ import annotations

import dataclasses

from npyio._format import npy
from npyio._format.files import member_name
from npyio._format.header import Checked, Limits, make_hint
from npyio._format.spec import Spec, spec_from_header
from npyio._io.header import read_checked
from npyio._io.npz import inspect_npz_prefix

__all__ = ["derive_spec"]


def derive_spec(
    first: str,
    dtype: object = None,
    shape: object = None,
    what: str = "inputs",
    *,
    member: str | None = None,
    limits: Limits = Limits(),
    paired: bool | None = None,
    checked: Checked | None = None,
) -> Spec:
    """The spec of one part: ``dtype`` and ``shape`` from the arguments, else from ``first``'s
    header (or ``.npz`` member's ``member``), read once, in Python, under ``limits``. When both
    are given no file is read (every file is checked against them as it is decoded); otherwise
    the given one is checked against the header now, and the header's bytes serve as the fast
    path's hint. ``what`` is ``"inputs"`` or ``"labels"``; ``paired`` says whether elements are
    ``(x, y)`` pairs, for the cast an error suggests (default: only for labels). ``checked`` is
    ``first``'s verdict when its header was read already (``npyio verify`` checks every file
    first): it is not read again.

    Raises:
        NpyFormatError: naming ``first``: its header is bad, its size is not the one its
            header declares (a truncated file), or it contradicts the ``dtype`` or
            ``shape`` given (with a hint on how to cast, for a dtype).
        TypeError: for an unsupported dtype or a bad shape.
    """
    dt = None if dtype is None else npy.parse_dtype(dtype)
    dims = npy.parse_shape(shape)
    if dt is not None and shape is not None:
        spec = Spec.whole(dt, dims, make_hint(dt, dims), member, limits)
        arg = "" if what == "inputs" else "label_"
        return dataclasses.replace(spec, origin=f"the {arg}dtype= and {arg}shape= arguments")
    if member is None:
        # the payload's size too: the file's size is known already (a truncated first file
        # fails here, as the graph would say when it reads it)
        if checked is None:
            checked = read_checked(first, limits, payload=True)
        header, prefix = checked.raise_if_bad(), checked.prefix
    else:
        header, prefix = inspect_npz_prefix(first, member, limits)
    where = first if member is None else member_name(first, member)
    paired = what == "labels" if paired is None else paired
    return spec_from_header(header, prefix, dt, dims, where, what, paired, member, limits)
