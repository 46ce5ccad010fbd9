"""``npyio pack`` on ``gs://``: local -> gs:// and gs:// -> gs://, read back by npyio.dataset as
the loose objects read, verified, and refused while incomplete (the GCS fake, tests/gcs)."""

from __future__ import annotations

import io
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from tests.gcs.sandbox import WorkerError

N = 12


@pytest.fixture(scope="module")
def trees(tmp_path_factory, gcs_sandbox) -> tuple[str, str]:
    local = tmp_path_factory.mktemp("pack-tree")
    rng = np.random.default_rng(1)
    for side in ("x", "y"):
        (local / side).mkdir()
    for i in range(N):
        np.save(local / "x" / f"{i:03d}.npy", rng.standard_normal((3, 4)).astype("f4"))
        np.save(local / "y" / f"{i:03d}.npy", np.int64(i))
    prefix = f"pack/{uuid.uuid4().hex[:8]}"
    gcs_sandbox.put_tree(local, prefix)
    return str(local), gcs_sandbox.url(prefix)


PRELUDE = """
import numpy as np, tensorflow as tf, npyio

def drain(ds):
    return [tf.nest.map_structure(lambda t: t.numpy().tolist(), e) for e in ds]
"""


def test_pack_from_local_and_from_gcs_to_gcs_reads_as_the_loose_objects(gcs_worker, trees):
    local, remote = trees
    got = gcs_worker.exec(
        PRELUDE
        + textwrap.dedent(
            f"""
            npyio.pack({local + "/x"!r}, {local + "/y"!r}, out={remote + "/from-local"!r},
                       shard_size=200)
            npyio.pack({remote + "/x"!r}, {remote + "/y"!r}, out={remote + "/from-gcs"!r},
                       shard_size=200)
            kw = dict(batch_size=5, with_paths=True)
            result = {{
                "loose": drain(npyio.dataset({remote + "/x"!r}, {remote + "/y"!r}, **kw)),
                "from-gcs": drain(npyio.dataset({remote + "/from-gcs"!r}, **kw)),
                "from-local": drain(npyio.dataset({remote + "/from-local"!r}, batch_size=5)),
                "local": drain(npyio.dataset({local + "/x"!r}, {local + "/y"!r}, batch_size=5)),
                "shuffled": drain(
                    npyio.dataset({remote + "/from-gcs"!r}, shuffle=True, seed=2, batch_size=None)
                ),
                "listing": sorted(tf.io.gfile.listdir({remote + "/from-gcs"!r})),
            }}
            """
        ),
        timeout=300,
    )
    assert got["from-gcs"] == got["loose"]
    assert got["from-local"] == got["local"]
    assert sorted(y for _, y in got["shuffled"]) == list(range(N))
    assert "npyio-pack.json" in got["listing"] and "inputs-00000-of-00003.npy" in got["listing"]
    assert not [n for n in got["listing"] if n.endswith(".tmp") or n.endswith(".incomplete")]


def test_a_shard_on_gcs_is_a_standard_npy_and_verify_checks_it(gcs, trees):
    _, remote = trees
    prefix = remote.split("/", 3)[3]
    shard = gcs.get(f"{prefix}/from-gcs/inputs-00001-of-00003.npy")
    rows = np.load(io.BytesIO(shard))
    assert rows.shape == (4, 3, 4) and rows.dtype == np.float32
    good = gcs.module("npyio", "verify", f"{remote}/from-gcs", timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "sizes and SHA-256: all good" in good.stdout
    gcs.put(f"{prefix}/from-gcs/inputs-00001-of-00003.npy", shard[:-4] + b"\0\0\0\0")
    bad = gcs.module("npyio", "verify", f"{remote}/from-gcs", timeout=300)
    assert bad.returncode == 1
    assert f"{remote}/from-gcs/inputs-00001-of-00003.npy: damaged shard" in bad.stdout


def test_an_incomplete_pack_on_gcs_is_refused(gcs_worker, gcs_sandbox, trees):
    _, remote = trees
    prefix = remote.split("/", 3)[3]
    gcs_sandbox.put(f"{prefix}/half/npyio-pack.incomplete", b"")
    gcs_sandbox.put(f"{prefix}/half/inputs-00000-of-00002.npy", Path(__file__).read_bytes())
    with pytest.raises(WorkerError, match="incomplete pack"):
        gcs_worker.exec(
            PRELUDE + f"npyio.dataset({remote + '/half'!r}, batch_size=None)", timeout=120
        )
