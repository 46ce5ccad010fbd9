"""The tfio backend (``npyio._read.tfio``) against ``np.load``, and tensorflow-io's own op.

Tests marked ``tfio`` need tensorflow-io's ops. They run only where ``NPYIO_TFIO=1`` is set (see
``tests/conftest.py``), in the tfio virtualenv (TensorFlow 2.16.2, tensorflow-io 0.37.1)::

    NPYIO_TFIO=1 .venv-tfio/bin/python -m pytest -m tfio tests/read/test_tfio.py

and there they fail, not skip, if the ops do not load. The unmarked tests (the backend is
unavailable without tensorflow-io) run everywhere.

The ``fallback=False`` runs prove which files tfio itself decodes: in that mode the only other
outcome is a refusal, so a bit-exact result came from ``IO>NumpyRead``.
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from npyio._read import tfio as _tfio
from npyio.errors import BackendUnavailableError
from tests._npy_testing import (
    DTYPE_NAMES,
    LAYOUTS,
    SHAPES,
    VERSION_IDS,
    VERSIONS,
    assert_same,
    byte_orders,
    np_load,
    npy_bytes,
    sample,
    tf_message,
    with_header,
    write_file,
)

tfio = pytest.mark.tfio

#: What tfio leaves to the graph parser: every other dtype it decodes itself.
GRAPH_NAMES = ("bool", "float16", "complex64", "complex128")
TFIO_NAMES = [n for n in DTYPE_NAMES if n not in GRAPH_NAMES]
REFUSED = "the tfio backend cannot decode this file (fallback=False)"


def reader(dtype: str, shape: object, *, fallback: bool = True, hint: bytes | None = None):
    """One traced read_tfio (graph mode, as in a tf.data map)."""
    dt, static = np.dtype(dtype), tf.TensorShape(shape)
    return tf.function(
        lambda p: _tfio.read_tfio(p, dt, static, hint, fallback=fallback),
        input_signature=[tf.TensorSpec([], tf.string)],
        autograph=False,
    )


def raw_tfio(path: str, dtype: str) -> np.ndarray:
    """tensorflow-io's IO>NumpyRead on its own, as its NumpyFileIODataset calls it."""
    ops = _tfio.load_ops()
    zero = tf.constant(0, tf.int64)
    return ops.numpy_read(
        address=zero,
        filename=path,
        array="",
        shape=tf.constant([1], tf.int64),
        start=zero,
        stop=tf.constant(-1, tf.int64),
        dtype=tf.as_dtype(dtype),
    ).numpy()


def fortran_order(arr: np.ndarray) -> bool:
    """What numpy's writer puts in the header for ``arr``."""
    return bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)


def refusal(stored: str, arr: np.ndarray, version: tuple[int, int]) -> str | None:
    """The reason ``fallback=False`` gives for a numpy-written file, None if tfio decodes it."""
    if version != (1, 0):
        return f"format version {version[0]}.{version[1]}"
    if fortran_order(arr):
        return "Fortran-order data"
    if np.dtype(stored).byteorder == ">":
        return "big-endian data"
    if arr.ndim == 0:
        return "a 0-d array"
    if arr.size == 0:
        return "an empty array"
    return None


def matrix(name: str, tmp_path: Path) -> dict[str, list[tuple[str, str, np.ndarray, str | None]]]:
    """Every case of dtype ``name``, by shape id: (case label, path, array, refusal)."""
    out: dict[str, list[tuple[str, str, np.ndarray, str | None]]] = {}
    for order in byte_orders(name):
        stored = np.dtype(name).str if order == "|" else np.dtype(name).newbyteorder(order).str
        for shape_id, shape in SHAPES.items():
            for layout in LAYOUTS:
                arr = sample(stored, shape, seed=len(shape)).copy(order=layout)
                for version, vid in zip(VERSIONS, VERSION_IDS, strict=True):
                    label = f"{stored}-{shape_id}-{layout}-{vid}"
                    path = write_file(tmp_path, f"{label}.npy", npy_bytes(arr, version))
                    out.setdefault(shape_id, []).append(
                        (label, path, arr, refusal(stored, arr, version))
                    )
    return out


