"""Unit tests for the pure-Python reference parser (npyio._format.npy), and its agreement with the
graph decoder on the bad-input corpus."""

from __future__ import annotations

import dataclasses
import io
import re

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from tests._corpus import CORPUS, CORPUS_IDS
from tests._npy_testing import decoder, header_text, npy_bytes, reference, tf_message, with_header


# --- parse_dtype -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype",
    [tf.float32, np.dtype("float32"), np.float32, "float32", "<f4", ">f4", "=f4", "f4"],
    ids=["tf", "np-dtype", "np-type", "name", "little", "big", "equals", "code"],
)
def test_parse_dtype_spellings(dtype):
    dt = npy.parse_dtype(dtype)
    assert dt == np.dtype("float32")
    assert dt.isnative
    assert dt.byteorder in "=|"


@pytest.mark.parametrize("name", list(npy.CODES.values()))
def test_parse_dtype_round_trips_every_supported_type(name):
    """The dtype table round-trips: name -> tf.DType -> numpy, and code -> name."""
    for spelling in (name, tf.as_dtype(name), np.dtype(name), np.dtype(name).type):
        assert npy.parse_dtype(spelling).name == name
    code = npy.dtype_code(np.dtype(name))
    assert npy.CODES[code] == name
    assert np.dtype("<" + code).newbyteorder("=") == np.dtype(name)
    assert name in npy.SUPPORTED


@pytest.mark.parametrize(
    "dtype",
    [
        object,
        "O",
        "U5",
        "S5",
        "M8[ns]",
        "m8[s]",
        "V4",
        tf.string,
        tf.bfloat16,
        tf.resource,
        tf.variant,
        np.dtype([("a", "<f4")]),
        np.dtype(("<f4", (2,))),
        np.longdouble,
        "nonsense",
    ],
    ids=[
        "object",
        "object-code",
        "unicode",
        "bytes",
        "datetime",
        "timedelta",
        "void",
        "tf-string",
        "tf-bfloat16",
        "tf-resource",
        "tf-variant",
        "structured",
        "sub-array",
        "longdouble",
        "nonsense",
    ],
)
def test_parse_dtype_refuses(dtype):
    with pytest.raises(TypeError, match=r"unsupported dtype .* expected one of bool, int8"):
        npy.parse_dtype(dtype)
    with pytest.raises(TypeError):
        npyio.decode_npy(npy_bytes(np.zeros(2, "f4")), dtype)


def test_bad_shape_and_contents_arguments():
    data = npy_bytes(np.zeros(2, "f4"))
    with pytest.raises(TypeError, match="shape must be None or a sequence"):
        npyio.decode_npy(data, "float32", shape="(2,)")
    with pytest.raises(ValueError, match="scalar or a rank-1"):
        npyio.decode_npy([[data]], "float32")
    with pytest.raises(ValueError, match="scalar string"):
        npyio.read_npy(["a", "b"], "float32")


# --- NpyHeader and NpyFormatError ---------------------------------------------------------------
def test_npy_header_is_frozen():
    header = npy.NpyHeader((1, 0), np.dtype("<f8"), (2, 3), False, 128)
    with pytest.raises(dataclasses.FrozenInstanceError):
        header.shape = (3, 2)  # type: ignore[misc]
    assert hash(header) == hash(npy.NpyHeader((1, 0), np.dtype("<f8"), (2, 3), False, 128))


@pytest.mark.parametrize(
    ("dtype", "shape", "count", "nbytes"),
    [("<f8", (2, 3), 6, 48), (">c16", (), 1, 16), ("|b1", (3, 0, 2), 0, 0), ("<u2", (7,), 7, 14)],
    ids=["2d", "0d", "zero-size", "1d"],
)
def test_npy_header_count_and_nbytes(dtype, shape, count, nbytes):
    header = npy.NpyHeader((1, 0), np.dtype(dtype), shape, False, 64)
    assert header.count == count
    assert header.nbytes == nbytes


def test_npy_format_error():
    err = npyio.NpyFormatError("a/b.npy", npy.bad_keys())
    assert isinstance(err, ValueError) and isinstance(err, npyio.NpyioError)
    assert str(err) == "a/b.npy: " + npy.bad_keys()
    assert (err.path, err.reason) == ("a/b.npy", npy.bad_keys())


@pytest.mark.parametrize(
    ("shape", "text"),
    [((), "()"), ((3,), "(3,)"), ((2, 3), "(2, 3)"), ((None, 4), "(None, 4)")],
)
def test_show_shape(shape, text):
    assert npy.show_shape(shape) == text


