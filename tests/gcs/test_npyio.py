"""Every entry point of npyio on ``gs://``, against TensorFlow's own GCS client and the fake,
bit for bit what the same calls give on the same files read locally.

Each check runs one snippet twice: here, with ``ROOT`` a local directory, and in a worker inside
the sandbox, with ``ROOT`` the same tree uploaded to ``gs://``. The snippet sets ``result``;
paths in it are compared with their root replaced.
"""

from __future__ import annotations

import io
import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.gcs.sandbox import GcsSandbox, Worker, WorkerError

N = 12

#: Helpers both runs have: ``drain(ds)`` (every element, as numpy, nested like the element).
PRELUDE = """
import numpy as np, tensorflow as tf, npyio
tf.random.set_seed(1234)  # the same global seed here and in the worker: seeded orders agree

def drain(ds):
    return [tf.nest.map_structure(lambda t: t.numpy(), e) for e in ds]

def error(call):
    try:
        call()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None
"""


def make_tree(root: Path) -> None:
    """Pairs, class folders, nested sources, archives, rows, a corrupt pair and an empty dir."""
    rng = np.random.default_rng(0)
    for i in range(N):
        name = f"{i:03d}.npy"
        for side, value in (
            ("x", rng.standard_normal((3, 4)).astype(">f4" if i % 2 else "<f4")),
            ("y", np.int64(i)),
            ("m", rng.integers(0, 255, (3, 4), dtype=np.uint8)),
        ):
            (root / side).mkdir(parents=True, exist_ok=True)
            np.save(root / side / name, value)
        cls = "cat" if i % 3 else "dog"
        (root / "classes" / cls).mkdir(parents=True, exist_ok=True)
        np.save(root / "classes" / cls / name, rng.standard_normal(5).astype("f8"))
        (root / "npz").mkdir(exist_ok=True)
        np.savez_compressed(root / "npz" / f"{i:03d}.npz", x=np.full(3, i, "i2"), y=np.int64(i))
    np.save(root / "rows_x.npy", rng.standard_normal((1000, 3)).astype("f4"))
    np.save(root / "rows_y.npy", np.arange(1000, dtype="i8"))
    (root / "bad_x").mkdir()
    (root / "bad_y").mkdir()
    for i in range(4):
        np.save(root / "bad_x" / f"{i}.npy", np.full(2, i, "f4"))
        np.save(root / "bad_y" / f"{i}.npy", np.int64(i))
    (root / "bad_x" / "2.npy").write_bytes(b"not a .npy file")


@pytest.fixture(scope="module")
def trees(tmp_path_factory, gcs_sandbox: GcsSandbox) -> tuple[str, str]:
    """The same tree, local and on gs:// (under a prefix of its own)."""
    local = tmp_path_factory.mktemp("tree")
    make_tree(local)
    prefix = f"trees/{uuid.uuid4().hex[:8]}"
    gcs_sandbox.put_tree(local, prefix)
    return str(local), gcs_sandbox.url(prefix)


def run_local(code: str, root: str) -> Any:
    namespace: dict[str, Any] = {"ROOT": root}
    exec(PRELUDE + textwrap.dedent(code), namespace)
    return namespace.get("result")


def run_remote(worker: Worker, code: str, root: str) -> Any:
    return worker.exec(f"ROOT = {root!r}\n" + PRELUDE + textwrap.dedent(code), timeout=300)


