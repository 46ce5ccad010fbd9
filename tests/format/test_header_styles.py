"""Headers in other writers' styles: whatever np.load reads from these, npyio reads the same.

numpy's writer always emits ``{'descr': ..., 'fortran_order': ..., 'shape': (...), }`` padded
to 64 bytes, but other writers (older numpy, other languages' libraries, hand-rolled code)
vary key order, quotes, commas, whitespace and padding, and use '|' or '=' byte orders. Files
numpy wrote under Python 2 carry long suffixes (``(2L, 3L)``), and an older JavaScript writer
padded after the final newline: numpy reads both in versions 1.0 and 2.0 only, through its
Python 2 fallback, and so does npyio.
"""

from __future__ import annotations

import io
import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from npyio._pipeline.options import DatasetOptions
from npyio._sources.plan import BATCH_THEN_DECODE, plan_dataset
from tests._npy_testing import (
    VERSION_IDS,
    VERSIONS,
    assert_same,
    decoder,
    header_text,
    np_load,
    numpy_header,
    sample,
    tf_message,
    with_header,
    write_file,
)

try:  # numpy >= 2
    from numpy.lib import _format_impl as numpy_format
except ImportError:  # numpy 1.x, as in the tfio venv
    from numpy.lib import format as numpy_format  # type: ignore[no-redef]

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
    prefix = npy.MAGIC_LEN + npy.HEADER_LEN_SIZE[version]
    end = "\n" if newline else ""
    total = prefix + len(text) + len(end)
    return text + " " * (-total % align) + end


def file_of(arr: np.ndarray, text: str, version=(1, 0), fortran: bool = False) -> bytes:
    payload = arr.tobytes(order="F" if fortran else "C")
    return with_header(text.encode("utf-8" if version == (3, 0) else "latin-1"), payload, version)


def check(tmp_path, data: bytes, name: str) -> None:
    """npyio (eager, traced, read_npy, inspect, reference parser) agrees with numpy on ``data``."""
    want = np_load(data)
    assert_same(npyio.decode_npy(data, name), want)
    assert_same(decoder(name)(data), want)
    path = write_file(tmp_path, "style.npy", data)
    assert_same(npyio.read_npy(path, name), want)
    version, shape, fortran_order, dtype, offset = numpy_header(data)
    header = npyio.inspect(path)
    assert header == npyio.NpyHeader(version, dtype, shape, fortran_order, offset)
    assert header.dtype.str == dtype.str == want.dtype.str
    assert npy.read_header(io.BytesIO(data), "<bytes>") == header


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
    # before the dict only spaces and tabs, after it an empty last line: npy.LEAD and npy.TRAIL_V3
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
MULTI_BYTE = [n for n in npy.CODES.values() if np.dtype(n).itemsize > 1]
ONE_BYTE = [n for n in npy.CODES.values() if np.dtype(n).itemsize == 1]


@pytest.mark.parametrize("mark", ["|", "=", ""], ids=["pipe", "equals", "bare"])
@pytest.mark.parametrize("name", MULTI_BYTE)
def test_native_byte_order_marks(tmp_path, name, mark):
    """'|', '=' and no mark on a multi-byte type mean the reading machine's order, as in numpy."""
    arr = sample(name, (3, 2), seed=2)  # native
    code = npy.dtype_code(np.dtype(name))
    check(tmp_path, file_of(arr, dict_text(mark + code, False, arr.shape)), name)


@pytest.mark.parametrize("mark", ["<", ">", "=", ""], ids=["little", "big", "equals", "bare"])
@pytest.mark.parametrize("name", ONE_BYTE)
def test_one_byte_types_with_any_mark(tmp_path, name, mark):
    arr = sample(name, (4,), seed=2)
    code = npy.dtype_code(np.dtype(name))
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
        npy.read_header(io.BytesIO(data), "<bytes>")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an ASCII dict literal"):
        npyio.decode_npy(data, "int32")


# --- Python 2 forms: numpy reads them in versions 1.0 and 2.0 only ----------------------------
# numpy evaluates a header with ast.literal_eval and, in versions 1.0 and 2.0 only, retries one
# that fails after its Python 2 filter (``_filter_header``: tokenize, drop an ``L`` after a
# number, untokenize). Two forms real writers made need it: long suffixes (numpy under Python 2
# on Windows) and padding spaces after the final newline (an older JavaScript writer).
PY2_VERSIONS = [(1, 0), (2, 0)]
PY2_IDS = ["v1", "v2"]


def numpy_filtered(data: bytes) -> np.ndarray:
    """np.load of a header only numpy's Python 2 filter reads (numpy says so in a warning)."""
    with pytest.warns(UserWarning, match="created on Python 2"):
        return np_load(data)


