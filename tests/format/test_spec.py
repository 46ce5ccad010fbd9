"""The rules of `npyio._format.spec`: a part's dtype and shape from the arguments and the first
file's header, as a case matrix in numpy's style (one row per case: what the file holds, the
arguments, what comes out), run through `derive_spec` on a file numpy wrote. Reading that header
(no file, a bad one, an ``.npz`` member): ``tests/io/test_spec.py``."""

from __future__ import annotations

import numpy as np
import pytest

from npyio._format.header import Limits, make_hint
from npyio._format.spec import Spec
from npyio._io.spec import derive_spec
from npyio.errors import NpyFormatError

F4 = np.dtype("float32")

#: (file's dtype, file's shape, dtype=, shape=, what) -> (spec's dtype, spec's shape)
ACCEPTED = [
    ("<f4", (2, 3), None, None, "inputs", F4, (2, 3)),
    (">f4", (2, 3), None, None, "inputs", F4, (2, 3)),  # either byte order loads native
    ("<f4", (2, 3), "float32", None, "inputs", F4, (2, 3)),
    ("<f4", (2, 3), None, (2, None), "inputs", F4, (2, None)),
    ("<f4", (2, 3), None, (None, None), "inputs", F4, (None, None)),
    ("<i8", (), None, None, "labels", np.dtype("int64"), ()),
    ("|b1", (4,), np.bool_, (4,), "labels", np.dtype("bool"), (4,)),
    ("<u2", (0, 5), None, None, "inputs", np.dtype("uint16"), (0, 5)),
    ("<c8", (3,), "complex64", None, "inputs", np.dtype("complex64"), (3,)),
]

#: (file's dtype, file's shape, dtype=, shape=, what) -> words the error must hold
REFUSED = [
    (
        "<f4",
        (2, 3),
        "float64",
        None,
        "inputs",
        [
            "dtype mismatch -- expected dtype=float64, got float32",
            "ds = ds.map(lambda x: tf.cast(x",
        ],
    ),
    (
        "<f4",
        (),
        "int64",
        None,
        "labels",
        ["expected label_dtype=int64, got float32", "(x, tf.cast(y, tf.int64))"],
    ),
    ("<i8", (2,), None, (3,), "inputs", ["expected shape="]),
    ("<i8", (2,), None, (2, 1), "labels", ["expected label_shape="]),
]


def _save(tmp_path, dtype: str, shape: tuple[int, ...]) -> str:
    path = tmp_path / "first.npy"
    np.save(path, np.zeros(shape, dtype))
    return str(path)


@pytest.mark.parametrize(
    ("file_dtype", "file_shape", "dtype", "shape", "what", "want_dtype", "want_shape"), ACCEPTED
)
def test_accepted(tmp_path, file_dtype, file_shape, dtype, shape, what, want_dtype, want_shape):
    spec = derive_spec(_save(tmp_path, file_dtype, file_shape), dtype, shape, what)
    assert (spec.file.dtype, spec.file.shape) == (want_dtype, want_shape)
    assert spec.output == spec.file  # a part read whole loads as its files' layout
    assert spec.file.dtype.isnative
    assert spec.output.static == all(d is not None for d in want_shape)


@pytest.mark.parametrize(("file_dtype", "file_shape", "dtype", "shape", "what", "words"), REFUSED)
def test_refused_naming_the_file(tmp_path, file_dtype, file_shape, dtype, shape, what, words):
    path = _save(tmp_path, file_dtype, file_shape)
    with pytest.raises(NpyFormatError) as caught:
        derive_spec(path, dtype, shape, what)
    message = str(caught.value)
    assert message.startswith(path)
    for word in words:
        assert word in message


def test_complex_to_real_is_refused_without_a_cast_hint(tmp_path):
    with pytest.raises(NpyFormatError, match="expected dtype=float32, got complex64") as caught:
        derive_spec(_save(tmp_path, "<c8", (3,)), "float32")
    assert "tf.cast" not in str(caught.value)  # the cast would drop the imaginary part


@pytest.mark.parametrize("dtype", [object, "U3", "not a dtype"])
def test_an_unsupported_dtype_is_a_type_error(tmp_path, dtype):
    with pytest.raises(TypeError):
        derive_spec(_save(tmp_path, "<f4", (2,)), dtype, (2,))


# --- the fast path's hint, under the spec's limits ------------------------------------------------
def test_usable_hint_respects_the_limits():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    hint = make_hint(x.dtype, x.shape)
    assert hint is not None

    def spec(limits: Limits = Limits(), hinted: bool = True) -> Spec:
        return Spec.whole(x.dtype, x.shape, hint if hinted else None, limits=limits)

    assert spec().usable_hint() == hint
    small = Limits(max_file_size=hint.size - 1)
    assert spec(limits=small).usable_hint() is None
    assert spec(limits=Limits(max_header_size=10)).usable_hint() is None
    assert spec(hinted=False).usable_hint() is None