def normalised(value: Any, root: str) -> Any:
    """``value`` with numpy arrays as (dtype, shape, bytes) and ``root`` cut from strings."""
    if isinstance(value, dict):
        return {k: normalised(v, root) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalised(v, root) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SUO":
            return [normalised(v, root) for v in value.tolist()]
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return normalised(np.asarray(value), root)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value.replace(root, "ROOT")
    return value


def same_both_ways(worker: Worker, trees: tuple[str, str], code: str) -> Any:
    """Runs ``code`` locally and on gs://; asserts the results agree; returns the local one."""
    local, remote = trees
    here = run_local(code, local)
    there = run_remote(worker, code, remote)
    assert normalised(there, remote) == normalised(here, local)
    return here


ENTRY_POINTS = {
    "directories": "result = drain(npyio.dataset(f'{ROOT}/x', f'{ROOT}/y', batch_size=5))",
    "globs": """
        result = drain(npyio.dataset(f'{ROOT}/x/00*.npy', f'{ROOT}/y/00*.npy', batch_size=None))
    """,
    "lists": """
        xs = [f'{ROOT}/x/{i:03d}.npy' for i in (3, 1, 2)]
        ys = [f'{ROOT}/y/{i:03d}.npy' for i in (3, 1, 2)]
        result = drain(npyio.dataset(xs, ys, batch_size=2))
    """,
    "dict_sources": """
        ds = npyio.dataset({'image': f'{ROOT}/x', 'mask': f'{ROOT}/m'}, f'{ROOT}/y', batch_size=4)
        result = drain(ds)
    """,
    "label_values": "result = drain(npyio.dataset(f'{ROOT}/x', np.arange(12) * 10, batch_size=4))",
    "npz_key": "result = drain(npyio.dataset(f'{ROOT}/npz', key='x', label_key='y', batch_size=3))",
    "from_directory": """
        ds = npyio.dataset_from_directory(f'{ROOT}/classes', batch_size=4, shuffle=False,
                                          verbose=False)
        result = [ds.class_names, ds.file_paths, drain(ds)]
    """,
    "rows": """
        result = drain(npyio.rows(f'{ROOT}/rows_x.npy', f'{ROOT}/rows_y.npy', batch_size=128))
    """,
    "rows_shuffled_sharded": """
        ds = npyio.rows(f'{ROOT}/rows_x.npy', f'{ROOT}/rows_y.npy', batch_size=64,
                        shuffle=True, shuffle_buffer=100, seed=3, shard=(2, 1))
        result = drain(ds)
    """,
    "read_npy": """
        result = [npyio.read_npy(f'{ROOT}/x/001.npy', 'float32', (3, 4)).numpy(),
                  npyio.read_npy(f'{ROOT}/y/002.npy', tf.int64).numpy(),
                  npyio.inspect(f'{ROOT}/x/001.npy').shape]
    """,
    "read_npz": """
        result = [npyio.read_npz(f'{ROOT}/npz/004.npz', 'x', 'int16').numpy(),
                  npyio.read_npz(f'{ROOT}/npz/004.npz', 'y.npy', tf.int64).numpy()]
    """,
    "with_paths_shuffle_shard": """
        ds = npyio.dataset(f'{ROOT}/x', f'{ROOT}/y', batch_size=3, shuffle=True, seed=7,
                           shard=(2, 1), with_paths=True)
        result = [drain(ds), drain(ds)]
    """,
    "validation_split": """
        train, val = npyio.dataset(f'{ROOT}/x', f'{ROOT}/y', validation_split=0.25,
                                   subset='both', shuffle=True, seed=1, with_paths=True,
                                   batch_size=None)
        result = [drain(train), drain(val)]
    """,
}


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_entry_point_on_gcs_is_bit_exact(gcs_worker, trees, name):
    result = same_both_ways(gcs_worker, trees, ENTRY_POINTS[name])
    assert result, "nothing was delivered"


def test_ignore_errors_names_the_object_it_skips(gcs, trees):
    _, remote = trees
    code = PRELUDE + textwrap.dedent(
        f"""
        import json
        ds = npyio.dataset('{remote}/bad_x', '{remote}/bad_y', ignore_errors=True, batch_size=None)
        print(json.dumps([int(y) for _, y in ds]))
        """
    )
    run = gcs.python(code, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.splitlines()[-1]) == [0, 1, 3]
    assert f"npyio: skipping {remote}/bad_x/2.npy: not a .npy file" in run.stderr


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "npyio.dataset(f'{ROOT}/nowhere', f'{ROOT}/y', batch_size=None)",
            "inputs: '{ROOT}/nowhere' does not exist",
        ),
        (
            "npyio.dataset(f'{ROOT}/x', f'{ROOT}/nope/*.npy', batch_size=None)",
            "labels: glob '{ROOT}/nope/*.npy'",
        ),
        (
            "npyio.dataset([f'{ROOT}/x/999.npy', f'{ROOT}/x/001.npy'], batch_size=None)",
            "{ROOT}/x/999.npy: no such",
        ),
        ("npyio.dataset_from_directory(f'{ROOT}/none')", "directory: '{ROOT}/none' does not exist"),
        (
            "npyio.rows(f'{ROOT}/rows_missing.npy', batch_size=None)",
            "'{ROOT}/rows_missing.npy' does not exist",
        ),
    ],
    ids=["missing-dir", "empty-glob", "missing-file", "missing-classes", "missing-rows"],
)
def test_missing_objects_and_directories_are_named_when_built(gcs_worker, trees, code, message):
    _, remote = trees
    with pytest.raises(WorkerError) as caught:
        run_remote(gcs_worker, code, remote)
    assert message.replace("{ROOT}", remote) in str(caught.value)