def check_python2(tmp_path, data: bytes, name: str) -> None:
    """`check`, on a file numpy reads only through its Python 2 filter."""
    numpy_filtered(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # numpy warns on every read of these
        check(tmp_path, data, name)


def refused_in_v3(text: str, arr: np.ndarray, name: str, reason: str) -> None:
    """A 3.0 file with ``text``: np.load refuses it, and npyio too, with ``reason``."""
    data = file_of(arr, text, (3, 0))
    with pytest.raises(ValueError, match="Cannot parse header"):
        np_load(data)
    with pytest.raises(npyio.NpyFormatError) as info:
        npy.read_header(io.BytesIO(data), "<bytes>")
    assert info.value.reason == reason
    for run in (lambda: npyio.decode_npy(data, name), lambda: decoder(name)(data)):
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            run()
        assert tf_message(err.value) == f"<bytes>: {reason}"


#: numpy's own Python 2 file (numpy/lib/tests/data/win64python2.npy, written on Windows):
#: a (2,) float64 array of ones, 'shape': (2L,), padded to 16 bytes.
WIN64_PYTHON2 = (
    b"\x93NUMPY\x01\x00F\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }"
    + b" " * 11
    + b"\n"
    + np.ones(2, "<f8").tobytes()
)


def test_numpys_own_python2_file(tmp_path):
    assert len(WIN64_PYTHON2) == 96 and (len(WIN64_PYTHON2) - 16) % 16 == 0
    check_python2(tmp_path, WIN64_PYTHON2, "float64")
    assert_same(npyio.decode_npy(WIN64_PYTHON2, "float64", (2,)), np.ones(2))


#: shape text -> shape. numpy's filter drops an ``L`` token after a number token: spaces, tabs
#: and form feeds may come between (the tokenizer skips them), and it drops repeated ones.
LONG_SHAPES = {
    "(2L, 3L, 4L)": (2, 3, 4),
    "(2L,3L,4L)": (2, 3, 4),
    "(2L, 3, 4L,)": (2, 3, 4),
    "(2 L, 3\tL, 4\fL)": (2, 3, 4),
    "(2L L, 3L, 4  L  L)": (2, 3, 4),
    "(\n2L ,\n3L,\n4L\n)": (2, 3, 4),
    "(5L,)": (5,),
    "( 5L , )": (5,),
    "(0L,)": (0,),
    "(-0L, 3L)": (0, 3),
    "(3L, 0L, 2L)": (3, 0, 2),
}


@pytest.mark.parametrize("version", PY2_VERSIONS, ids=PY2_IDS)
@pytest.mark.parametrize("text", list(LONG_SHAPES), ids=list(range(len(LONG_SHAPES))))
def test_python2_long_suffixes(tmp_path, text, version):
    shape = LONG_SHAPES[text]
    arr = sample(">i8", shape, seed=6)
    header = f"{{'descr': '>i8', 'fortran_order': False, 'shape': {text}, }}"
    check_python2(tmp_path, file_of(arr, padded(header, version, 16), version), "int64")
    fortran = sample("<f2", shape, seed=7)
    header = f"{{'descr': '<f2', 'fortran_order': True, 'shape': {text}}}\n"
    check_python2(tmp_path, file_of(fortran, header, version, fortran=True), "float16")


@pytest.mark.parametrize("text", list(LONG_SHAPES), ids=list(range(len(LONG_SHAPES))))
def test_python2_long_suffixes_refused_in_version_3(text):
    shape = LONG_SHAPES[text]
    arr = sample(">i8", shape, seed=6)
    header = f"{{'descr': '>i8', 'fortran_order': False, 'shape': {text}, }}"
    m = re.fullmatch(npy.LAYERS[2][3], header)
    assert m
    refused_in_v3(header, arr, "int64", npy.bad_shape(npy.show_text(m.group(1))))


@pytest.mark.parametrize("version", [*PY2_VERSIONS, (3, 0)], ids=[*PY2_IDS, "v3"])
@pytest.mark.parametrize(
    ("text", "reason", "v3_reason"),
    [
        # not Python 2's spelling, so numpy's filter leaves it: refused in every version
        ("(2l, 3)", npy.bad_shape("(2l, 3)"), npy.bad_shape("(2l, 3)")),
        ("(2LL, 3)", npy.bad_shape("(2LL, 3)"), npy.bad_shape("(2LL, 3)")),  # one name
        ("(2\nL, 3)", npy.bad_shape("(2\nL, 3)"), npy.bad_shape("(2\nL, 3)")),  # NL between
        ("(L, 3)", npy.bad_shape("(L, 3)"), npy.bad_shape("(L, 3)")),
        ("(2, 3)L", npy.bad_shape("(2, 3)"), npy.bad_shape("(2, 3)")),
        # read in 1.0 and 2.0 (an NL token after the L is fine), refused in 3.0
        ("(2L\n, 3)", None, npy.bad_shape("(2L\n, 3)")),
        # negative: numpy refuses it in every version too
        ("(-2L, 3)", npy.negative_dim("(-2, 3)"), npy.bad_shape("(-2L, 3)")),
    ],
    ids=["lowercase", "doubled", "newline-between", "alone", "after-shape", "newline-after", "neg"],
)
def test_python2_long_suffix_edges(tmp_path, text, reason, v3_reason, version):
    arr = sample("<u4", (2, 3), seed=8)
    header = f"{{'descr': '<u4', 'fortran_order': False, 'shape': {text}}}"
    data = file_of(arr, header, version)
    if version == (3, 0):
        reason = v3_reason
    elif reason is None:
        check_python2(tmp_path, data, "uint32")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError):
            np_load(data)
    with pytest.raises(npyio.NpyFormatError) as info:
        npy.read_header(io.BytesIO(data), "<bytes>")
    assert info.value.reason == reason
    with pytest.raises(tf.errors.InvalidArgumentError) as err:
        npyio.decode_npy(data, "uint32")
    assert tf_message(err.value) == f"<bytes>: {reason}"


