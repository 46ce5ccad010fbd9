"""`npyio._pipeline.structure`: nested sources (a dict or tuple of sources, one part per leaf),
their template (`structure_of`), leaves in order and back (`flatten`, `unflatten`), the names errors
use, per-part arguments, and labels given as values. Plain Python."""

from __future__ import annotations

import numpy as np
import pytest

from npyio._pipeline.structure import (
    LEAF,
    flatten,
    label_values,
    leaf_names,
    per_part,
    structure_of,
    unflatten,
)


def test_structure_of_tells_one_source_from_many(tmp_path):
    (tmp_path / "a").mkdir()
    a = str(tmp_path / "a")
    assert structure_of("x/*.npy") == LEAF
    assert structure_of(["x/0.npy", "x/1.npy"]) == LEAF  # a list of files is one source
    assert structure_of(("x/0.npy", "x/1.npy")) == LEAF  # so is a tuple of files
    assert structure_of((a, "y/*.npy")) == (LEAF, LEAF)  # a tuple of directories is not
    assert structure_of(("x/*.npy", "y/*.npy")) == (LEAF, LEAF)
    assert structure_of({"b": a, "a": (a, ["f.npy"])}) == {"a": (LEAF, LEAF), "b": LEAF}
    assert structure_of(()) == LEAF


def test_flatten_and_pack_are_inverse():
    tmpl = {"a": (LEAF, LEAF), "b": LEAF}
    value = {"b": 3, "a": [1, 2]}
    assert flatten(tmpl, value) == [1, 2, 3]
    assert unflatten(tmpl, [1, 2, 3]) == {"a": (1, 2), "b": 3}
    assert flatten(LEAF, "x") == ["x"] and unflatten(LEAF, ["x"]) == "x"


def test_flatten_refuses_another_structure():
    with pytest.raises(ValueError, match=r"expected a dict with keys \['a', 'b'\]"):
        flatten({"a": LEAF, "b": LEAF}, {"a": 1})
    with pytest.raises(ValueError, match="expected 2 items, got"):
        flatten((LEAF, LEAF), (1, 2, 3))


def test_leaf_names():
    tmpl = {"image": LEAF, "extra": (LEAF, LEAF)}
    assert leaf_names(tmpl, "inputs") == [
        "inputs['image']",
        "inputs['extra'][0]",
        "inputs['extra'][1]",
    ]
    assert leaf_names(LEAF, "labels") == ["labels"]


def test_per_part_takes_one_value_for_all_or_the_structure():
    tmpl = (LEAF, LEAF)
    assert per_part(LEAF, (2, 3), "shape") == [(2, 3)]
    assert per_part(tmpl, "float32", "dtype") == ["float32", "float32"]
    assert per_part(tmpl, ("float32", "int8"), "dtype") == ["float32", "int8"]
    assert per_part(tmpl, ((2,), None), "shape") == [(2,), None]  # one shape per part
    assert per_part(tmpl, (2, 3), "shape") == [(2, 3), (2, 3)]  # one shape for both
    assert per_part({"a": LEAF, "b": LEAF}, {"b": 1, "a": 2}, "shape") == [2, 1]


def test_label_values():
    assert label_values(["y/0.npy", "y/1.npy"]) is None
    assert label_values("y/*.npy") is None
    assert label_values(np.array(["a", "b"])) is None
    assert label_values([0, 1, 1]).tolist() == [0, 1, 1]
    assert label_values(np.arange(3.0)).dtype == np.float64
    assert label_values([[0.5, 1.0], [1.5, 2.0]]).shape == (2, 2)
    with pytest.raises(TypeError, match="labels: expected numbers"):
        label_values([1, "a"])
