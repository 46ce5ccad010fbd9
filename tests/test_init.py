"""The package's facade (``npyio/__init__.py``): every public name resolves, lazily (a name is
imported from its module when first asked for, so ``import npyio`` loads no TensorFlow), and
is listed by ``dir``; an unknown name is an AttributeError."""

from __future__ import annotations

import importlib

import pytest

import npyio
from tests.test_structure import run_without_tf


@pytest.mark.parametrize("name", npyio.__all__)
def test_every_public_name_resolves_and_is_listed(name):
    value = getattr(npyio, name)
    assert value.__module__.startswith("npyio.")
    assert getattr(importlib.import_module(value.__module__), value.__name__) is value
    assert name in dir(npyio)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'npyio' has no attribute 'nope'"):
        npyio.nope  # noqa: B018


def test_names_are_imported_when_first_asked_for():
    """Without TensorFlow, ``inspect`` (TF-free) resolves; ``dataset`` needs TensorFlow, so it
    fails only when asked for."""
    r = run_without_tf(
        "import sys, npyio\n"
        "assert 'npyio._io.header' not in sys.modules\n"
        "npyio.inspect\n"
        "assert 'npyio._io.header' in sys.modules and 'inspect' in vars(npyio)\n"
        "try:\n    npyio.dataset\nexcept ImportError:\n    print('lazy')\n"
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "lazy"
