"""Hypothesis strategies for the fuzzers.

Files start as what numpy's own writer produces and are then damaged where real files go wrong:
the magic and version bytes, the header-length field, the header text (its descr, dims and
fortran_order, stray bytes, Python spellings numpy tolerates), the payload's length
(truncation, appended bytes) and its bytes. ``random_files`` makes files from nothing.

Every strategy returns ``(data, dtype name)`` pairs, except where it says otherwise.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from npyio._format import npy
from tests._npy_testing import STORED_DTYPES, VERSIONS, npy_bytes, sample, with_header
from tests.graph.test_decode_properties import PIECES, VALUES, mutated_files  # noqa: F401 -- re-exported

DTYPE_NAMES = list(npy.CODES.values())
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)

#: descrs numpy writes for dtypes npyio does not decode, and odd but valid ones.
OTHER_DESCRS = [
    "'<f16'",
    "'|S3'",
    "'<U2'",
    "'<M8[s]'",
    "'<m8[ns]'",
    "'|V4'",
    "'|O'",
    "'<c32'",
    "[('a', '<f4')]",
    "[('', '<f4')]",
    "('<f4', (2,))",
    "('<f4', ())",
    "'float32'",
    "'<f'",
    "'d'",
    "'!f4'",
    "'?'",
    "'int64'",
    "'<b1'",
    "'>u1'",
    "'=i8'",
    "'|f4'",
]

#: Whole dims to put in place of one dim.
DIMS = [
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0",
    "- 0",
    "00",
    "0_0",
    "+2",
    "2L",
    "2 L",
    "2\tL L",
    "0L",
    "-0L",
    "2l",
    "2LL",
    "0x2",
    "0o2",
    "0b10",
    "(2)",
    "True",
    "1_0",
    "1" * 19,
    "9" * 40,
    str(2**31),
    str(2**32),
    str(2**59 - 1),
    str(2**59),
    str(2**60),
    str(2**62),
    str(2**63),
    str(2**64),
    "-1234567890123456789",
]

_ENTRY = rb"((?:'%s'|\"%s\")[ \t\n\r\f]*:[ \t\n\r\f]*)(\([^)]*\)|'[^']*'|\w+)"


def _split(data: bytes) -> tuple[tuple[int, int], bytearray, bytes]:
    """numpy-written bytes -> (version, header text, payload)."""
    version = (data[6], data[7])
    start = npy.MAGIC_LEN + npy.HEADER_LEN_SIZE[version]
    hlen = int.from_bytes(data[npy.MAGIC_LEN : start], "little")
    return version, bytearray(data[start : start + hlen]), data[start + hlen :]


def _set_value(text: bytearray, key: bytes, value: bytes) -> None:
    m = re.search(_ENTRY % (key, key), text)
    if m:
        text[m.start(2) : m.end(2)] = value


def _shape_span(text: bytearray) -> tuple[int, int] | None:
    m = re.search(_ENTRY % (b"shape", b"shape"), text)
    return (m.start(2), m.end(2)) if m else None


_GOOD = r"[<>|=]?(?:{})".format("|".join(npy.CODES))


def aliases(stored: str) -> list[str]:
    """descr spellings other than numpy's that np.dtype reads as ``stored``."""
    dt = np.dtype(stored)
    order = "" if dt.byteorder in "|=" else dt.byteorder
    candidates = [
        dt.name,
        dt.char,
        order + dt.char,
        order + dt.name,
        "!" + dt.str[1:],
        dt.str[1:],
        "=" + dt.str[1:],
        "|" + dt.str[1:],
    ]
    out = []
    for c in candidates:
        try:
            if np.dtype(c) == dt and not re.fullmatch(_GOOD, c):
                out.append(repr(c))
        except TypeError:
            continue
    out.append(f"({dt.str!r}, ())")
    return out