def js_padded(text: str, version: tuple[int, int], align: int, end: str = "\n") -> str:
    """``text``, ``end``, then spaces up to ``align`` (the older JavaScript writer's layout)."""
    total = npy.MAGIC_LEN + npy.HEADER_LEN_SIZE[version] + len(text) + len(end)
    return text + end + " " * (-total % align or align)


@pytest.mark.parametrize("version", PY2_VERSIONS, ids=PY2_IDS)
@pytest.mark.parametrize("align", [16, 64], ids=["align-16", "align-64"])
@pytest.mark.parametrize("shape", list(STYLE_SHAPES.values()), ids=list(STYLE_SHAPES))
def test_padding_after_the_final_newline(tmp_path, shape, align, version):
    arr = sample("<c16", shape, seed=9)
    text = js_padded(dict_text("<c16", False, shape), version, align)
    data = file_of(arr, text, version)
    assert (len(data) - arr.nbytes) % align == 0
    assert re.fullmatch(r"\n +", text[len(dict_text("<c16", False, shape)) :])
    check_python2(tmp_path, data, "complex128")


@pytest.mark.parametrize("version", PY2_VERSIONS, ids=PY2_IDS)
@pytest.mark.parametrize(
    "trail",
    ["\n\t", "\n \t\f ", "\r\n   ", "  \n   ", "\n\n   ", "\n  \n   ", "\n\f", "\r\n\r\n\t"],
    ids=["tab", "mixed", "crlf", "spaces-first", "blank-line", "indented-blank", "ff", "crlf-2"],
)
def test_last_line_of_whitespace(tmp_path, trail, version):
    text = dict_text("<i4", False, ARR.shape, ws="") + trail
    data = file_of(ARR, text, version)
    if trail == "\n\f":  # numpy reads this one without its filter: no warning
        check(tmp_path, data, "int32")
    else:
        check_python2(tmp_path, data, "int32")


def test_python2_forms_together(tmp_path):
    header = "{'descr': '<i4', 'fortran_order': True, 'shape': (2L, 3L, 4), }"
    text = js_padded(header, (1, 0), 64)
    arr = np.asfortranarray(ARR)
    check_python2(tmp_path, file_of(arr, text, (1, 0), fortran=True), "int32")
    refused_in_v3(text, arr, "int32", npy.not_a_dict())  # the trailer is worded first


@pytest.mark.parametrize("align", [16, 64])
def test_padding_after_the_final_newline_refused_in_version_3(align):
    text = js_padded(dict_text("<i4", False, ARR.shape), (3, 0), align)
    refused_in_v3(text, ARR, "int32", npy.not_a_dict())


