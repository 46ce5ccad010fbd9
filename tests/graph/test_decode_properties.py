"""Property tests (Hypothesis, the "ci" profile from conftest.py).

(a) Arbitrary arrays round-trip bit for bit: numpy's writer -> decode_npy == np.load.
(b) The graph parser and the pure-Python reference parser agree on mutated files: both accept,
    or both refuse with the same reason.
(c) Whatever the graph decoder accepts, np.load(allow_pickle=False) accepts, with equal values.

The graph side is one traced function per dtype (``tests._npy_testing.decoder``), so examples never
retrace.
"""

from __future__ import annotations

import io
import re

import numpy as np
import tensorflow as tf
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import npyio
from npyio._format import npy
from tests._npy_testing import (
    STORED_DTYPES,
    VERSIONS,
    assert_same,
    decoder,
    np_load,
    npy_bytes,
    reference,
    sample,
    tf_message,
    with_header,
)

# Every supported scalar dtype, in both byte orders where that means anything.
SCALAR_DTYPES = st.one_of(
    hnp.boolean_dtypes(),
    hnp.integer_dtypes(endianness="?"),
    hnp.unsigned_integer_dtypes(endianness="?"),
    hnp.floating_dtypes(endianness="?", sizes=(16, 32, 64)),
    hnp.complex_number_dtypes(endianness="?", sizes=(64, 128)),
)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4)


def decode(data: bytes, name: str) -> tuple[np.ndarray | None, str | None]:
    """(value, None) if the traced graph decoder accepts ``data``, else (None, message)."""
    try:
        return decoder(name)(tf.constant(data)).numpy(), None
    except tf.errors.InvalidArgumentError as e:
        assert type(e) is tf.errors.InvalidArgumentError
        return None, tf_message(e)


# --- (a) round trip ------------------------------------------------------------------------------
@given(
    arr=hnp.arrays(SCALAR_DTYPES, SHAPES),
    fortran=st.booleans(),
    version=st.sampled_from([None, *VERSIONS]),
)
def test_arrays_round_trip_bit_exact(arr, fortran, version):
    arr = arr.copy(order="F" if fortran else "C")
    if version is None:  # np.save: numpy picks the version
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        data = buf.getvalue()
    else:
        data = npy_bytes(arr, version)
    name = arr.dtype.newbyteorder("=").name
    got, message = decode(data, name)
    assert message is None, message
    assert_same(got, np_load(data))
    assert_same(got, arr)


# --- mutated files ---------------------------------------------------------------------------
ALPHABET = "{}()[]',:\"0123456789-TrueFalse descr shape fortran_order <>|=f4i8 \t\n\r\f"
TOKENS = [
    "'descr'",
    '"shape"',
    "'fortran_order'",
    "True",
    "False",
    "None",
    "'<f8'",
    "'>i2'",
    "'|u1'",
    "'=c16'",
    "'<U5'",
    "'|O'",
    "(",
    ")",
    "()",
    "(1,)",
    ",",
    ", ",
    "-",
    "-0",
    "0",
    "7",
    "1" * 19,
    "  ",
    "\n",
    "\r\n",
    "\f",
    "\t",
    "'",
    '"',
    "{",
    "}",
    "[",
    "]",
    "\xe9",
    "\x00",
    "#",
    "L",  # a Python 2 long suffix: numpy reads "2L" in versions 1.0 and 2.0
    " L",
    "\n   ",  # padding after the final newline: read in versions 1.0 and 2.0
]
PIECES = st.one_of(st.sampled_from(TOKENS), st.text(ALPHABET, min_size=1, max_size=3))
_DESCRS = [f"'{o}{c}'" for o in ["", "<", ">", "|", "="] for c in npy.CODES]
VALUES = {  # whole values to put in place of a key's value
    b"descr": st.sampled_from([*_DESCRS, "'<U5'", "'|O'", "'<f16'", "f4", "[('a', '<f4')]"]),
    b"fortran_order": st.sampled_from(["True", "False", "0", "'True'", "None", "true"]),
    b"shape": st.one_of(
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4).map(str),
        st.sampled_from(
            [
                "(-1, 2)",
                "(-0,)",
                "(1234567890123456789,)",
                "(-1234567890123456789,)",
                f"({2**59 - 1},)",
                f"({2**59},)",
                f"({2**40}, {2**40})",
                f"(0, {2**61})",
                "(2, 3, )",
                "( 2 ,3 )",
                "[2, 3]",
                "(2.0,)",
                "(02,)",
                "(2, None)",
                "6",
                "(2L, 3L)",
                "(2L,)",
                "(0 L, 3L L)",
                "(2l,)",
            ]
        ),
    ),
}
_VALUE_RE = rb"((?:'%s'|\"%s\")[ \t\n\r\f]*:[ \t\n\r\f]*)(\([^)]*\)|'[^']*'|\w+)"


