"""Headers in other writers' styles: whatever np.load reads from these, npyio reads the same.

numpy's writer always emits ``{'descr': ..., 'fortran_order': ..., 'shape': (...), }`` padded
to 64 bytes, but other writers (older numpy, other languages' libraries, hand-rolled code)
vary key order, quotes, commas, whitespace and padding, and use '|' or '=' byte orders.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._npy import format as F
from tests._npy import (
    VERSION_IDS,
    VERSIONS,
    assert_same,
    decoder,
    np_load,
    sample,
    with_header,
    write_file,
)

KEYS = ("descr", "fortran_order", "shape")


def shape_text(shape: tuple[int, ...], ws: str = "") -> str:
    if not shape:
        return f"({ws})"
    inner = f"{ws},{ws}".join(str(d) for d in shape)
    return f"({ws}{inner}{ws},{ws})" if len(shape) == 1 else f"({ws}{inner}{ws})"


def dict_text(
    descr: str,
    fortran: bool,
    shape: tuple[int, ...],
    *,
    order: tuple[str, ...] = KEYS,
    quote: str = "'",
    trailing_comma: bool = True,
    ws: str = " ",
    shape_ws: str = "",
) -> str:
    values = {
        "descr": f"{quote}{descr}{quote}",
        "fortran_order": str(fortran),
        "shape": shape_text(shape, shape_ws),
    }
    entries = [f"{quote}{k}{quote}{ws}:{ws}{values[k]}" for k in order]
    body = f"{ws},{ws}".join(entries) + (f"{ws}," if trailing_comma else "")
    return f"{{{ws}{body}{ws}}}"


def padded(text: str, version: tuple[int, int], align: int | None, newline: bool = True) -> str:
    """``text`` padded with spaces (and a final newline) so the payload starts at ``align``."""
    if align is None:
        return text
    prefix = F.MAGIC_LEN + F.HEADER_LEN_SIZE[version]
    end = "\n" if newline else ""
    total = prefix + len(text) + len(end)
    return text + " " * (-total % align) + end


def file_of(arr: np.ndarray, text: str, version=(1, 0), fortran: bool = False) -> bytes:
    payload = arr.tobytes(order="F" if fortran else "C")
    return with_header(text.encode("utf-8" if version == (3, 0) else "latin-1"), payload, version)


def numpy_reader(data: bytes) -> tuple:
    f = io.BytesIO(data)
    version = np.lib.format.read_magic(f)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran_order, dtype = read(f)
    return version, shape, fortran_order, dtype, f.tell()


def check(tmp_path, data: bytes, name: str) -> None:
    """npyio (eager, traced, read_npy, inspect, reference parser) agrees with numpy on ``data``."""
    want = np_load(data)
    assert_same(npyio.decode_npy(data, name), want)
    assert_same(decoder(name)(data), want)
    path = write_file(tmp_path, "style.npy", data)
    assert_same(npyio.read_npy(path, name), want)
    version, shape, fortran_order, dtype, offset = numpy_reader(data)
    header = npyio.inspect(path)
    assert header == npyio.NpyHeader(version, dtype, shape, fortran_order, offset)
    assert header.dtype.str == dtype.str == want.dtype.str
    assert F.read_header(io.BytesIO(data), "<bytes>") == header


ARR = sample("<i4", (2, 3, 4), seed=3)


# --- key order x quotes x trailing comma ------------------------------------------------------
@pytest.mark.parametrize("trailing_comma", [True, False], ids=["comma", "no-comma"])
@pytest.mark.parametrize("quote", ["'", '"'], ids=["single", "double"])
@pytest.mark.parametrize(
    "order",
    list(itertools.permutations(KEYS)),
    ids=["-".join(k[0] for k in p) for p in itertools.permutations(KEYS)],
)
def test_key_order_quotes_and_comma(tmp_path, order, quote, trailing_comma):
    text = dict_text(
        "<i4", False, ARR.shape, order=order, quote=quote, trailing_comma=trailing_comma
    )
    check(tmp_path, file_of(ARR, padded(text, (1, 0), 64)), "int32")


def test_mixed_quotes_per_key(tmp_path):
    text = "{\"descr\": '<i4', 'fortran_order': False, \"shape\": (2, 3, 4)}"
    check(tmp_path, file_of(ARR, text), "int32")


# --- whitespace ---------------------------------------------------------------------------------
WHITESPACE = {
    "none": "",
    "space": " ",
    "spaces": "    ",
    "tab": "\t",
    "newline": "\n",
    "cr": "\r",
    "crlf": "\r\n",
    "formfeed": "\f",
    "mixed": " \t\n\r\f ",
}
STYLE_SHAPES = {"0d": (), "1d": (5,), "3d": (2, 3, 4)}


@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize("shape", list(STYLE_SHAPES.values()), ids=list(STYLE_SHAPES))
@pytest.mark.parametrize("ws", list(WHITESPACE.values()), ids=list(WHITESPACE))
def test_whitespace(tmp_path, ws, shape, version):
    arr = sample(">f8", shape, seed=1)
    # before the dict only spaces and tabs, after it an empty last line: see F.LEAD and F.TRAIL
    lead = "".join(c for c in ws if c in " \t")
    text = lead + dict_text(">f8", False, shape, ws=ws, shape_ws=ws) + ws + "\n"
    check(tmp_path, file_of(arr, text, version), "float64")


# --- padding and alignment --------------------------------------------------------------------
PADDINGS = {
    "none": dict(align=None),
    "align-16": dict(align=16),  # numpy before 1.? (and many other writers)
    "align-64": dict(align=64),  # numpy today
    "align-64-no-newline": dict(align=64, newline=False),
    "align-4096": dict(align=4096),
}


@pytest.mark.parametrize("version", VERSIONS, ids=VERSION_IDS)
@pytest.mark.parametrize("padding", list(PADDINGS.values()), ids=list(PADDINGS))
def test_padding(tmp_path, padding, version):
    text = padded(dict_text("<i4", False, ARR.shape, trailing_comma=False), version, **padding)
    data = file_of(ARR, text, version)
    if padding["align"]:
        assert (len(data) - ARR.nbytes) % padding["align"] == 0
    check(tmp_path, data, "int32")


def test_only_a_newline(tmp_path):
    check(tmp_path, file_of(ARR, dict_text("<i4", False, ARR.shape) + "\n"), "int32")


# --- byte order characters ------------------------------------------------------------------------
MULTI_BYTE = [n for n in F.CODES.values() if np.dtype(n).itemsize > 1]
ONE_BYTE = [n for n in F.CODES.values() if np.dtype(n).itemsize == 1]


@pytest.mark.parametrize("mark", ["|", "=", ""], ids=["pipe", "equals", "bare"])
@pytest.mark.parametrize("name", MULTI_BYTE)
def test_native_byte_order_marks(tmp_path, name, mark):
    """'|', '=' and no mark on a multi-byte type mean the reading machine's order, as in numpy."""
    arr = sample(name, (3, 2), seed=2)  # native
    code = F.dtype_code(np.dtype(name))
    check(tmp_path, file_of(arr, dict_text(mark + code, False, arr.shape)), name)