def _lenient(draw: st.DrawFn, text: bytearray, stored: str, version: tuple[int, int]) -> None:
    """A rewrite that numpy's reader still takes (mostly), in a spelling npyio may refuse."""
    kind = draw(
        st.sampled_from(
            [
                "comment",
                "continuation",
                "lead-newline",
                "lead-formfeed",
                "lead-tab",
                "trail",
                "u-prefix",
                "r-prefix",
                "triple-quotes",
                "concatenation",
                "escape",
                "double-quotes",
                "paren-key",
                "paren-value",
                "paren-shape",
                "paren-dim",
                "duplicate-key",
                "alias",
                "python2-long",
                "python2-long",
                "python2-padding",
                "dim-spelling",
                "whitespace",
                "no-trailing-comma",
            ]
        )
    )
    body = bytes(text).rstrip(b" \n")
    tail = bytes(text)[len(body) :]
    if kind == "comment":
        where = draw(st.sampled_from(["end", "line", "inside"]))
        if where == "end":
            text[:] = body + b"  # written by hand" + tail
        elif where == "line":
            text[:] = b"# a comment line\n" + body + tail
        else:
            text[:] = body.replace(b", ", b",  # here\n ", 1) + tail
    elif kind == "continuation":
        text[:] = body.replace(b", ", b", \\\n", 1) + tail
    elif kind == "lead-newline":
        text[:] = draw(st.sampled_from([b"\n", b"\r\n", b" \n", b"\n\n"])) + body + tail
    elif kind == "lead-formfeed":
        text[:] = draw(st.sampled_from([b"\f", b"\f ", b" \f\t"])) + body + tail
    elif kind == "lead-tab":
        text[:] = draw(st.sampled_from([b"\t", b" ", b"  \t"])) + body + tail
    elif kind == "trail":
        text[:] = body + draw(
            st.sampled_from(
                [
                    b"",
                    b" ",
                    b"\n",
                    b"\n\n",
                    b"\r\n",
                    b"\n  ",
                    b"\n  \n",
                    b" \f\n",
                    b"\n\f",
                    b"\t",
                    b"\r",
                    b"\n\r\n",
                    b";",
                    b" ;\n",
                    b"\n\t ",
                    b"\r\n   ",
                    b"\n \n\t",
                    b"\n\f ",
                    b"\r\f",
                    b"\r  ",
                    b"\n  x",
                    b"\n  \\",
                ]
            )
        )
    elif kind in ("u-prefix", "r-prefix"):
        key = draw(st.sampled_from([b"'descr'", b"'shape'", b"'fortran_order'"]))
        text[:] = bytes(text).replace(key, (b"u" if kind == "u-prefix" else b"R") + key, 1)
    elif kind == "triple-quotes":
        text[:] = bytes(text).replace(b"'descr'", b"'''descr'''", 1)
    elif kind == "concatenation":
        text[:] = bytes(text).replace(b"'descr'", b"'des' 'cr'", 1)
    elif kind == "escape":
        text[:] = bytes(text).replace(b"'descr'", b"'\\x64escr'", 1)
    elif kind == "double-quotes":
        text[:] = bytes(text).replace(b"'", b'"')
    elif kind == "paren-key":
        text[:] = bytes(text).replace(b"'fortran_order'", b"('fortran_order')", 1)
    elif kind == "paren-value":
        text[:] = re.sub(rb"\b(True|False)\b", rb"(\1)", bytes(text), count=1)
    elif kind == "paren-shape":
        span = _shape_span(text)
        if span:
            text[span[0] : span[1]] = b"(" + text[span[0] : span[1]] + b")"
    elif kind == "paren-dim":
        text[:] = re.sub(rb"\((\d+)", rb"((\1)", bytes(text), count=1)
    elif kind == "duplicate-key":
        other = draw(
            st.sampled_from([b"'descr': '<f8', ", b"'shape': (), ", b"'fortran_order': True, "])
        )
        text[:] = bytes(text).replace(b"{", b"{" + other, 1)
    elif kind == "alias":
        _set_value(text, b"descr", draw(st.sampled_from(aliases(stored))).encode())
    elif kind == "python2-long":
        # what numpy wrote under Python 2 on Windows ("2L"), and spellings around it: numpy's
        # filter takes "2 L" and "2L L" too, but not "2l", "2LL" or an L on the next line
        suffix = draw(
            st.sampled_from([b"L", b"L", b"L", b" L", b"\tL", b"\fL", b"L L", b"l", b"LL", b"\nL"])
        )
        span = _shape_span(text)
        if span:
            shape = bytes(text[span[0] : span[1]])
            count = draw(st.sampled_from([0, 0, 1]))  # 0: every dim
            text[span[0] : span[1]] = re.sub(rb"(\d)(?=[ ,)])", rb"\1" + suffix, shape, count=count)
    elif kind == "python2-padding":
        # an older writer's padding: "{...}\n" then spaces up to the alignment (numpy's Python 2
        # filter reads it in versions 1.0 and 2.0, not in 3.0), with long suffixes or not
        if draw(st.booleans()):
            text[:] = re.sub(rb"(\d)(?=[ ,)])", rb"\1L", bytes(text))
        body = bytes(text).rstrip(b" \n") + draw(st.sampled_from([b"\n", b"\r\n", b" \n"]))
        prefix = npy.MAGIC_LEN + npy.HEADER_LEN_SIZE[version] + len(body)
        align = draw(st.sampled_from([16, 64, 4096]))
        pad = draw(st.sampled_from([b" ", b" ", b"\t", b"\f"])) * (-prefix % align or align)
        text[:] = body + pad
    elif kind == "dim-spelling":
        spelled = draw(
            st.sampled_from(
                [
                    (rb"\b0\b", [b"00", b"0_0", b"- 0", b"-0", b"+0", b"0x0", b"0o0", b"-(0)"]),
                    (rb"\b1\b", [b"01", b"+1", b"0x1", b"0b1", b"True", b"1L", b"(1)"]),
                    (rb"\b2\b", [b"+2", b"0x2", b"0o2", b"0b10", b"2L", b"0_2", b"(2)"]),
                    (rb"\b3\b", [b"+3", b"0x3", b"3L", b"0B11", b"03"]),
                ]
            )
        )
        pattern, spellings = spelled
        span = _shape_span(text)
        if span:
            shape = bytes(text[span[0] : span[1]])
            new = re.sub(pattern, draw(st.sampled_from(spellings)), shape, count=1)
            text[span[0] : span[1]] = new
    elif kind == "whitespace":
        ws = draw(st.sampled_from([b"\t", b"\n", b"\r\n", b"\f", b"  ", b"\r", b"\v"]))
        text[:] = bytes(text).replace(
            draw(st.sampled_from([b": ", b", ", b"{", b"("])),
            draw(st.sampled_from([b":", b",", b"{", b"("])) + ws,
            1,
        )
    elif kind == "no-trailing-comma":
        text[:] = bytes(text).replace(b", }", b"}", 1)