def _np_reads(text: str, version: tuple[int, int]) -> bool:
    raw = text.encode("latin-1")
    f = io.BytesIO(len(raw).to_bytes(npy.HEADER_LEN_SIZE[version], "little") + raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            numpy_format._read_array_header(f, version)
        except ValueError:
            return False
    return True


def _npyio_reads(text: str, version: tuple[int, int]) -> bool:
    try:
        npy.parse_header_text(text, version)
    except ValueError:
        return False
    return True


WHITE = " \t\f\n\r"


@pytest.mark.parametrize("where", ["after-dict", "before-long"])
def test_whitespace_around_python2_forms_exhaustively(where):
    """Every run of up to 4 whitespace characters after the dict (with and without a long
    suffix in the shape), and of up to 3 between a dim and its ``L``, in every version:
    whatever npyio reads numpy reads, and whatever numpy reads npyio reads, except what numpy
    reads without its Python 2 filter and npyio refuses on purpose (whitespace after the dict
    beyond ``npy.TRAIL``, or ``npy.TRAIL_V3`` in 3.0: the documented "around the dict")."""
    plain = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
    long = plain.replace("3)", "3L)")
    if where == "after-dict":
        runs = ["".join(t) for n in range(5) for t in itertools.product(WHITE, repeat=n)]
        texts = [(base, base + w) for base in (plain, long) for w in runs]
    else:
        runs = ["".join(t) for n in range(4) for t in itertools.product(WHITE, repeat=n)]
        texts = [(long, long.replace("(2, ", f"(2{w}L, ")) for w in runs]
    accepted: dict[tuple[int, int], list[str]] = {v: [] for v in VERSIONS}
    for base, text in texts:
        unfiltered = _np_reads(text.replace("L", ""), (3, 0))  # numpy without its filter
        for version in VERSIONS:
            numpy_reads, ours = _np_reads(text, version), _npyio_reads(text, version)
            assert ours <= numpy_reads, (text, version)
            if numpy_reads and not ours:
                trail = npy.TRAIL_V3 if version == (3, 0) else npy.TRAIL
                assert where == "after-dict" and unfiltered, (text, version)
                assert not re.fullmatch(trail, text[len(base) :]), (text, version)
            if ours:
                accepted[version].append(text)
    assert not any("L" in t for t in accepted[(3, 0)])
    # the graph parser reads them alike: all the accepted texts of a version as one batch
    arr = np.ascontiguousarray(ARR[:2, :3, 0])
    for version in VERSIONS if where == "after-dict" else PY2_VERSIONS:
        files = [file_of(arr, t, version) for t in accepted[version]]
        assert len(files) > 20
        assert_same(npyio.decode_npy(files, "int32"), np.stack([arr] * len(files)))


def _dataset_files(tmp_path, arrays, texts, versions) -> list[str]:
    return [
        write_file(tmp_path, f"{i}.npy", file_of(a, t, v, fortran=a.flags.f_contiguous))
        for i, (a, t, v) in enumerate(zip(arrays, texts, versions, strict=True))
    ]


@pytest.mark.parametrize("backend", ["native", "graph"])
@pytest.mark.parametrize("first", ["python2", "numpy"])
def test_python2_forms_in_a_batched_dataset(tmp_path, first, backend):
    """Through npyio.dataset with a batch: the batched parser (batch-then-decode) runs over
    Python 2 headers mixed with numpy's own, and with the first file's header as the hint; the
    native reader's kernel reads the files whose header is the first's, the graph parser the
    others."""
    shape = (3, 2)
    arrays = [sample("<f4", shape, seed=10 + i) for i in range(6)]
    py2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }"
    own = header_text("<f4", False, shape)
    texts, versions = [], []
    for i in range(len(arrays)):
        version = PY2_VERSIONS[i % 2]
        texts.append(
            js_padded(py2, version, 16) if (i % 3 == 0) == (first == "python2") else own + "\n"
        )
        versions.append(version)
    paths = _dataset_files(tmp_path, arrays, texts, versions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = np.stack([np_load(Path(p).read_bytes()) for p in paths])
    options = DatasetOptions.from_arguments({"batch_size": 2, "backend": backend})
    assert plan_dataset(paths, options=options).strategy == BATCH_THEN_DECODE
    ds = npyio.dataset(paths, batch_size=2, backend=backend)
    got = np.concatenate([b.numpy() for b in ds])
    assert_same(got, want)
    if first == "python2":  # and decode-then-batch (a partial shape), once
        ds = npyio.dataset(paths, batch_size=4, shape=(None, 2), backend=backend)
        assert_same(np.concatenate([b.numpy() for b in ds]), want)


@pytest.mark.parametrize("backend", ["native", "graph"])
def test_python2_forms_in_a_dataset_refused_in_version_3(tmp_path, backend):
    arr = sample("<f4", (3, 2), seed=1)
    own = header_text("<f4", False, (3, 2)) + "\n"
    py2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }"
    paths = _dataset_files(tmp_path, [arr] * 3, [own, own, py2], [(3, 0)] * 3)
    with pytest.raises(tf.errors.InvalidArgumentError) as err:
        for _ in npyio.dataset(paths, batch_size=3, backend=backend):
            pass
    assert tf_message(err.value) == f"{paths[2]}: {npy.bad_shape('(3L, 2L)')}"
