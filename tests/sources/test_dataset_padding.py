"""``padding_value``: what pads the parts with ``None`` dims in a batch, per part, as
``Dataset.padded_batch``'s ``padding_values``; each checked against its part's dtype."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import npyio

LENGTHS = [3, 1, 2]


def _sequences(root: Path, dtype: str = "float32", name: str = "x") -> str:
    """Files ``i.npy`` holding ``LENGTHS[i]`` rows of 2 values ``i + 1``."""
    (root / name).mkdir(parents=True, exist_ok=True)
    for i, n in enumerate(LENGTHS):
        np.save(root / name / f"{i}.npy", np.full((n, 2), i + 1, dtype))
    return str(root / name)


def _labels(root: Path) -> str:
    (root / "y").mkdir(parents=True, exist_ok=True)
    for i in range(len(LENGTHS)):
        np.save(root / "y" / f"{i}.npy", np.int64(i))
    return str(root / "y")


def _expected(i: int, width: int, pad: float) -> np.ndarray:
    out = np.full((width, 2), pad)
    out[: LENGTHS[i]] = i + 1
    return out


def test_one_number_pads_every_variable_part(tmp_path):
    xs, ys = _sequences(tmp_path), _labels(tmp_path)
    ds = npyio.dataset(xs, ys, shape=(None, 2), batch_size=2, padding_value=-1.0, with_paths=True)
    (x0, y0, p0), (x1, y1, p1) = [tuple(t.numpy() for t in batch) for batch in ds]
    np.testing.assert_array_equal(x0, [_expected(0, 3, -1.0), _expected(1, 3, -1.0)])
    np.testing.assert_array_equal(x1, [_expected(2, 2, -1.0)])
    assert y0.tolist() == [0, 1] and y1.tolist() == [2]  # the int64 labels: not padded
    assert [p.decode() for p in [*p0, *p1]] == [f"{xs}/{i}.npy" for i in range(3)]
    # by default: zeros, as before
    (x0, _, _), _ = list(npyio.dataset(xs, ys, shape=(None, 2), batch_size=2, with_paths=True))
    np.testing.assert_array_equal(x0, [_expected(0, 3, 0), _expected(1, 3, 0)])


def test_a_structure_gives_each_part_its_own(tmp_path):
    inputs = {"a": _sequences(tmp_path, "float32", "a"), "b": _sequences(tmp_path, "int32", "b")}
    shapes = {"a": (None, 2), "b": (None, 2)}
    labels = np.arange(len(LENGTHS))
    ds = npyio.dataset(
        inputs, labels, shape=shapes, batch_size=3, padding_value=({"a": -1.0, "b": 7}, None)
    )
    x, y = next(iter(ds))
    np.testing.assert_array_equal(x["a"].numpy(), [_expected(i, 3, -1.0) for i in range(3)])
    np.testing.assert_array_equal(x["b"].numpy(), [_expected(i, 3, 7) for i in range(3)])
    assert x["b"].dtype.name == "int32" and y.numpy().tolist() == [0, 1, 2]
    # None leaves a part's zeros
    ds = npyio.dataset(inputs, shape=shapes, batch_size=3, padding_value={"a": None, "b": -2})
    x = next(iter(ds))
    np.testing.assert_array_equal(x["a"].numpy(), [_expected(i, 3, 0) for i in range(3)])
    np.testing.assert_array_equal(x["b"].numpy(), [_expected(i, 3, -2) for i in range(3)])


def test_dataset_from_directory_pads_with_it(tmp_path):
    for i, n in enumerate(LENGTHS):
        cls = tmp_path / ("a" if i % 2 else "b")
        cls.mkdir(exist_ok=True)
        np.save(cls / f"{i}.npy", np.full((n,), i + 1, "float32"))
    ds = npyio.dataset_from_directory(
        str(tmp_path),
        shape=(None,),
        batch_size=3,
        shuffle=False,
        padding_value=-1.0,
        verbose=False,
    )
    x, _ = next(iter(ds))
    assert sorted(x.numpy().tolist()) == [[1, 1, 1], [2, -1, -1], [3, 3, -1]]


@pytest.mark.parametrize(
    ("padding_value", "error", "words"),
    [
        (
            ({"a": -1.5, "b": 0}, None),
            ValueError,
            "padding_value for inputs['a'] is not a value of its dtype -- expected int32, got -1.5",
        ),
        (({"a": 2**40, "b": 0}, None), ValueError, "expected int32, got 1099511627776"),
        (({"a": 0, "b": True}, None), ValueError, "padding_value for inputs['b']"),
        (({"a": 0}, None), ValueError, "padding_value: not the structure of the elements"),
        ((0, 0, 0), ValueError, "padding_value: not the structure of the elements"),
        ("-1", TypeError, "padding_value must be a number, None, or a dict or tuple of them"),
    ],
    ids=["float-for-int", "out-of-range", "bool-for-float", "missing-key", "too-long", "str"],
)
def test_a_padding_value_its_part_cannot_hold_is_refused(tmp_path, padding_value, error, words):
    inputs = {"a": _sequences(tmp_path, "int32", "a"), "b": _sequences(tmp_path, "float64", "b")}
    with pytest.raises(error) as info:
        npyio.dataset(
            inputs,
            _labels(tmp_path),
            shape={"a": (None, 2), "b": (None, 2)},
            batch_size=2,
            padding_value=padding_value,
        )
    assert words in str(info.value)


def test_padding_value_is_checked_before_any_file_is_listed(tmp_path):
    with pytest.raises(TypeError, match="padding_value must be"):
        npyio.dataset(str(tmp_path / "missing"), padding_value=object())


def test_padding_value_without_a_variable_part_is_refused(tmp_path):
    xs = _sequences(tmp_path)
    with pytest.raises(ValueError, match="pads nothing: no part has a None dim"):
        npyio.dataset([f"{xs}/0.npy"], batch_size=2, padding_value=-1.0)