@st.composite
def valid_files(draw: st.DrawFn, shapes: st.SearchStrategy = SHAPES) -> tuple[bytes, str, str]:
    """(data, dtype name, stored descr) as numpy's writer produces it."""
    name, stored = draw(st.sampled_from(STORED_DTYPES))
    shape = draw(shapes)
    arr = sample(stored, shape, seed=draw(st.integers(0, 3)))
    arr = arr.copy(order=draw(st.sampled_from("CF")))
    return npy_bytes(arr, draw(st.sampled_from(VERSIONS))), name, stored


MUTATIONS = [
    "magic",
    "version",
    "hlen",
    "descr",
    "dims",
    "shape",
    "fortran",
    "text-bytes",
    "tokens",
    "lenient",
    "lenient",
    "lenient",
    "padding",
    "truncate",
    "payload-length",
    "append",
    "payload-bytes",
]


@st.composite
def damaged_files(draw: st.DrawFn, mutations: list[str] = MUTATIONS) -> tuple[bytes, str]:
    """A file numpy wrote, with one to four things wrong with it (or, rarely, none)."""
    data, name, stored = draw(valid_files())
    version, text, payload = _split(data)
    payload = bytearray(payload)
    hlen: int | None = None  # None: the length of the final text
    raw_version = bytes(version)
    magic = bytearray(npy.MAGIC_PREFIX)
    cut: int | None = None

    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(mutations))
        if op == "magic":
            magic[draw(st.integers(0, 5))] = draw(st.integers(0, 255))
        elif op == "version":
            raw_version = bytes(
                draw(
                    st.sampled_from(
                        [
                            (1, 0),
                            (2, 0),
                            (3, 0),
                            (1, 1),
                            (0, 0),
                            (4, 0),
                            (2, 1),
                            (3, 255),
                            (255, 255),
                        ]
                    )
                )
            )
        elif op == "hlen":
            hlen = draw(
                st.one_of(
                    st.integers(-16, 16).map(lambda k: max(0, len(text) + k)),
                    st.sampled_from(
                        [0, 1, 9_999, 10_000, 10_001, 2**16 - 1, 2**16, 2**31, 2**32 - 1]
                    ),
                )
            )
        elif op == "descr":
            _set_value(
                text,
                b"descr",
                draw(
                    st.one_of(
                        VALUES[b"descr"],
                        st.sampled_from(OTHER_DESCRS),
                        st.sampled_from(aliases(stored)),
                    )
                ).encode(),
            )
        elif op == "dims":
            span = _shape_span(text)
            if span:
                shape = bytes(text[span[0] : span[1]])
                dims = list(re.finditer(rb"-?\d+", shape))
                if dims:
                    d = dims[draw(st.integers(0, len(dims) - 1))]
                    new = draw(st.sampled_from(DIMS)).encode()
                    shape = shape[: d.start()] + new + shape[d.end() :]
                text[span[0] : span[1]] = shape
        elif op == "shape":
            _set_value(text, b"shape", draw(VALUES[b"shape"]).encode())
        elif op == "fortran":
            _set_value(text, b"fortran_order", draw(VALUES[b"fortran_order"]).encode())
        elif op == "text-bytes":
            pos = draw(st.integers(0, len(text)))
            byte = bytes([draw(st.integers(0, 255))])
            how = draw(st.sampled_from(["insert", "replace", "delete"]))
            if how == "insert":
                text[pos:pos] = byte
            elif how == "replace":
                text[pos : pos + 1] = byte
            else:
                del text[pos : pos + draw(st.integers(1, 8))]
        elif op == "tokens":
            pos = draw(st.integers(0, len(text)))
            text[pos:pos] = draw(PIECES).encode("latin-1")
        elif op == "lenient":
            _lenient(draw, text, stored, version)
        elif op == "padding":
            body = bytes(text).rstrip(b" \n")
            text[:] = body + draw(
                st.sampled_from(
                    [b"", b"\n", b" " * 3 + b"\n", b" " * 200 + b"\n", b" " * 10_000 + b"\n"]
                )
            )
        elif op == "truncate":
            cut = draw(st.integers(0, npy.MAGIC_LEN + 4 + len(text) + len(payload)))
        elif op == "payload-length":
            k = draw(st.integers(1, 17))
            if draw(st.booleans()):
                del payload[max(0, len(payload) - k) :]
            else:
                payload += bytes(k)
        elif op == "append":
            payload += draw(
                st.one_of(
                    st.binary(min_size=1, max_size=64), st.just(b"\n"), st.just(bytes(payload))
                )
            )
        elif op == "payload-bytes" and payload:
            for _ in range(draw(st.integers(1, 4))):
                payload[draw(st.integers(0, len(payload) - 1))] = draw(st.integers(0, 255))

    n = len(text) if hlen is None else hlen
    size = npy.HEADER_LEN_SIZE.get((raw_version[0], raw_version[1]), 4)
    size = draw(st.sampled_from([size] * 9 + [2 if size == 4 else 4]))  # a field of the wrong size
    field = (n % 256**size).to_bytes(size, "little")
    data = bytes(magic) + raw_version + field + bytes(text) + bytes(payload)
    return (data if cut is None else data[:cut]), name