@pytest.mark.parametrize("mark", ["<", ">", "=", ""], ids=["little", "big", "equals", "bare"])
@pytest.mark.parametrize("name", ONE_BYTE)
def test_one_byte_types_with_any_mark(tmp_path, name, mark):
    arr = sample(name, (4,), seed=2)
    code = F.dtype_code(np.dtype(name))
    check(tmp_path, file_of(arr, dict_text(mark + code, False, arr.shape)), name)


# --- fortran order and shapes written by hand ----------------------------------------------------
@pytest.mark.parametrize(
    "shape",
    [(), (0,), (1,), (7,), (3, 0, 2), (2, 3), (2, 1, 3, 1, 2)],
    ids=["0d", "zero", "one", "1d", "zero-3d", "2d", "5d"],
)
def test_fortran_order_true(tmp_path, shape):
    """fortran_order True on any shape, including those numpy's writer never marks."""
    arr = sample("<c8", shape, seed=4)
    text = dict_text("<c8", True, shape, quote='"', trailing_comma=False, ws="")
    check(tmp_path, file_of(arr, padded(text, (2, 0), 16), (2, 0), fortran=True), "complex64")


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("()", ()),
        ("( )", ()),
        ("(5,)", (5,)),
        ("( 5 , )", (5,)),
        ("(2,3)", (2, 3)),
        ("(2, 3,)", (2, 3)),
        ("(2 ,3 , )", (2, 3)),
        ("(-0, 3)", (0, 3)),
        ("(0,)", (0,)),
    ],
    ids=[
        "empty",
        "empty-space",
        "one",
        "one-spaces",
        "two-tight",
        "two-trailing",
        "two-odd-spaces",
        "minus-zero",
        "zero",
    ],
)
def test_shape_spellings(tmp_path, text, shape):
    arr = sample("<u2", shape, seed=5)
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': " + text + "}"
    check(tmp_path, file_of(arr, header), "uint16")


# --- whitespace np.load refuses around the dict: npyio refuses it too ----------------------------
@pytest.mark.parametrize(
    ("lead", "trail"),
    [
        ("\n ", ""),
        ("\r\t", ""),
        ("\f ", ""),
        ("\n", ""),
        ("", "\n "),
        ("", " \r\n\t"),
        ("", "\n\n  "),
    ],
    ids=[
        "lead-newline-indent",
        "lead-cr-tab",
        "lead-formfeed-indent",
        "lead-newline",
        "trail-indent",
        "trail-crlf-tab",
        "trail-blank-then-indent",
    ],
)
def test_line_breaks_around_the_dict(lead, trail):
    text = lead + dict_text("<i4", False, ARR.shape) + trail
    data = file_of(ARR, text, (3, 0))
    if lead != "\n":  # numpy takes a bare leading newline; npyio does not (documented)
        with pytest.raises(ValueError):
            np_load(data)
    with pytest.raises(ValueError, match="not an ASCII dict literal"):
        F.read_header(io.BytesIO(data), "<bytes>")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an ASCII dict literal"):
        npyio.decode_npy(data, "int32")