# --- the backend is unavailable without tensorflow-io (runs in every venv) ---------------------
@pytest.fixture
def fresh_load(monkeypatch):
    """load_ops without its cache, so that the patched modules are what it sees."""
    monkeypatch.setattr(_tfio, "_LOADED", None)


def test_unavailable_without_tensorflow_io(monkeypatch, fresh_load):
    monkeypatch.setitem(sys.modules, "tensorflow_io", None)  # makes `import tensorflow_io` fail
    with pytest.raises(BackendUnavailableError) as info:
        _tfio.load_ops()
    message = str(info.value)
    assert f"installed: TensorFlow {tf.__version__}" in message
    assert "tensorflow-io 0.37.1 needs TensorFlow 2.16.x" in message
    assert "pip install 'tensorflow-cpu==2.16.2' 'tensorflow-io==0.37.1'" in message
    assert "not importable" in message
    assert isinstance(info.value.__cause__, ImportError)


def test_unavailable_when_the_op_library_does_not_load(monkeypatch, fresh_load):
    """tensorflow-io imports with a newer TensorFlow, but its .so does not load; its lazy
    loader raises NotImplementedError on first use."""

    class BrokenLoader(types.ModuleType):
        def __getattr__(self, name):
            raise NotImplementedError(
                "unable to open file: libtensorflow_io.so, from paths: [...]\ncaused by: "
                "['libtensorflow_io.so: undefined symbol: _ZN3tsl6StatusC1E']"
            )

    package = types.ModuleType("tensorflow_io")
    package.__path__ = []  # a package, so that the submodules below are importable
    python = types.ModuleType("tensorflow_io.python")
    python.__path__ = []
    ops = types.ModuleType("tensorflow_io.python.ops")
    ops.__path__ = []
    ops.core_ops = BrokenLoader("core_ops")
    for module in (package, python, ops):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    with pytest.raises(BackendUnavailableError) as info:
        _tfio.load_ops()
    message = str(info.value)
    assert f"installed: TensorFlow {tf.__version__}" in message
    assert "did not load" in message and "undefined symbol" in message
    assert "tensorflow-io 0.37.1 needs TensorFlow 2.16.x" in message


def test_read_tfio_raises_when_built_without_tensorflow_io(monkeypatch, fresh_load):
    monkeypatch.setitem(sys.modules, "tensorflow_io", None)
    with pytest.raises(BackendUnavailableError, match=tf.__version__):
        _tfio.read_tfio("any.npy", np.dtype("float32"), tf.TensorShape([2]))


# --- environment -----------------------------------------------------------------------------
@tfio
def test_ops_load_here():
    ops = _tfio.load_ops()  # fails (does not skip) if they do not
    assert ops.version == "0.37.1"
    assert _tfio.load_ops() is ops  # cached


@tfio
def test_import_npyio_does_not_import_tensorflow_io():
    code = "import sys, npyio; print('tensorflow_io' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "False"