def lenient_files() -> st.SearchStrategy[tuple[bytes, str]]:
    """Files whose header numpy still reads, spelled in ways numpy's writer never uses."""
    return damaged_files(mutations=["lenient"])


@st.composite
def random_files(draw: st.DrawFn) -> tuple[bytes, str]:
    """Bytes from nothing: pure noise, or noise behind a good magic string and length field."""
    name = draw(st.sampled_from(DTYPE_NAMES))
    how = draw(st.sampled_from(["noise", "magic", "header"]))
    if how == "noise":
        return draw(st.binary(max_size=256)), name
    version = draw(st.sampled_from(VERSIONS))
    if how == "magic":
        return npy.MAGIC_PREFIX + bytes(version) + draw(st.binary(max_size=256)), name
    text = draw(
        st.one_of(
            st.binary(max_size=120),
            st.lists(PIECES, max_size=30).map(lambda ps: "".join(ps).encode("latin-1")),
        )
    )
    return with_header(text, draw(st.binary(max_size=64)), version), name


def declared(name: str) -> st.SearchStrategy[str]:
    """The dtype a file is read as: mostly its own, sometimes another."""
    return st.one_of(st.just(name), st.just(name), st.just(name), st.sampled_from(DTYPE_NAMES))


#: (dtype, declared static shape) pairs for the static-shape fuzzer: a few, to bound tracing.
STATIC_DTYPES = ["bool", "uint16", "float32", "complex128", "uint64", "int8"]
STATIC_SHAPES = [(), (3,), (2, 3), (0, 2), (None, 3), (None,)]


