"""`npyio._read`: what each backend can do, as data asked by name, TF-free; a backend that does
not serve a plan names the one that reads it instead; an unknown backend is refused naming the
known ones."""

from __future__ import annotations

import io

import numpy as np
import pytest

from npyio._format.header import make_hint
from npyio._format.spec import Spec
from npyio._read import BACKENDS, DEFAULT_BACKEND, capabilities, choose_backend, reads


def spec(shape: tuple[int | None, ...] | None, dtype: str = "<f4", fortran: bool = False) -> Spec:
    """A part's spec whose hint is the header numpy writes for ``dtype`` (its byte order kept)
    and ``shape``."""
    dt = np.dtype(dtype)
    header = None
    if shape is not None and None not in shape:
        buf = io.BytesIO()
        d = {"descr": dt.str, "fortran_order": fortran, "shape": shape}
        np.lib.format.write_array_header_1_0(buf, d)
        header = buf.getvalue()
    return Spec.whole(dt.newbyteorder("="), shape, make_hint(dt, shape, header))


def test_a_fallback_lends_its_capabilities():
    """The native reader reads no ``.npz`` member, but a plan that asks for it still reads
    them: through the graph parser, its fallback. It reads objects of any TensorFlow file
    system itself (``gs://``, ``ram://``), one read each. With ``ignore_errors`` it reads
    batches and says which files it doubts, which the graph parser skips and names."""
    native = capabilities("native")
    assert not native.members and native.reports and native.doubts
    assert not capabilities("graph").doubts
    assert native.remote and native.one_get
    assert native.fallback == "graph"
    assert capabilities("graph").rows and not any(capabilities(b).rows for b in BACKENDS[2:])
    for capability in ("members", "remote", "reports", "one_get", "rows"):
        assert reads("native", capability) and reads("graph", capability)
    assert not reads("py_function", "members")
    assert reads("py_function", "remote")


def test_only_the_readers_that_fetch_batch_bytes_under_a_limit():
    """The graph parser fetches bytes per element and batches files up to its limit; the
    native reader reads a batch of paths in decode, any size; py_function decodes one file at a
    time."""
    graph, native = capabilities("graph"), capabilities("native")
    assert graph.fetches and graph.decodes_batches and graph.batch_limit
    assert not native.fetches and native.decodes_batches and native.batch_limit is None
    py_function = capabilities("py_function")
    assert not (py_function.fetches or py_function.decodes_batches or py_function.python_free)


def test_the_default_backend_is_one_of_them():
    assert DEFAULT_BACKEND in BACKENDS


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    with pytest.raises(
        ValueError, match="unknown backend 'numpy' -- expected one of native, graph"
    ):
        capabilities("numpy")


def test_tfio_is_no_backend_any_more():
    """tensorflow-io's op is a peer of ``npyio bench`` (``--peers tfio``), not a backend: asking
    for it is refused like any unknown name, naming the backends there are."""
    assert BACKENDS == ("native", "graph", "py_function")
    with pytest.raises(
        ValueError, match=r"^unknown backend 'tfio' -- expected one of native, graph, py_function$"
    ):
        capabilities("tfio")


@pytest.mark.parametrize(
    "specs, firsts, ignore_errors, expected",
    [
        ((spec((2,)),), ("/d/0.npy",), False, "native"),
        ((spec((2,)), spec(())), ("/d/0.npy", "/e/0.npy"), False, "native"),
        ((spec((2,)),), ("gs://b/0.npy",), False, "native"),
        ((spec((2,)),), ("ram://d/0.npy",), False, "native"),
        # per-case shapes: local files, whole, each header parsed by the kernel
        ((spec((2,)), spec((None,))), ("/d/0.npy", "/e/0.npy"), False, "native"),
        ((Spec.whole(np.dtype("float32"), None),), ("/d/0.npy",), False, "native"),
        ((spec((None,)),), ("gs://b/0.npy",), False, "graph"),
        ((spec((None,)),), ("/d/0.npy",), True, "graph"),
        ((spec((2,)),), ("/d/0.npy",), True, "native"),
        ((Spec.whole(np.dtype("float32"), (2,)),), ("/d/0.npy",), False, "graph"),  # no hint
        ((spec((2,), ">f4"),), ("/d/0.npy",), False, "graph"),
        ((spec((2,), fortran=True),), ("/d/0.npy",), False, "graph"),
    ],
    ids=[
        "local",
        "pair",
        "gcs",
        "ram",
        "one-side-variable",
        "any-rank",
        "variable-gcs",
        "variable-ignore_errors",
        "ignore_errors",
        "no-hint",
        "byte-swapped",
        "fortran",
    ],
)
def test_a_plan_the_backend_does_not_serve_goes_to_its_fallback(
    specs, firsts, ignore_errors, expected
):
    assert choose_backend("native", specs, firsts, ignore_errors) == expected
    assert choose_backend("graph", specs, firsts, ignore_errors) == "graph"
