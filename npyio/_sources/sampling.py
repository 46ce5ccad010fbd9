"""Checking each part's spec against a few files spread over its listing, when the dataset is
built: the first file sets the spec, so a stray file that sorts first (``labels.npy`` beside
``sample_*.npy``) would set a wrong one, and every good file would then be blamed for it.

`check_samples` reads the headers of the middle and the last file of each part (the first set
its spec) and refuses what they say the spec cannot be:

- two agree and the first does not: the first is the odd one, the likely stray, and would
  have set the spec;
- the first agrees with one and the other does not: that one is odd (with ``ignore_errors`` it
  is left to be skipped when read);
- no two agree: the files really vary, and the error says which ``shape=`` (with ``None``
  where the sizes differ) reads them, or that their dtypes or ranks differ. Two files that
  differ may be one odd file or two sizes: with ``ignore_errors`` the reader skips what is
  unlike the first.

Agreeing means what the spec needs: the dtype, the rank and every dim the spec fixes (``None``
dims and an unknown rank match anything). A sampled file that cannot be read is left to the
reader, which names it as today. Plain Python: no TensorFlow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npyio._format import npy
from npyio._format.header import Limits
from npyio._format.spec import Spec
from npyio._io.header import read_checked
from npyio._io.npz import inspect_npz_prefix
from npyio.errors import NpyFormatError

__all__ = ["Sample", "check_samples", "sample_indices", "verdict"]


@dataclass(frozen=True)
class Sample:
    """One sampled file of a part: its path (as errors name it) and its header."""

    path: str
    header: npy.NpyHeader


def sample_indices(count: int) -> list[int]:
    """The positions sampled in a listing of ``count`` files: the first, the middle and the
    last, each once."""
    return list(dict.fromkeys(i for i in (0, count // 2, count - 1) if count > 0))


def _read(path: str, member: str | None, limits: Limits) -> Sample | None:
    """``path``'s header (or its ``.npz`` member's); None for a file the reader will refuse."""
    try:
        if member is None:
            return Sample(path, read_checked(path, limits).raise_if_bad())
        header, _ = inspect_npz_prefix(path, member, limits)
        return Sample(f"{path}[{member}]", header)
    except (NpyFormatError, OSError, ValueError):
        return None


def _key(header: npy.NpyHeader, fixed: tuple[int | None, ...] | None) -> tuple[object, ...]:
    """What the spec needs two files to share: the dtype, the rank and the dims it fixes."""
    dt = header.dtype.newbyteorder("=")
    if fixed is None:
        return (dt,)
    shape = header.shape
    dims = tuple(d if f is not None else None for d, f in zip(shape, fixed))
    return (dt, len(shape), dims)


def _show(sample: Sample) -> str:
    return f"{sample.path}: {sample.header.dtype.newbyteorder('=').name} " + npy.show_shape(
        sample.header.shape
    )


def _difference(a: npy.NpyHeader, b: npy.NpyHeader) -> str:
    """How ``b`` differs from ``a``, in the graph parser's words (no hint)."""
    da, db = a.dtype.newbyteorder("="), b.dtype.newbyteorder("=")
    if da != db:
        return npy.dtype_mismatch(da.name, db.name)
    return npy.shape_mismatch(npy.show_shape(a.shape), npy.show_shape(b.shape))


