"""`npyio._read`: each backend's capabilities as data, by name (what the planner asks instead
of comparing names), TF-free; an unknown backend is refused naming the known ones."""

from __future__ import annotations

import dataclasses

import pytest

from npyio._read import BACKENDS, CAPABILITIES, Capabilities, capabilities


def test_each_backend_has_its_capabilities():
    assert BACKENDS == ("graph", "tfio", "py_function")
    for name in BACKENDS:
        assert capabilities(name) is CAPABILITIES[name]
    graph, tfio, py = (capabilities(b) for b in BACKENDS)
    assert graph == Capabilities(
        batched=True, python_free=True, members=True, one_get=True, rows=True
    )
    assert tfio.python_free and not (tfio.batched or tfio.members or tfio.rows)
    assert not (py.python_free or py.batched or py.members or py.one_get or py.rows)


def test_capabilities_are_frozen_data():
    with pytest.raises(dataclasses.FrozenInstanceError):
        capabilities("graph").batched = False  # type: ignore[misc]


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="unknown backend 'numpy' -- expected one of graph, tfio"):
        capabilities("numpy")
