"""Helpers shared by the decoder tests: building ``.npy`` bytes, comparing arrays bit for bit,
running the reference parser, and reading the text out of TensorFlow's assertion errors."""

from __future__ import annotations

import ast
import codecs
import functools
import io
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

import npyio
from npyio._format import npy

#: The matrix shapes (0-d, zero-size, 1-d to 6-d) and memory layouts every decoder is held to.
SHAPES = {
    "0d": (),
    "zero": (0,),
    "zero-3d": (3, 0, 2),
    "1d": (5,),
    "2d": (3, 4),
    "6d": (2, 1, 3, 1, 2, 2),
}
LAYOUTS = ["C", "F"]

VERSIONS = [(1, 0), (2, 0), (3, 0)]
VERSION_IDS = ["v1", "v2", "v3"]

#: Every dtype npyio decodes, in CODES order.
DTYPE_NAMES = list(npy.CODES.values())


def byte_orders(name: str) -> list[str]:
    """The byte-order characters numpy's writer uses for ``name``: '|' or '<' and '>'."""
    return ["|"] if np.dtype(name).itemsize == 1 else ["<", ">"]


#: (dtype name, stored dtype with its byte order), e.g. ("float32", ">f4").
STORED_DTYPES = [
    (name, np.dtype(name).newbyteorder(o).str if o != "|" else np.dtype(name).str)
    for name in DTYPE_NAMES
    for o in byte_orders(name)
]


def npy_bytes(arr: np.ndarray, version: tuple[int, int] = (1, 0)) -> bytes:
    """The bytes numpy's own writer produces for ``arr``."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, version=version, allow_pickle=False)
    return buf.getvalue()


def with_header(
    text: str | bytes,
    payload: bytes = b"",
    version: tuple[int, int] = (1, 0),
    *,
    hlen: int | None = None,
) -> bytes:
    """A file with a hand-made header: magic, version, length field, ``text`` as is, payload.

    ``text`` is used byte for byte (a str is encoded as latin-1), with no padding added.
    ``hlen`` overrides the length field (default: the length of ``text``).
    """
    raw = text.encode("latin-1") if isinstance(text, str) else text
    size = npy.HEADER_LEN_SIZE.get(version, 4)
    n = len(raw) if hlen is None else hlen
    return npy.MAGIC_PREFIX + bytes(version) + n.to_bytes(size, "little") + raw + payload


def header_text(descr: str = "<f4", fortran_order: bool = False, shape: object = (2, 3)) -> str:
    """A header dict in numpy's own style (no padding)."""
    return f"{{'descr': {descr!r}, 'fortran_order': {fortran_order}, 'shape': {shape!r}, }}"


def np_load(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def native(arr: np.ndarray) -> np.ndarray:
    """``arr`` in C order and native byte order, with the very same bits."""
    arr = np.array(arr, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    if arr.dtype.isnative:
        return arr
    return arr.byteswap().view(arr.dtype.newbyteorder("="))


def assert_same(got: np.ndarray | tf.Tensor, want: np.ndarray, what: object = "") -> None:
    """Bit-exact equality: same native dtype, same shape, same bytes (NaN payloads, -0.0)."""
    got = got.numpy() if isinstance(got, tf.Tensor) else np.asarray(got)
    want = native(want)
    assert got.dtype == want.dtype and got.dtype.isnative, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype == np.bool_:  # np.load keeps bool bytes other than 0/1; npyio gives True
        want = want.view(np.uint8) != 0
    assert got.tobytes() == want.tobytes(), (what, got, want)


def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Deterministic values of ``dtype`` (any byte order): random bits plus special values."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    else:
        flat = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt).copy()
        native_dt = dt.newbyteorder("=")
        if dt.kind in "fc":
            specials = [np.nan, -0.0, np.inf, -np.inf, 0.0, 1.5, -2.25]
        else:
            info = np.iinfo(native_dt)
            specials = [info.min, info.max, 0, 1]
        k = min(n, len(specials))
        flat[:k] = np.array(specials[:k], dtype=native_dt)
    return flat.reshape(shape)


def numpy_header(data: bytes) -> tuple[tuple[int, int], tuple, bool, np.dtype, int]:
    """numpy's own reading of a file's header: ``(version, shape, fortran_order, dtype, data
    offset)``."""
    f = io.BytesIO(data)
    version = np.lib.format.read_magic(f)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran_order, dtype = read(f)
    return version, shape, fortran_order, dtype, f.tell()


def write_file(directory: Path, name: str, data: bytes) -> str:
    path = directory / name
    path.write_bytes(data)
    return str(path)


def write_gfile(path: str, data: bytes) -> str:
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)
    return path