@st.composite
def mutated_files(draw) -> tuple[bytes, str]:
    """A file numpy wrote, then with its header text, length field and payload mutated."""
    name, stored = draw(st.sampled_from(STORED_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    layout = draw(st.sampled_from("CF"))
    version = draw(st.sampled_from(VERSIONS))
    arr = sample(stored, shape, seed=draw(st.integers(0, 3))).copy(order=layout)
    data = npy_bytes(arr, version)
    start = npy.MAGIC_LEN + npy.HEADER_LEN_SIZE[version]
    offset = len(data) - arr.nbytes
    text, payload = bytearray(data[start:offset]), data[offset:]

    for _ in range(draw(st.integers(0, 4))):
        op = draw(
            st.sampled_from(
                ["set-value", "insert", "delete", "replace", "set-value", "strip-padding"]
            )
        )
        pos = draw(st.integers(0, len(text)))
        if op == "strip-padding":
            text = bytearray(text.rstrip(b" \n"))
            continue
        if op == "set-value":
            key = draw(st.sampled_from(list(VALUES)))
            value = draw(VALUES[key]).encode()
            m = re.search(_VALUE_RE % (key, key), text)
            if m:
                text[m.start(2) : m.end(2)] = value
            continue
        piece = draw(PIECES).encode("latin-1")
        if op == "insert":
            text[pos:pos] = piece
        elif op == "delete":
            del text[pos : pos + draw(st.integers(1, 4))]
        else:
            text[pos : pos + len(piece)] = piece

    hlen = max(0, len(text) + draw(st.sampled_from([0, 0, 0, 0, -1, 1, -8, 8])))
    cut = draw(st.sampled_from([0, 0, 0, 0, -1, 1, -8, 8, -len(payload)]))
    payload = payload[:cut] if cut < 0 else payload + bytes(cut)
    version = draw(st.sampled_from([version] * 12 + [(1, 1), (4, 0), (0, 0)]))
    return with_header(bytes(text), payload, version, hlen=hlen), name


@given(mutated_files())
@example((npy_bytes(np.zeros((2, 3), ">f8"))[:-5], "float64"))
@example(
    (
        with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-1234567890123456789,)}"),
        "float64",
    )
)
@example(
    (with_header(f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({2**59 - 1},)}}"), "float64")
)
def test_graph_and_reference_parsers_agree(case):
    data, name = case
    try:
        header = reference(data, name)
        ref_reason = None
    except npyio.NpyFormatError as e:
        header, ref_reason = None, e.reason
    got, message = decode(data, name)
    if ref_reason is None:
        assert message is None, message
        assert got.shape == header.shape
    else:
        assert message is not None, f"graph accepted what the reference refused: {ref_reason}"
        assert message == f"<bytes>: {ref_reason}"


@given(mutated_files())
@example(
    (
        with_header("{'descr': '<i2', 'fortran_order': True, 'shape': (3, 2)}\n", bytes(range(12))),
        "int16",
    )
)
def test_whatever_npyio_accepts_np_load_accepts(case):
    data, name = case
    got, message = decode(data, name)
    if message is not None:
        return
    want = np_load(data)  # must not raise
    assert_same(got, want)