# --- the parser on good headers ----------------------------------------------------------------
@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)], ids=["v1", "v2", "v3"])
@pytest.mark.parametrize(
    ("descr", "fortran", "shape"),
    [("<f4", False, (2, 3)), (">i8", True, (4, 1, 2)), ("|u1", False, ()), ("<c16", True, (0,))],
    ids=["f4", "i8-fortran", "u1-scalar", "c16-empty"],
)
def test_read_header(version, descr, fortran, shape):
    dt = np.dtype(descr)
    data = with_header(
        header_text(descr, fortran, shape), bytes(dt.itemsize * int(np.prod(shape))), version
    )
    header = npy.read_header(io.BytesIO(data), "p")
    offset = len(data) - header.nbytes
    assert header == npy.NpyHeader(version, dt, shape, fortran, offset)
    npy.check_payload(header, len(data), "p")
    npy.check_declared(header, npy.parse_dtype(dt.name), shape, "p")
    npy.check_declared(header, npy.parse_dtype(dt.name), None, "p")
    npy.check_declared(header, npy.parse_dtype(dt.name), (None,) * len(shape), "p")


def test_parse_header_text():
    text = "{'shape': (3,), \"fortran_order\": True, 'descr': '>i2'}"
    assert npy.parse_header_text(text) == (np.dtype(">i2"), (3,), True)
    assert npy.parse_header_text(" {'descr':'=u8','fortran_order':False,'shape':()}\n") == (
        np.dtype("u8"),
        (),
        False,
    )
    with pytest.raises(ValueError, match=re.escape(npy.bad_shape("(3.0,)"))):
        npy.parse_header_text("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}")


def test_parse_header_text_python2_forms_by_version():
    """Long suffixes and a last line of spaces: versions 1.0 and 2.0 (numpy's Python 2 filter
    reads them there), not 3.0 (no filter)."""
    text = "{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3 L L, 0L), }\n    "
    want = (np.dtype("<i8"), (2, 3, 0), False)
    assert npy.parse_header_text(text) == want
    assert npy.parse_header_text(text, (2, 0)) == want
    with pytest.raises(ValueError, match=re.escape(npy.not_a_dict())):
        npy.parse_header_text(text, (3, 0))
    with pytest.raises(ValueError, match=re.escape(npy.bad_shape("(2L, 3 L L, 0L)"))):
        npy.parse_header_text(text.rstrip(" "), (3, 0))
    assert npy.parse_header_text(text.replace("L", "").rstrip(" "), (3, 0)) == want
    assert re.fullmatch(npy.TRAIL, "\n  ") and not re.fullmatch(npy.TRAIL_V3, "\n  ")
    assert re.sub(npy.SHAPE_NOISE, "", " 2L,\t3 L L ") == "2,3"


def test_grammar_accepts_every_numpy_header():
    for name in npy.CODES.values():
        for shape in [(), (0,), (1,), (7,), (2, 3), (1, 2, 3, 4, 5, 6, 7, 8)]:
            for order in "CF":
                arr = np.zeros(shape, name).copy(order=order)
                data = npy_bytes(arr)
                start, end = 10, len(data) - arr.nbytes
                assert re.fullmatch(npy.HEADER_RE, data[start:end].decode("latin-1")), data


def test_max_header_size_in_read_header():
    data = npy_bytes(np.zeros(3, "f4"))
    hlen = len(data) - 12 - 10
    with pytest.raises(
        npyio.NpyFormatError, match=re.escape(npy.header_too_large("50", str(hlen)))
    ):
        npy.read_header(io.BytesIO(data), "p", max_header_size=50)
    assert npy.read_header(io.BytesIO(data), "p", max_header_size=hlen).shape == (3,)


# --- the reference parser and the graph decoder give the same message ---------------------------
@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_reference_and_graph_give_the_same_message(case):
    with pytest.raises(npyio.NpyFormatError) as info:
        reference(case.data, case.dtype, case.shape)
    assert info.value.reason == case.reason
    assert str(info.value) == f"<bytes>: {case.reason}"
    for run in (
        lambda: npyio.decode_npy(case.data, case.dtype, case.shape),
        lambda: decoder(case.dtype, case.shape)(tf.constant(case.data)),
    ):
        with pytest.raises(tf.errors.InvalidArgumentError) as err:
            run()
        assert type(err.value) is tf.errors.InvalidArgumentError
        assert tf_message(err.value) == str(info.value)