def reference(
    data: bytes,
    dtype: object,
    shape: tuple[int | None, ...] | None = None,
    *,
    path: str = "<bytes>",
    max_header_size: int = npy.MAX_HEADER_SIZE,
) -> npy.NpyHeader:
    """The pure-Python reference parser's verdict on a whole file (raises NpyFormatError)."""
    header = npy.read_header(io.BytesIO(data), path, max_header_size=max_header_size)
    npy.check_declared(header, npy.parse_dtype(dtype), shape, path)
    npy.check_payload(header, len(data), path)
    return header


@functools.cache
def decoder(
    dtype: str,
    shape: tuple[int | None, ...] | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
) -> tf.types.experimental.PolymorphicFunction:
    """One traced ``decode_npy`` per (dtype, shape), for feeding many files without retracing."""
    return tf.function(
        lambda b: npyio.decode_npy(b, dtype, shape, max_header_size=max_header_size),
        input_signature=[tf.TensorSpec([], tf.string)],
        autograph=False,
    )


@functools.cache
def reader(
    dtype: str,
    shape: tuple[int | None, ...] | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
) -> tf.types.experimental.PolymorphicFunction:
    """One traced ``read_npy`` per (dtype, shape)."""
    return tf.function(
        lambda p: npyio.read_npy(p, dtype, shape, max_header_size=max_header_size),
        input_signature=[tf.TensorSpec([], tf.string)],
        autograph=False,
    )


_GRAPH_ASSERT = re.compile(r"assertion failed: \[(.*?)\]\n\t \[\[\{\{", re.DOTALL)
_EAGER_ASSERT = re.compile(r"Summarized data: (b(['\"]).*\2)\Z", re.DOTALL)


def tf_message(err: tf.errors.OpError) -> str:
    """The text npyio put in a ``tf.debugging.Assert``, unescaped, whatever the execution mode.

    Eager TensorFlow shows the data as a Python bytes literal; graph mode (``tf.function``,
    ``tf.data``) shows it C-escaped between brackets. Anything else is returned as is.
    """
    message = err.message
    m = _EAGER_ASSERT.search(message)
    if m:
        return ast.literal_eval(m.group(1)).decode("utf-8", "replace")
    m = _GRAPH_ASSERT.search(message)
    if m:
        raw, _ = codecs.escape_decode(m.group(1).encode("utf-8"))
        return raw.decode("utf-8", "replace")
    return message


#: The conformance cases of every reader (tests/read/): each stored dtype in a few shapes,
#: both orders and both format versions.
CASE_SHAPES = [(), (0, 3), (5,), (2, 3, 4)]
CASES = [
    (stored, shape, fortran, version)
    for _name, stored in STORED_DTYPES
    for shape, fortran, version in itertools.product(CASE_SHAPES, (False, True), ((1, 0), (3, 0)))
]


def case_id(case: tuple[str, tuple[int, ...], bool, tuple[int, int]]) -> str:
    """A conformance case's test id: dtype, dims, order and format version."""
    dtype, shape, fortran, version = case
    dims = "x".join(map(str, shape)) or "scalar"
    return f"{dtype}-{dims}-{'F' if fortran else 'C'}-v{version[0]}"


def child_json(args: list[str], env: dict[str, str] | None = None) -> tuple[Any, str]:
    """Run this Python with ``args`` in a child process in the repository's root: its last
    line of stdout as JSON, and its stderr; a failed child fails the test with stderr's end."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def run_python(code: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """``code`` (dedented) in a child Python with this repository importable, TensorFlow's log
    quiet, and ``env`` over this process's environment; returns it finished, whatever its
    status (a test that expects a failure reads it)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(root), **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