# --- numpy's writer: the whole matrix --------------------------------------------------------
def check_matrix(name: str, fallback: bool, static: bool, tmp_path: Path) -> None:
    decoded_by_tfio = 0
    any_shape = reader(name, None, fallback=fallback)
    for shape_id, cases in matrix(name, tmp_path).items():
        read = reader(name, SHAPES[shape_id], fallback=fallback) if static else any_shape
        for label, path, _arr, reason in cases:
            if fallback or reason is None:
                assert_same(read(path), np_load(Path(path).read_bytes()), label)
                decoded_by_tfio += reason is None
                continue
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                read(path)
            message = tf_message(info.value)
            assert message.startswith(f"{path}: {REFUSED}"), (label, message)
            assert f"got {reason}" in message, (label, message)
    # v1, '<' or '|', C order, >= 1-d, non-empty: 1d (from C and from F arrays: numpy writes
    # both as C order), 2d and 6d in C order
    assert decoded_by_tfio == 4


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
@pytest.mark.parametrize("name", TFIO_NAMES)
def test_matrix(name, fallback, tmp_path):
    """dtype x byte order x shape x C/F x version, read with shape=None: bit for bit np.load;
    with fallback=False, exactly the files documented as tfio's are decoded and the others
    refused with the documented reason."""
    check_matrix(name, fallback, False, tmp_path)


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
@pytest.mark.parametrize("name", ["int8", "float64"])
def test_matrix_static_shapes(name, fallback, tmp_path):
    """The same with each file's static shape declared (the path a dataset takes: a header
    equal to numpy's for that shape skips the layout check; 0-d and empty shapes never reach
    tfio)."""
    check_matrix(name, fallback, True, tmp_path)


@tfio
@pytest.mark.parametrize("name", GRAPH_NAMES)
def test_dtypes_tfio_cannot_decode(name, tmp_path):
    """bool, float16, complex: the graph parser decodes them; fallback=False refuses them when
    the op is built."""
    read = reader(name, None)
    for cases in matrix(name, tmp_path).values():
        for label, path, _arr, _reason in cases:
            assert_same(read(path), np_load(Path(path).read_bytes()), label)
    with pytest.raises(TypeError, match=f"cannot decode {name}"):
        _tfio.read_tfio("x.npy", np.dtype(name), tf.TensorShape([2]), fallback=False)
    assert tf.as_dtype(name) not in [tf.as_dtype(n) for n in TFIO_NAMES]


@tfio
def test_raw_tfio_refuses_the_same_features(tmp_path):
    """The refusals above mirror tensorflow-io's own: it errors on these (without naming the
    file), so falling back costs no file tfio could read."""
    a = np.arange(12, dtype="<f4").reshape(3, 4)
    files = {
        "v2": npy_bytes(a, (2, 0)),
        "v3": npy_bytes(a, (3, 0)),
        "big-endian": npy_bytes(a.astype(">f4")),
        "fortran": npy_bytes(np.asfortranarray(a)),
        "empty": npy_bytes(np.zeros((0, 4), "<f4")),
    }
    for label, data in files.items():
        path = write_file(tmp_path, f"{label}.npy", data)
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            raw_tfio(path, "float32")
        assert path not in info.value.message, label
    for name in ("bool", "float16", "complex64", "complex128"):
        path = write_file(tmp_path, f"{name}.npy", npy_bytes(np.zeros((2,), name)))
        with pytest.raises(tf.errors.InvalidArgumentError):
            raw_tfio(path, "float32")


