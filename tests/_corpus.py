"""The bad-input corpus: files npyio must refuse, each with the reason it must give.

Shared by ``test_bad_inputs`` (graph decoder, ``read_npy``, ``inspect``, ``tf.data``) and
``test_format`` (the graph decoder and the reference parser give the same message).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npyio._format import npy
from tests._npy_testing import header_text, npy_bytes, with_header

GOOD_ARRAY = np.arange(6, dtype="<f4").reshape(2, 3)
PAYLOAD = GOOD_ARRAY.tobytes()  # 24 bytes
MAGIC = npy.MAGIC_PREFIX


@dataclass(frozen=True)
class Bad:
    """One bad file.

    Attributes:
        id: A readable test id; also used in the file name.
        data: The whole file.
        reason: The exact reason npyio must give (the message after ``"{path}: "``).
        dtype: The dtype the file is read as.
        shape: The declared shape the file is read with.
        header_level: Whether the header itself is bad, so that ``npyio.inspect`` must refuse
            it too (with the same reason); otherwise ``inspect`` accepts the file.
    """

    id: str
    data: bytes
    reason: str
    dtype: str = "float32"
    shape: tuple[int | None, ...] | None = None
    header_level: bool = True

    @property
    def good_shape(self) -> tuple[int, ...]:
        """A concrete shape that a good file read alongside this one has."""
        if self.shape is None:
            return (2, 3)
        return tuple(4 if d is None else d for d in self.shape)


def _h(text: str | bytes, payload: bytes = PAYLOAD, version=(1, 0), hlen=None) -> bytes:
    return with_header(text, payload, version, hlen=hlen)


def _entry(descr: str = "'<f4'", fortran: str = "False", shape: str = "(2, 3)") -> str:
    return f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}"


_GOOD_TEXT = header_text("<f4", False, (2, 3))
_BIG_TEXT = _GOOD_TEXT + " " * (10_001 - len(_GOOD_TEXT) - 1) + "\n"
assert len(_BIG_TEXT) == 10_001

CORPUS: list[Bad] = [
    # -- magic, version and length field ----------------------------------------------------------
    Bad("empty-file", b"", npy.bad_magic("0 bytes")),
    Bad("short-magic", MAGIC[:4], npy.bad_magic("93 4e 55 4d")),
    Bad("magic-only", MAGIC, npy.too_short("8", "6")),
    Bad("no-length-field-v1", MAGIC + b"\x01\x00\x05", npy.too_short("10", "9")),
    Bad("short-length-field-v2", MAGIC + b"\x02\x00\x05\x00", npy.too_short("12", "10")),
    Bad("bad-magic", b"\x93NUMPX" + _h(_GOOD_TEXT)[6:], npy.bad_magic("93 4e 55 4d 50 58")),
    Bad("lowercase-magic", b"\x93numpy" + _h(_GOOD_TEXT)[6:], npy.bad_magic("93 6e 75 6d 70 79")),
    Bad("png-file", b"\x89PNG\r\n\x1a\n" + bytes(40), npy.bad_magic("89 50 4e 47 0d 0a")),
    Bad("csv-file", b"descr,shape\n1,2\n", npy.bad_magic("64 65 73 63 72 2c")),
    Bad("version-4.0", _h(_GOOD_TEXT, version=(4, 0)), npy.bad_version("4.0")),
    Bad("version-1.1", _h(_GOOD_TEXT, version=(1, 1)), npy.bad_version("1.1")),
    Bad("version-0.0", _h(_GOOD_TEXT, version=(0, 0)), npy.bad_version("0.0")),
    Bad("version-2.1", _h(_GOOD_TEXT, version=(2, 1)), npy.bad_version("2.1")),
    Bad("version-255.255", _h(_GOOD_TEXT, version=(255, 255)), npy.bad_version("255.255")),
    Bad(
        "header-past-end-v1",
        _h(_GOOD_TEXT, b"", hlen=200),
        npy.header_past_end("210", str(10 + len(_GOOD_TEXT))),
    ),
    Bad(
        "header-past-end-v3",
        _h(_GOOD_TEXT, PAYLOAD, (3, 0), hlen=1000),
        npy.header_past_end("1012", str(12 + len(_GOOD_TEXT) + 24)),
    ),
    Bad(
        "header-over-10000-bytes",
        _h(_BIG_TEXT, version=(2, 0)),
        npy.header_too_large("10000", "10001"),
    ),
    Bad(
        "header-length-4GiB",
        _h(_GOOD_TEXT, version=(2, 0), hlen=2**32 - 1),
        npy.header_too_large("10000", str(2**32 - 1)),
    ),
    # -- not a dict literal -----------------------------------------------------------------------
    Bad("empty-header", _h(""), npy.not_a_dict()),
    Bad("header-is-a-list", _h("['descr', 'fortran_order', 'shape']"), npy.not_a_dict()),
    Bad("header-is-a-tuple", _h("('<f4', False, (2, 3))"), npy.not_a_dict()),
    Bad("header-is-garbage", _h("hello, world"), npy.not_a_dict()),
    Bad("header-is-random-bytes", _h(bytes(range(0, 256, 7))), npy.not_a_dict()),
    Bad(
        "unclosed-dict",
        _h("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "),
        npy.not_a_dict(),
    ),
    Bad("nul-padding", _h(_GOOD_TEXT + "\x00\x00\x00"), npy.not_a_dict()),
    Bad("comment-after-dict", _h(_GOOD_TEXT + "  # numpy would take this"), npy.not_a_dict()),
    Bad(
        "latin1-byte-in-header",
        _h(_entry().replace("}", "'\xe9': 1}").encode("latin-1")),
        npy.not_a_dict(),
    ),
    Bad("invalid-utf8-in-header", _h(_GOOD_TEXT.encode() + b"\xff\xfe\xc3"), npy.not_a_dict()),
    Bad(
        "utf8-in-v3-header",
        _h(_entry(shape="(2, 3)  ").replace("  ", "\u00e9\u4e2d").encode(), version=(3, 0)),
        npy.not_a_dict(),
    ),
    # numpy's Python 2 filter reads these in versions 1.0 and 2.0 only (so does npyio), or never
    Bad(
        "indented-last-line-v3",
        _h(_GOOD_TEXT + "\n" + " " * 9, version=(3, 0)),
        npy.not_a_dict(),
    ),
    Bad("formfeed-indent-before-dict", _h("\f " + _GOOD_TEXT), npy.not_a_dict()),  # documented
    Bad("cr-then-formfeed-after-dict", _h(_GOOD_TEXT + "\r\f"), npy.not_a_dict()),  # documented
    # -- keys -------------------------------------------------------------------------------------
    Bad("missing-key-descr", _h("{'fortran_order': False, 'shape': (2, 3), }"), npy.bad_keys()),
    Bad("missing-key-fortran_order", _h("{'descr': '<f4', 'shape': (2, 3), }"), npy.bad_keys()),
    Bad("missing-key-shape", _h("{'descr': '<f4', 'fortran_order': False, }"), npy.bad_keys()),
    Bad("empty-dict", _h("{}"), npy.bad_keys()),
    Bad("extra-key", _h(_entry().replace("}", "'extra': 1, }")), npy.bad_keys()),
    Bad("duplicate-key", _h("{'descr': '<f4', " + _entry()[1:]), npy.bad_keys()),
    Bad("misspelled-key", _h(_entry().replace("'shape'", "'shapes'")), npy.bad_keys()),
    Bad("unquoted-key", _h(_entry().replace("'descr'", "descr")), npy.bad_keys()),
    # -- dtype ------------------------------------------------------------------------------------
    Bad("object-dtype", _h(_entry("'|O'")), npy.bad_descr("'|O'")),
    Bad("bytes-dtype", _h(_entry("'|S5'")), npy.bad_descr("'|S5'")),
    Bad("unicode-dtype", _h(_entry("'<U5'")), npy.bad_descr("'<U5'")),
    Bad("datetime-dtype", _h(_entry("'<M8[ns]'")), npy.bad_descr("'<M8[ns]'")),
    Bad("timedelta-dtype", _h(_entry("'<m8[s]'")), npy.bad_descr("'<m8[s]'")),
    Bad("void-dtype", _h(_entry("'|V4'")), npy.bad_descr("'|V4'")),
    Bad("float128-dtype", _h(_entry("'<f16'")), npy.bad_descr("'<f16'")),
    Bad(
        "structured-dtype",
        _h(_entry("[('a', '<f4'), ('b', '<i4')]")),
        npy.bad_descr("[('a', '<f4'), ('b', '<i4')]"),
    ),
    Bad("sub-array-dtype", _h(_entry("('<f4', (2,))")), npy.bad_descr("('<f4', (2,)")),
    Bad(
        "structured-sub-array-dtype",
        _h(_entry("[('a', '<f4', (2,))]")),
        npy.bad_descr("[('a', '<f4', (2,))]"),
    ),
    Bad("unquoted-descr", _h(_entry("f4")), npy.bad_descr("f4")),
    Bad("descr-bad-byte-order", _h(_entry("'!f4'")), npy.bad_descr("'!f4'")),
    Bad("descr-mixed-quotes", _h(_entry("'<f4\"")), npy.bad_descr("'<f4\"")),
    Bad("descr-type-object", _h(_entry("float")), npy.bad_descr("float")),
    # -- fortran_order ----------------------------------------------------------------------------
    Bad("fortran-order-0", _h(_entry(fortran="0")), npy.bad_fortran("0")),
    Bad("fortran-order-string", _h(_entry(fortran="'True'")), npy.bad_fortran("'True'")),
    Bad("fortran-order-None", _h(_entry(fortran="None")), npy.bad_fortran("None")),
    Bad("fortran-order-lowercase", _h(_entry(fortran="true")), npy.bad_fortran("true")),
    # -- shape ------------------------------------------------------------------------------------
    Bad("shape-list", _h(_entry(shape="[2, 3]")), npy.bad_shape("[2, 3]")),
    Bad("shape-int", _h(_entry(shape="6")), npy.bad_shape("6")),
    Bad("shape-floats", _h(_entry(shape="(2.0, 3.0)")), npy.bad_shape("(2.0, 3.0)")),
    Bad("shape-with-None", _h(_entry(shape="(2, None)")), npy.bad_shape("(2, None)")),
    Bad("shape-parenthesised-int", _h(_entry(shape="(6)")), npy.bad_shape("(6)")),
    Bad("shape-leading-zero", _h(_entry(shape="(02, 3)")), npy.bad_shape("(02, 3)")),
    Bad("shape-plus-sign", _h(_entry(shape="(+2, 3)")), npy.bad_shape("(+2, 3)")),
    Bad("shape-underscore", _h(_entry(shape="(2_0, 3)")), npy.bad_shape("(2_0, 3)")),
    Bad("shape-expression", _h(_entry(shape="(2**1, 3)")), npy.bad_shape("(2**1, 3)")),
    Bad("shape-double-comma", _h(_entry(shape="(2,, 3)")), npy.bad_shape("(2,, 3)")),
    Bad("shape-string", _h(_entry(shape="'(2, 3)'")), npy.bad_shape("'(2")),
    Bad("negative-dim", _h(_entry(shape="(-2, 3)")), npy.negative_dim("(-2, 3)")),
    Bad("negative-long-dim", _h(_entry(shape="(-2L, 3)")), npy.negative_dim("(-2, 3)")),
    Bad("long-suffix-v3", _h(_entry(shape="(2L, 3L)"), version=(3, 0)), npy.bad_shape("(2L, 3L)")),
    Bad("long-suffix-lowercase", _h(_entry(shape="(2l, 3)")), npy.bad_shape("(2l, 3)")),
    Bad("long-suffix-doubled", _h(_entry(shape="(2LL, 3)")), npy.bad_shape("(2LL, 3)")),
    Bad("long-suffix-next-line", _h(_entry(shape="(2\nL, 3)")), npy.bad_shape("(2\nL, 3)")),
    Bad("long-suffix-alone", _h(_entry(shape="(L,)")), npy.bad_shape("(L,)")),
    Bad(
        "negative-19-digit-dim",
        _h(_entry(shape="(-1234567890123456789, 3)")),
        npy.negative_dim("(-1234567890123456789, 3)"),
    ),
    Bad(
        "dims-overflow-int64",
        _h(_entry(shape=f"({2**40}, {2**40})")),
        npy.too_large(f"({2**40}, {2**40})"),
    ),
    Bad(
        "dim-19-digits",
        _h(_entry(shape="(1000000000000000000,)")),
        npy.too_large("(1000000000000000000,)"),
    ),
    Bad(
        "dim-40-digits",
        _h(_entry(shape="(" + "9" * 40 + ",)")),
        npy.too_large("(" + "9" * 40 + ",)"),
    ),
    Bad(
        "bytes-reach-2**62",
        _h(_entry("'<f8'", shape=f"({2**59},)")),
        npy.too_large(f"({2**59},)"),
        dtype="float64",
    ),
    Bad(
        "bytes-just-under-2**62",
        _h(_entry("'<f8'", shape=f"({2**59 - 1},)"), bytes(8)),
        npy.payload_short(str(8 * (2**59 - 1)), "8"),
        dtype="float64",
        header_level=False,
    ),
    Bad("zero-size-huge-dims", _h(_entry(shape=f"(0, {2**61})")), npy.too_large(f"(0, {2**61})")),
    # -- payload (the header is fine) -------------------------------------------------------------
    Bad(
        "payload-short",
        _h(_GOOD_TEXT, PAYLOAD[:20]),
        npy.payload_short("24", "20"),
        header_level=False,
    ),
    Bad("payload-empty", _h(_GOOD_TEXT, b""), npy.payload_short("24", "0"), header_level=False),
    Bad(
        "payload-partial-item-short",
        _h(_GOOD_TEXT, PAYLOAD[:22]),
        npy.payload_short("24", "22"),
        header_level=False,
    ),
    Bad(
        "payload-partial-item-long",
        _h(_GOOD_TEXT, PAYLOAD + b"\0\0"),
        npy.payload_trailing("24", "26"),
        header_level=False,
    ),
    Bad(
        "trailing-bytes",
        _h(_GOOD_TEXT, PAYLOAD + PAYLOAD[:4]),
        npy.payload_trailing("24", "28"),
        header_level=False,
    ),
    Bad(
        "trailing-newline",
        npy_bytes(GOOD_ARRAY) + b"\n",
        npy.payload_trailing("24", "25"),
        header_level=False,
    ),
    Bad(
        "trailing-bytes-static-shape",
        npy_bytes(GOOD_ARRAY) + bytes(4),
        npy.payload_trailing("24", "28"),
        shape=(2, 3),
        header_level=False,
    ),
    Bad(
        "payload-short-static-shape",
        npy_bytes(GOOD_ARRAY)[:-4],
        npy.payload_short("24", "20"),
        shape=(2, 3),
        header_level=False,
    ),
    Bad(
        "zero-size-with-payload",
        _h(_entry(shape="(0,)"), b"\0" * 4),
        npy.payload_trailing("0", "4"),
        header_level=False,
    ),
    # A bad 0-d Fortran-order or big-endian file: the reorder steps must not run on its dims.
    Bad(
        "fortran-scalar-payload-empty",
        _h(_entry(fortran="True", shape="()"), b""),
        npy.payload_short("4", "0"),
        header_level=False,
    ),
    Bad(
        "fortran-scalar-trailing",
        _h(_entry(fortran="True", shape="()"), bytes(6)),
        npy.payload_trailing("4", "6"),
        header_level=False,
    ),
    Bad(
        "big-endian-fortran-scalar-payload-empty",
        _h(_entry("'>f4'", fortran="True", shape="()"), b""),
        npy.payload_short("4", "0"),
        header_level=False,
    ),
    Bad(
        "huge-claim-tiny-file",
        _h(_entry("'<f8'", shape=f"({10**12},)"), bytes(16)),
        npy.payload_short(str(8 * 10**12), "16"),
        dtype="float64",
        header_level=False,
    ),
    # -- declared dtype / shape differ (never reinterpreted) --------------------------------------
    Bad(
        "float32-read-as-int32",
        npy_bytes(GOOD_ARRAY),
        npy.dtype_mismatch("int32", "float32"),
        dtype="int32",
        header_level=False,
    ),
    Bad(
        "big-endian-float32-read-as-float64",
        npy_bytes(GOOD_ARRAY.astype(">f4")),
        npy.dtype_mismatch("float64", "float32"),
        dtype="float64",
        header_level=False,
    ),
    Bad(
        "int32-read-as-uint32",
        npy_bytes(GOOD_ARRAY.astype("<i4")),
        npy.dtype_mismatch("uint32", "int32"),
        dtype="uint32",
        header_level=False,
    ),
    Bad(
        "bool-read-as-uint8",
        npy_bytes(GOOD_ARRAY.astype(bool)),
        npy.dtype_mismatch("uint8", "bool"),
        dtype="uint8",
        header_level=False,
    ),
    Bad(
        "complex64-read-as-float64",
        npy_bytes(GOOD_ARRAY.astype("<c8")),
        npy.dtype_mismatch("float64", "complex64"),
        dtype="float64",
        header_level=False,
    ),
    Bad(
        "shape-transposed",
        npy_bytes(GOOD_ARRAY),
        npy.shape_mismatch("(3, 2)", "(2, 3)") + npy.vary_hint("(None, None)"),
        shape=(3, 2),
        header_level=False,
    ),
    Bad(
        "rank-differs",
        npy_bytes(GOOD_ARRAY),
        npy.shape_mismatch("(6,)", "(2, 3)"),
        shape=(6,),
        header_level=False,
    ),
    Bad(
        "partial-shape-differs",
        npy_bytes(GOOD_ARRAY),
        npy.shape_mismatch("(None, 4)", "(2, 3)") + npy.vary_hint("(None, None)"),
        shape=(None, 4),
        header_level=False,
    ),
    Bad(
        "scalar-declared",
        npy_bytes(GOOD_ARRAY),
        npy.shape_mismatch("()", "(2, 3)"),
        shape=(),
        header_level=False,
    ),
    Bad(
        "scalar-file",
        npy_bytes(np.float32(1.0).reshape(())),
        npy.shape_mismatch("(2, 3)", "()"),
        shape=(2, 3),
        header_level=False,
    ),
]

CORPUS_IDS = [case.id for case in CORPUS]
assert len(set(CORPUS_IDS)) == len(CORPUS_IDS), "corpus ids must be unique"
HEADER_LEVEL = [case for case in CORPUS if case.header_level]