def _varying(samples: Sequence[Sample], fixed: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """The spec's shape with ``None`` wherever the samples' sizes differ."""
    shapes = [s.header.shape for s in samples]
    return tuple(
        None if f is None or len({shape[i] for shape in shapes}) > 1 else f
        for i, f in enumerate(fixed)
    )


@dataclass(frozen=True)
class Verdict:
    """What the samples of one part say: the odd file and why (`odd`), or that the files
    vary (`varies`, with the shape that reads them where only sizes differ)."""

    odd: NpyFormatError | None = None
    varies: str | None = None  # what differs, listing the samples
    shape: tuple[int | None, ...] | None = None  # the shape= that reads them, if any


def verdict(spec: Spec, samples: Sequence[Sample], ignore_errors: bool = False) -> Verdict:
    """What ``samples`` (the first file, which set ``spec``, then the others sampled) say of
    the spec: nothing (they agree), an odd file, or files that vary (module docstring)."""
    fixed = spec.file.shape
    keys = [_key(s.header, fixed) for s in samples]
    if len(set(keys)) <= 1:
        return Verdict()
    first, rest = samples[0], samples[1:]
    if len(rest) == 2 and keys[1] == keys[2]:  # the first is the odd one
        reason = (
            f"{_difference(rest[0].header, first.header)} -- unlike {rest[0].path} and "
            f"{rest[1].path}, which agree; this file comes first in the listing, so it would "
            "set the dataset's spec: if it does not belong with the others (a stray file), "
            "move it out, or pass a glob or list that leaves it out (`npyio verify` lists "
            "every file that differs)"
        )
        return Verdict(odd=NpyFormatError(first.path, reason))
    agrees = [s for s, key in zip(rest, keys[1:]) if key == keys[0]]
    if agrees:  # the first and one other agree: the rest is odd
        odd = next(s for s, key in zip(rest, keys[1:]) if key != keys[0])
        if ignore_errors:
            return Verdict()
        reason = (
            f"{_difference(first.header, odd.header)} -- the spec came from {first.path}, "
            f"which {agrees[0].path} agrees with; `npyio verify` lists every file that "
            "differs, and ignore_errors=True skips them"
        )
        return Verdict(odd=NpyFormatError(odd.path, reason))
    if len(samples) == 2 and ignore_errors:  # one odd file or two sizes: the reader decides
        return Verdict()
    listed = "; ".join(_show(s) for s in samples)
    if fixed is None or len({key[:2] for key in keys}) > 1:  # dtypes or ranks differ
        return Verdict(varies=listed)
    return Verdict(varies=listed, shape=_varying(samples, fixed))


def check_samples(
    specs: Sequence[Spec],
    columns: Sequence[Sequence[str]],
    names: Sequence[str],
    sides: Sequence[str],
    sampled: Sequence[bool],
    cropped: Sequence[bool],
    ignore_errors: bool = False,
    *,
    firsts: Sequence[npy.NpyHeader | None] = (),
) -> list[bool]:
    """Refuses specs that the sampled files of their parts contradict (`verdict`); ``sampled``
    says which parts' specs came from a header (a spec given whole is not sampled),
    ``cropped`` which parts are cropped (for the advice); ``firsts``, each part's first
    header where it was read already (not read again: on object storage, a request each).
    Returns, per part, whether its sampled files all have one shape (True where none were
    sampled): where a spec lets sizes vary, whether they likely do not.

    Raises:
        NpyFormatError: naming the odd file, or the first part's first file when the files
            vary (with the ``shape=`` and ``label_shape=`` that read them, where only sizes
            differ).
    """
    varying: list[tuple[str, str, bool, Verdict]] = []
    uniform: list[bool] = []
    known = list(firsts) + [None] * (len(specs) - len(firsts))
    for spec, column, name, side, wanted, crop, first in zip(
        specs, columns, names, sides, sampled, cropped, known
    ):
        uniform.append(True)
        if not wanted:
            continue
        samples = [
            Sample(column[0], first)
            if i == 0 and first is not None
            else _read(column[i], spec.member, spec.limits)
            for i in sample_indices(len(column))
        ]
        if samples[0] is None:  # the first was read when its spec was derived
            continue
        read = [s for s in samples if s is not None]
        uniform[-1] = len({s.header.shape for s in read}) <= 1
        found = verdict(spec, read, ignore_errors)
        if found.odd is not None:
            raise found.odd
        if found.varies is not None:
            varying.append((name, side, crop, found))
    if varying:
        first = columns[names.index(varying[0][0])][0]
        raise NpyFormatError(first, _vary_reason(varying))
    return uniform


def _vary_reason(varying: list[tuple[str, str, bool, Verdict]]) -> str:
    """Why parts whose sampled files vary are refused: what each part's samples hold, and
    the ``shape=`` (``label_shape=``) that reads them where only sizes vary."""
    lines = [f"the files of {name} differ ({found.varies})" for name, _, _, found in varying]
    shapes = [(side, found.shape) for _, side, _, found in varying]
    if any(shape is None for _, shape in shapes):
        return "; ".join(lines) + (
            " -- a dataset's files need one dtype and rank: `npyio verify` lists the files "
            "that differ, and ignore_errors=True skips them"
        )
    args = " and ".join(
        f"{'' if side == 'inputs' else 'label_'}shape={npy.show_shape(shape)}"
        for side, shape in shapes
        if shape is not None
    )
    if all(crop for _, _, crop, _ in varying):
        advice = (
            f"to crop arrays whose sizes vary, pass {args}, with the crop's sizes and starts "
            "in elements (a fraction of an axis whose size varies is refused); a trimmed "
            "window's size then varies, and batches are padded to their largest"
        )
    else:
        advice = (
            f"to read arrays whose sizes vary, pass {args} (batches are then padded to "
            "their largest array; for XLA's static shapes, crop= them instead: "
            "npyio.Crop(SIZE, out_of_bounds='pad') also pads smaller arrays to SIZE)"
        )
    return "; ".join(lines) + " -- " + advice
