"""The one read path: every strategy and backend reads a part through `Reader.fetch` and
`Reader.decode`, so the part's limits reach it. The ``.npz`` case that once slipped through:
a member whose header is longer than ``max_header_size``, refused on every strategy."""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from npyio._format.spec import Spec
from npyio._graph.decode import SKIP_PREFIX
from npyio._read.part import GraphReader, exists_in_graph, member_name
from npyio._sources.plan import BATCH_THEN_DECODE, DECODE_THEN_BATCH

N = 4
#: The header numpy writes for these members is 118 bytes of text: over this limit.
LIMIT = 100


@pytest.fixture
def archives(tmp_path):
    root = tmp_path / "npz"
    root.mkdir()
    for i in range(N):
        np.savez(root / f"{i}.npz", x=np.full(3, i, np.float32), y=np.int64(i))
    return str(root)


def hlen(path: str, key: str) -> int:
    with zipfile.ZipFile(path) as zf, zf.open(key + ".npy") as f:
        return npy.read_header(f, path).data_offset - 10


def test_the_member_headers_are_over_the_limit(archives):
    assert hlen(f"{archives}/0.npz", "x") > LIMIT


def test_first_member_over_the_limit_is_refused_when_built(archives):
    message = npy.header_too_large(str(LIMIT), str(hlen(f"{archives}/0.npz", "x")))
    with pytest.raises(npyio.NpyFormatError, match=re.escape(f"0.npz[x]: {message}")):
        npyio.dataset(archives, key="x", label_key="y", max_header_size=LIMIT)


@pytest.mark.parametrize(
    ("kwargs", "strategy"),
    [
        ({"batch_size": 2, "shape": (3,)}, BATCH_THEN_DECODE),
        ({"batch_size": 2, "shape": (None,)}, DECODE_THEN_BATCH),
        ({"shape": (3,), "batch_size": None}, DECODE_THEN_BATCH),
    ],
    ids=["batch-then-decode", "decode-then-batch-padded", "decode-then-batch"],
)
def test_member_over_the_limit_is_refused_on_every_strategy(archives, kwargs, strategy):
    from npyio._pipeline.options import DatasetOptions
    from npyio._sources.plan import plan_dataset

    args = dict(key="x", dtype="float32", max_header_size=LIMIT, **kwargs)
    assert plan_dataset(archives, options=DatasetOptions.from_arguments(args)).strategy == strategy
    ds = npyio.dataset(archives, **args)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"0\.npz\[x\]: header is too large"):
        ds.reduce(np.int64(0), lambda n, _: n + 1)


def test_member_over_the_limit_is_skipped_and_named_with_ignore_errors(archives, capfd):
    ds = npyio.dataset(
        archives,
        key="x",
        dtype="float32",
        shape=(3,),
        max_header_size=LIMIT,
        ignore_errors=True,
        batch_size=None,
    )
    assert int(ds.reduce(np.int64(0), lambda n, _: n + 1)) == 0
    err = capfd.readouterr().err
    for i in range(N):
        assert f"{SKIP_PREFIX}{archives}/{i}.npz[x]: header is too large" in err


def test_members_at_the_limit_are_delivered_on_every_strategy(archives):
    limit = hlen(f"{archives}/0.npz", "x")
    for kwargs in (
        {"batch_size": 2},
        {"batch_size": 2, "shape": (None,)},
        {"ignore_errors": True, "batch_size": None},
    ):
        ds = npyio.dataset(archives, key="x", label_key="y", max_header_size=limit, **kwargs)
        ys = [int(v) for _, y in ds for v in np.atleast_1d(y.numpy())]
        assert ys == list(range(N)), kwargs


def test_graph_reader_fetches_a_member_named_path_key(archives):
    path = tf.constant(f"{archives}/1.npz")
    spec = Spec.whole(np.dtype("float32"), (3,), member="x")
    fetched = GraphReader().fetch(path, spec)
    assert fetched.name.numpy().decode() == f"{archives}/1.npz[x]"
    assert fetched.verdict == ()
    np.testing.assert_array_equal(GraphReader().decode([fetched], [spec])[0], [1, 1, 1])


def test_reporting_fetch_gives_a_verdict_instead_of_raising(tmp_path):
    missing = tf.constant(str(tmp_path / "missing.npy"))
    spec = Spec.whole(np.dtype("float32"), (3,))

    @tf.function
    def verdict():
        return GraphReader(report=True).fetch(missing, spec).verdict

    ok, message = verdict()
    assert not bool(ok)
    assert message.numpy().decode() == f"{tmp_path / 'missing.npy'}: no such file or directory"


def test_exists_in_graph_and_member_name(tmp_path):
    here = tmp_path / "a.npy"
    np.save(here, np.zeros(1))
    assert bool(exists_in_graph(tf.constant(str(here))))
    assert not bool(exists_in_graph(tf.constant(str(tmp_path / "b.npy"))))
    assert bool(exists_in_graph(tf.constant(str(tmp_path / "b[1].npy"))))  # a pattern: unknown
    assert member_name(tf.constant("p.npz"), "x").numpy() == b"p.npz[x]"


def test_buffer_archive_decodes_with_the_member_name():
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^<bytes>\[z\]: no such member"):
        npyio.decode_npz(buf.getvalue(), "z", "int64")