@st.composite
def static_files(draw: st.DrawFn) -> tuple[bytes, str, tuple[int | None, ...]]:
    """A file of one of `STATIC_SHAPES` (damaged or not), read with a declared static shape,
    which goes through the header fast path when the header is numpy's."""
    declared_shape = draw(st.sampled_from(STATIC_SHAPES))
    concrete = tuple(draw(st.integers(0, 3)) if d is None else d for d in declared_shape)
    shape = draw(st.sampled_from([concrete] * 4 + [(3, 2), (2,), ()]))
    data, name, _ = draw(valid_files(shapes=st.just(shape)))
    if draw(st.integers(0, 3)) == 0:
        data, name = draw(damaged_files())
    dtype = draw(st.sampled_from(STATIC_DTYPES))
    if draw(st.booleans()) and name in STATIC_DTYPES:
        dtype = name
    return data, dtype, declared_shape


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[bytes], str]:
    """Two to four files of one dtype and (mostly) one shape, some damaged, in either byte
    order and layout, for the rank-1 batch decoder."""
    name = draw(st.sampled_from(DTYPE_NAMES))
    stored = [s for n, s in STORED_DTYPES if n == name]
    shape = draw(SHAPES)
    files = []
    for _ in range(draw(st.integers(2, 4))):
        this_shape = draw(st.sampled_from([shape] * 6 + [draw(SHAPES)]))
        arr = sample(draw(st.sampled_from(stored)), this_shape, seed=draw(st.integers(0, 3)))
        arr = arr.copy(order=draw(st.sampled_from("CF")))
        data = npy_bytes(arr, draw(st.sampled_from(VERSIONS)))
        if draw(st.integers(0, 3)) == 0:
            data = _respell(draw, data, stored[0])
        files.append(data)
    return files, name


def _respell(draw: st.DrawFn, data: bytes, stored: str) -> bytes:
    """The same array with its header spelled differently, or damaged."""
    version, text, payload = _split(data)
    how = draw(st.sampled_from(["lenient", "zero-dim", "damage"]))
    if how == "damage":
        return draw(damaged_files())[0]
    if how == "zero-dim":
        text[:] = re.sub(rb"\b0\b", draw(st.sampled_from([b"-0", b"0", b" 0 "])), bytes(text))
    else:
        _lenient(draw, text, stored, version)
    return with_header(bytes(text), payload, version)