def test_a_later_missing_object_of_a_list_is_named_when_read(gcs_worker, trees):
    """Only the first file of a list is read when the dataset is built (one request, not one
    per file); a later one that is missing is named when the pipeline reaches it."""
    _, remote = trees
    code = "drain(npyio.dataset([f'{ROOT}/x/001.npy', f'{ROOT}/x/999.npy'], batch_size=None))"
    with pytest.raises(WorkerError) as caught:
        run_remote(gcs_worker, code, remote)
    assert caught.value.type_name == "NotFoundError"
    assert f"{remote}/x/999.npy" in str(caught.value)


def test_inspect_and_verify_commands(gcs, trees):
    _, remote = trees
    commands = [
        ["verify", f"{remote}/x", f"{remote}/y"],
        ["verify", f"{remote}/bad_x", f"{remote}/bad_y"],
        ["inspect", "--json", f"{remote}/x/001.npy"],
    ]
    # They only read, so they run at once (each process mostly imports TensorFlow)
    npyio = [gcs.python_executable, "-m", "npyio"]
    children = [gcs.spawn(npyio + argv, timeout=300) for argv in commands]
    good, bad, shown = (child.wait() for child in children)
    assert good is not None and bad is not None and shown is not None
    assert good.returncode == 0, good.stdout + good.stderr
    assert "verified 24 files" in good.stdout
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"{remote}/bad_x/2.npy: not a .npy file" in bad.stdout
    assert shown.returncode == 0, shown.stderr
    (entry,) = json.loads(shown.stdout)["files"]
    assert entry["shape"] == [3, 4] and entry["dtype"] == "float32"
    assert entry["descr"] == ">f4"


def test_bench_measures_a_sample_of_the_users_objects(gcs, trees):
    """``npyio bench INPUTS LABELS`` on gs://: a bounded sample, every pipeline, the pack."""
    _, remote = trees
    run = gcs.module(
        "npyio", "bench", f"{remote}/x", f"{remote}/y", "--sample", "5", "--rounds", "1",
        "--batch-size", "2", "--json", timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    doc = json.loads(run.stdout)
    assert (doc["sample"], doc["total"], doc["batch_size"]) == (5, N, 2)
    assert len(doc["results"]) >= 4 and all(r["samples"] == 5 for r in doc["results"])
    assert doc["bound"] in ("files", "bytes") and doc["suggestions"]


def test_npyio_reads_what_tensorflow_wrote(gcs_worker, gcs_sandbox):
    """A dataset written through TensorFlow's own GCS client (resumable uploads) reads back."""
    prefix = gcs_sandbox.url(f"written/{uuid.uuid4().hex[:8]}")
    got = gcs_worker.exec(
        PRELUDE
        + textwrap.dedent(
            f"""
            import io
            for i in range(3):
                buf = io.BytesIO(); np.save(buf, np.full((2,), i, 'u2'))
                with tf.io.gfile.GFile('{prefix}/x/' + str(i) + '.npy', 'wb') as f:
                    f.write(buf.getvalue())
            result = [x.tolist() for x in drain(npyio.dataset('{prefix}/x', batch_size=None))]
            """
        )
    )
    assert got == [[0, 0], [1, 1], [2, 2]]


def test_a_local_array_and_its_gcs_copy_decode_alike(gcs_worker, gcs_sandbox):
    name = f"one/{uuid.uuid4().hex[:8]}.npy"
    buf = io.BytesIO()
    np.save(buf, np.arange(24, dtype=">c8").reshape(2, 3, 4), allow_pickle=False)
    gcs_sandbox.put(name, buf.getvalue())
    got = gcs_worker.exec(
        f"import npyio\nresult = npyio.read_npy({gcs_sandbox.url(name)!r}, 'complex64').numpy()"
    )
    np.testing.assert_array_equal(got, np.arange(24, dtype="c8").reshape(2, 3, 4))