@tfio
@pytest.mark.parametrize(
    "case",
    ["0-d array: segmentation fault", "dtype attr differs from the file: CHECK failure"],
)
def test_raw_tfio_crashes_the_process(case, tmp_path):
    """Why 0-d files never reach tfio, and why the dtype is checked before calling it."""
    path = write_file(
        tmp_path, "a.npy", npy_bytes(np.float32(1.5) if "0-d" in case else np.zeros(3, "<i4"))
    )
    code = textwrap.dedent(f"""
        import tensorflow as tf
        from npyio._read import tfio as _tfio
        ops = _tfio.load_ops()
        zero = tf.constant(0, tf.int64)
        ops.numpy_read(address=zero, filename={path!r}, array="", shape=tf.constant([1], tf.int64),
                       start=zero, stop=tf.constant(-1, tf.int64), dtype=tf.float32)
        print("survived")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode < 0, (result.returncode, result.stdout, result.stderr[-2000:])
    assert "survived" not in result.stdout
    # and the guarded reader gets the 0-d file right
    if "0-d" in case:
        assert_same(reader("float32", ())(path), np.float32(1.5))


# --- headers numpy's writer does not make ----------------------------------------------------
T = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"


def padded(text: str, align: int = 16, end: str = "\n", prefix: int = 10) -> str:
    return text + " " * (-(prefix + len(text) + len(end)) % align) + end


#: header text -> whether tfio is trusted with it. All are valid for npyio (and np.load).
HEADERS = {
    "numpy-16-aligned": (padded(T), True),
    "numpy-64-aligned": (padded(T, 64), True),
    "double-quotes": (padded(T.replace("'", '"')), False),
    "key-order": (padded("{'shape': (3, 4), 'fortran_order': False, 'descr': '<f4', }"), False),
    "no-trailing-comma": (
        padded("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}"),
        False,
    ),
    "no-space-after-colon": (padded(T.replace(": ", ":")), False),
    "newlines-between-entries": (padded(T.replace(", '", ",\n'")), False),
    "tabs-between-entries": (padded(T.replace(", '", ",\t'")), False),
    "shape-no-spaces": (padded(T.replace("(3, 4)", "(3,4)")), False),
    "leading-space": (padded(" " + T), False),
    "not-aligned": (T + "\n", False),
    "no-final-newline": (padded(T, end=" "), False),
    "descr-equals": (padded(T.replace("<f4", "=f4")), False),
    "descr-pipe": (padded(T.replace("<f4", "|f4")), False),
    "descr-no-order": (padded(T.replace("'<f4'", "'f4'")), False),
}


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
@pytest.mark.parametrize("case", list(HEADERS))
def test_header_variants(case, fallback, tmp_path):
    text, trusted = HEADERS[case]
    want = np.arange(12, dtype="<f4").reshape(3, 4) * 1.5
    data = with_header(text, want.tobytes())
    assert_same(np_load(data), want)  # numpy reads them all
    path = write_file(tmp_path, f"{case}.npy", data)
    read = reader("float32", (3, 4), fallback=fallback)
    if fallback or trusted:
        assert_same(read(path), want, case)
    else:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            read(path)
        message = tf_message(info.value)
        assert message.startswith(f"{path}: {REFUSED}"), message
        assert "got a header that is not byte for byte in numpy's own v1.0 layout" in message


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
def test_long_header_from_numpy(fallback, tmp_path):
    """numpy writes a 182-byte header for 32 dims; tfio reads its length through a signed char
    and fails. The guard sends it to the graph parser."""
    want = np.arange(2, dtype="<f4").reshape(*([1] * 31), 2)
    data = npy_bytes(want)
    assert int.from_bytes(data[8:10], "little") == 182
    path = write_file(tmp_path, "long.npy", data)
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        raw_tfio(path, "float32")
    read = reader("float32", want.shape, fallback=fallback)
    if fallback:
        assert_same(read(path), want)
    else:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            read(path)
        assert "got a header that is not byte for byte" in tf_message(info.value)


@tfio
def test_misread_header_length_would_be_wrong_data(tmp_path):
    """A valid 438-byte header with a newline at byte 181: tfio reads the length as 182 and
    returns header bytes as data. The guarded reader returns the right array."""
    want = np.arange(12, dtype="<f4").reshape(3, 4) * 1.5
    text = T + " " * (181 - len(T)) + "\n" + " " * (438 - 183) + "\n"
    assert len(text) == 438
    path = write_file(tmp_path, "lies.npy", with_header(text, want.tobytes()))
    assert_same(np_load(Path(path).read_bytes()), want)
    wrong = raw_tfio(path, "float32")
    assert wrong.shape == want.shape and wrong.tobytes() != want.tobytes()
    assert_same(reader("float32", (3, 4))(path), want)
    assert_same(reader("float32", None)(path), want)


def zip_tail_file() -> tuple[bytes, np.ndarray, np.ndarray]:
    """A valid float32 .npy whose payload ends with a zip archive holding another '.npy'."""
    inner = np.full((2, 40000), 7, dtype="<f4")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(".npy", npy_bytes(inner))
    archive = buf.getvalue()
    payload = bytes(inner.nbytes - len(archive)) + archive
    outer = np.frombuffer(payload, "<f4").reshape(inner.shape)
    return npy_bytes(outer), outer, inner


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
def test_zip_archive_in_the_payload(fallback, tmp_path):
    """tfio probes every file for a zip directory in its last 64 KiB: given this file it returns
    the array inside the archive. The guard sees the signature and does not call it."""
    data, outer, inner = zip_tail_file()
    path = write_file(tmp_path, "polyglot.npy", data)
    assert_same(raw_tfio(path, "float32"), inner)  # wrong data, silently
    read = reader("float32", outer.shape, fallback=fallback)
    if fallback:
        assert_same(read(path), outer)
    else:
        with pytest.raises(tf.errors.InvalidArgumentError, match="zip signature"):
            read(path)


@tfio
@pytest.mark.parametrize("signature", [b"PK\x05\x06", b"PK\x06\x07"], ids=["eocd", "zip64"])
def test_zip_signature_in_the_payload(signature, tmp_path):
    """A signature plus zeros is enough for tfio to fail (without naming the file)."""
    want = np.frombuffer(bytes(64) + signature + bytes(60), np.uint8).copy()
    path = write_file(tmp_path, "sig.npy", npy_bytes(want))
    if signature == b"PK\x05\x06":
        with pytest.raises(tf.errors.InvalidArgumentError, match="zipfile"):
            raw_tfio(path, "uint8")
    assert_same(reader("uint8", want.shape)(path), want)
    # and only in the last 64 KiB, where tfio looks
    far = np.frombuffer(bytes(64) + signature + bytes(70000), np.uint8).copy()
    path = write_file(tmp_path, "far.npy", npy_bytes(far))
    assert_same(reader("uint8", far.shape, fallback=False)(path), far)


# --- invalid files: npyio's errors, naming the path -------------------------------------------
def invalid_files() -> dict[str, tuple[bytes, str]]:
    good = npy_bytes(np.arange(12, dtype="<f4").reshape(3, 4))
    return {
        "trailing-bytes": (good + b"\0\0\0\0", "trailing bytes after the payload"),
        "trailing-byte": (good + b"\0", "trailing bytes after the payload"),
        "short-payload": (good[:-1], "payload is shorter than the header says"),
        "no-payload": (good[:128], "payload is shorter than the header says"),
        "header-says-less": (
            with_header(
                padded("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }"), good[128:]
            ),
            "shape mismatch",
        ),
        "truncated-header": (good[:40], "header runs past the end of the file"),
        "bad-magic": (b"\x93NUMPX" + good[6:], "bad magic string"),
        "empty-file": (b"", "bad magic string"),
        "dtype-mismatch": (npy_bytes(np.zeros((3, 4), "<i4")), "dtype mismatch"),
        "shape-mismatch": (npy_bytes(np.zeros((4, 3), "<f4")), "shape mismatch"),
        "bad-version": (good[:6] + b"\x04\x00" + good[8:], "unsupported .npy format version"),
    }


@tfio
@pytest.mark.parametrize("fallback", [True, False], ids=["fallback", "strict"])
@pytest.mark.parametrize("case", list(invalid_files()))
def test_invalid_files_are_refused_naming_the_path(case, fallback, tmp_path):
    data, reason = invalid_files()[case]
    path = write_file(tmp_path, f"{case}.npy", data)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        reader("float32", (3, 4), fallback=fallback)(path)
    message = tf_message(info.value)
    assert message.startswith(f"{path}: "), message
    assert reason in message, message
    assert REFUSED not in message  # npyio's own error, in both modes


@tfio
def test_raw_tfio_believes_lying_headers(tmp_path):
    """Why sizes are checked: tfio ignores trailing bytes."""
    for case in ("trailing-bytes", "header-says-less"):
        data, _ = invalid_files()[case]
        path = write_file(tmp_path, f"{case}.npy", data)
        raw_tfio(path, "float32")  # no error


@tfio
def test_missing_file(tmp_path):
    path = str(tmp_path / "nope.npy")
    for fallback in (True, False):
        with pytest.raises(tf.errors.NotFoundError, match=path):
            reader("float32", (3, 4), fallback=fallback)(path)


# --- shapes, hints, tf.data -------------------------------------------------------------------
@tfio
@pytest.mark.parametrize("shape", [None, (None, 4), (3, None), (3, 4)], ids=str)
def test_declared_shapes(shape, tmp_path):
    want = sample("<i2", (3, 4))
    path = write_file(tmp_path, "a.npy", npy_bytes(want))
    read = reader("int16", shape, fallback=False)
    out = read(path)
    assert_same(out, want)
    assert read.get_concrete_function().structured_outputs.shape == tf.TensorShape(shape)
    other = write_file(tmp_path, "b.npy", npy_bytes(sample("<i2", (5, 4))))
    if shape in (None, (None, 4)):
        assert_same(read(other), sample("<i2", (5, 4)))
    else:
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape mismatch"):
            read(other)


@tfio
def test_hint_header(tmp_path):
    """The hint (a first file's header) speeds up files that share it; files with another
    header tfio reads right are still decoded by tfio."""
    want = sample("<f8", (3, 4))
    hint = npy_bytes(want)[:128]
    sixteen = with_header(padded(T.replace("<f4", "<f8")), want.tobytes())
    assert sixteen[:64] != hint[:64]
    read = reader("float64", (3, 4), fallback=False, hint=hint)
    for name, data in (("numpy.npy", npy_bytes(want)), ("sixteen.npy", sixteen)):
        assert_same(read(write_file(tmp_path, name, data)), want, name)
    # a hint tfio could not read, or that does not match, changes nothing
    for bad_hint in (npy_bytes(want.astype(">f8"))[:128], b"junk"):
        read = reader("float64", (3, 4), fallback=False, hint=bad_hint)
        assert_same(read(write_file(tmp_path, "numpy.npy", npy_bytes(want))), want)


@tfio
def test_in_a_parallel_dataset_map(tmp_path):
    """Mixed files in one tf.data map: each decoded right by tfio or the graph parser; the
    iterator can be checkpointed."""
    paths, wants = [], []
    for i in range(24):
        arr = sample("<f4", (6, 5), seed=i)
        data = [
            npy_bytes(arr),
            npy_bytes(arr.astype(">f4")),
            npy_bytes(arr.copy(order="F")),
            npy_bytes(arr, (2, 0)),
        ][i % 4]
        paths.append(write_file(tmp_path, f"{i}.npy", data))
        wants.append(arr)
    ds = tf.data.Dataset.from_tensor_slices(paths).map(
        lambda p: _tfio.read_tfio(p, np.dtype("float32"), tf.TensorShape([6, 5])),
        num_parallel_calls=2,
        deterministic=True,
    )
    assert ds.element_spec == tf.TensorSpec([6, 5], tf.float32)
    got = list(ds)
    for g, w in zip(got, wants, strict=True):
        assert_same(g, w)
    iterator = iter(ds)
    next(iterator)
    tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "ckpt"))


@tfio
@settings(max_examples=40)
@given(
    name=st.sampled_from(TFIO_NAMES),
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=5).map(tuple),
    seed=st.integers(0, 2**16),
)
def test_property_numpy_writer_is_decoded_by_tfio(name, shape, seed, tmp_path_factory):
    """Any little-endian C-order array numpy's v1.0 writer makes: decoded by tfio itself
    (fallback=False), bit for bit."""
    arr = sample(np.dtype(name).newbyteorder("<").str, shape, seed)
    path = write_file(tmp_path_factory.mktemp("p"), "a.npy", npy_bytes(arr))
    assert_same(_strict_any_shape(name)(path), arr)


_STRICT: dict[str, object] = {}


def _strict_any_shape(name: str):
    if name not in _STRICT:
        _STRICT[name] = reader(name, None, fallback=False)
    return _STRICT[name]
