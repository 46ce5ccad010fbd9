"""Scaling out and resuming: tf.data service, tf.distribute, checkpoints, save/snapshot/cache.

All of these need the pipeline to serialize to a graph, which npyio's does and the
py_function pipeline's does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._graph_util import graph_def
from tests.sources.test_dataset import ids_of, make_pairs

N = 37

# A tf.data service worker that only has TensorFlow: importing npyio there would fail.
BARE_WORKER = """
import sys
sys.modules["npyio"] = None  # prove the worker never needs npyio
import tensorflow as tf
service = tf.data.experimental.service
worker = service.WorkerServer(service.WorkerConfig(dispatcher_address=sys.argv[1]))
print("ready", flush=True)
worker.join()
"""
# A worker as docs/scaling.md says to start one for the native reader: TensorFlow, then npyio,
# whose import registers the reader's op (built once by the client, in the cache they share).
WORKER = BARE_WORKER.replace(
    'sys.modules["npyio"] = None  # prove the worker never needs npyio\nimport tensorflow as tf',
    "import tensorflow as tf\nimport npyio",
)


def _python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return make_pairs(str(tmp_path_factory.mktemp("scaling")), n=N)


def _workers(code: str, count: int):
    """A dispatcher in this process and ``count`` workers running ``code`` in processes of
    their own: yields the dispatcher's target."""
    dispatcher = tf.data.experimental.service.DispatchServer(
        tf.data.experimental.service.DispatcherConfig(port=0)
    )
    address = dispatcher.target.split("://")[1]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", code, address],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        for _ in range(count)
    ]
    try:
        for w in workers:
            assert w.stdout is not None and w.stdout.readline().strip() == "ready"
        yield dispatcher.target
    finally:
        for w in workers:
            w.kill()
            w.wait()
            if w.stdout is not None:
                w.stdout.close()
        dispatcher._stop()


@pytest.fixture(scope="module")
def service(pairs):
    """Two workers that import npyio (so the native reader's op is registered there)."""
    assert npyio.dataset(*pairs, batch_size=4)  # builds the op, if needed, before they start
    yield from _workers(WORKER, 2)


@pytest.fixture(scope="module")
def bare_service():
    """One worker that has TensorFlow only, never npyio."""
    yield from _workers(BARE_WORKER, 1)


def _distribute(ds: tf.data.Dataset, mode: str, target: str) -> tf.data.Dataset:
    return ds.apply(tf.data.experimental.service.distribute(processing_mode=mode, service=target))


def test_service_distributed_epoch_delivers_each_sample_once(pairs, service):
    ds = npyio.dataset(*pairs, batch_size=4, shuffle=True, seed=0)
    assert Counter(ids_of(_distribute(ds, "distributed_epoch", service))) == Counter(range(N))


@pytest.mark.parametrize("shuffle", [False, True])
def test_service_distributed_epoch_splits_random_crops(pairs, service, shuffle):
    """Random windows keep the epoch splittable: each sample once over both workers (a source
    built inside a flat_map would be read whole by each of them)."""
    ds = npyio.dataset(*pairs, batch_size=4, crop=(2,), label_crop=None, seed=0, shuffle=shuffle)
    assert ds.element_spec[0].shape.as_list() == [None, 2, 3]
    assert Counter(ids_of(_distribute(ds, "distributed_epoch", service))) == Counter(range(N))


@pytest.fixture(scope="module")
def kinds(pairs, tmp_path_factory):
    """Every source kind holding the same N samples (x filled with its id, y the id): a
    function per kind, of extra options, to its dataset."""
    root = tmp_path_factory.mktemp("kinds")
    npyio.pack(*pairs, out=str(root / "pack"), shard_size=10)  # shards of 10 rows: 4 of them
    for i in range(N):
        np.savez(root / f"{i:04d}.npz", x=np.full((4, 3), i, np.float32), y=np.int64(i))
    ids = np.arange(N)
    for name, part in (("x", np.repeat(ids, 12).reshape(N, 4, 3).astype(np.float32)), ("y", ids)):
        for j, (a, e) in enumerate(((0, 20), (20, N))):  # two files, as shards of rows
            np.save(root / f"rows-{name}{j}.npy", part[a:e])
    rows = [[str(root / f"rows-{name}{j}.npy") for j in range(2)] for name in "xy"]
    return {
        "files": lambda **kw: npyio.dataset(*pairs, **kw),
        "npz": lambda **kw: npyio.dataset(
            str(root / "*.npz"), key="x", label_key="y", backend="graph", **kw
        ),
        "crop": lambda **kw: npyio.dataset(*pairs, crop=(2,), label_crop=None, **kw),
        "pack": lambda **kw: npyio.dataset(str(root / "pack"), **kw),
        "rows": lambda **kw: npyio.rows(*rows, **kw),
        "rows-by-cycles": lambda **kw: npyio.rows(*rows, shuffle_buffer=8, **kw),
    }


@pytest.mark.parametrize(
    "kind, shuffle",
    [(kind, shuffle) for kind in ("files", "npz", "crop", "pack", "rows") for shuffle in (0, 1)]
    + [("rows-by-cycles", 1)],
)
def test_service_distributed_epoch_splits_every_kind(kinds, service, kind, shuffle):
    """Every source kind's samples come from one index stream that the service splits: each
    sample once over the two workers (packs and rows were read whole by each, or failed). A
    shuffle of rows by cycles is one split, read whole by one worker."""
    ds = kinds[kind](batch_size=4, shuffle=bool(shuffle), seed=0)
    assert Counter(ids_of(_distribute(ds, "distributed_epoch", service))) == Counter(range(N))


def test_service_runs_with_paths(pairs, service):
    """with_paths adds only graph ops: the workers run it, and each element's path names its
    own file."""
    ds = npyio.dataset(*pairs, batch_size=4, shuffle=True, seed=0, with_paths=True)
    seen = Counter()
    for x, y, paths in _distribute(ds, "distributed_epoch", service):
        for i, p in zip(y.numpy().tolist(), paths.numpy()):
            assert (
                p.decode().endswith(f"/{i:04d}.npy")
                and int(x.numpy()[y.numpy() == i][0, 0, 0]) == i
            )
            seen[i] += 1
    assert seen == Counter(range(N))


def test_workers_without_npyio_run_the_graph_path_only(pairs, bare_service):
    """A worker that has TensorFlow only runs ``backend="graph"`` pipelines; a pipeline read by
    the native reader needs its op, registered by ``import npyio`` (docs/scaling.md)."""
    ds = npyio.dataset(*pairs, batch_size=4, shuffle=True, seed=0, backend="graph")
    assert Counter(ids_of(_distribute(ds, "distributed_epoch", bare_service))) == Counter(range(N))
    native = npyio.dataset(*pairs, batch_size=4)
    assert _uses_native(native)  # the default, for local files of one shape
    with pytest.raises(tf.errors.OpError, match="NpyioBatchDataset"):
        ids_of(_distribute(native, "distributed_epoch", bare_service))


def _uses_native(ds: tf.data.Dataset) -> bool:
    """Whether ``ds``'s graph holds the native reader's batch source."""
    return "NpyioBatchDataset" in str(graph_def(ds))


def test_service_parallel_epochs_gives_each_worker_everything(pairs, service):
    ds = npyio.dataset(*pairs, batch_size=4)
    seen = Counter(ids_of(_distribute(ds, "parallel_epochs", service)))
    assert seen == Counter({i: 2 for i in range(N)})


def test_service_refuses_the_py_function_pipeline(pairs, service):
    # The py_function's Python callable lives only in this process: the pipeline cannot be
    # shipped to the workers. This is why npyio exists.
    ds = npyio.dataset(*pairs, batch_size=4, backend="py_function")
    with pytest.raises(tf.errors.OpError) as info:
        ids_of(_distribute(ds, "parallel_epochs", service))
    assert "PyFunc" in str(info.value) or "py_function" in str(info.value).lower()


DISTRIBUTE = """
import json, sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import npyio
xs, ys, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

def ids(dist):
    per_replica = [[], []]
    for _ in range(2):  # two epochs
        for x, y in dist:
            for r, (xr, yr) in enumerate(zip(strategy.experimental_local_results(x),
                                             strategy.experimental_local_results(y))):
                assert (xr.numpy()[:, 0, 0] == yr.numpy()).all()
                per_replica[r].extend(int(v) for v in yr.numpy())
    return per_replica

def fn(ctx):
    return npyio.dataset(xs, ys, shard=ctx, shuffle=True, seed=1,
                         batch_size=ctx.get_per_replica_batch_size(4))

from_function = ids(strategy.distribute_datasets_from_function(fn))
whole = ids(strategy.experimental_distribute_dataset(
    npyio.dataset(xs, ys, batch_size=4, shuffle=True, seed=1)))
print(json.dumps({"from_function": from_function, "whole": whole}))
"""


def test_mirrored_strategy_two_replicas(pairs):
    out = _python(DISTRIBUTE, *pairs, str(N), timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for how in ("from_function", "whole"):
        first, second = result[how]
        assert first and second, f"{how}: a replica got nothing"
        # two epochs: every file twice in all
        assert Counter(first) + Counter(second) == Counter({i: 2 for i in range(N)}), how
    # distribute_datasets_from_function hands each batch to one replica: disjoint per epoch
    first, second = result["from_function"]
    half = len(first) // 2, len(second) // 2
    assert not set(first[: half[0]]) & set(second[: half[1]])


RESUME = """
import json, sys
import tensorflow as tf
import npyio
xs, ys, ckpt, mode, take = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ds = npyio.dataset(xs, ys, batch_size=3, shuffle=True, seed=11, num_parallel_calls=4)
it = iter(ds)
checkpoint = tf.train.Checkpoint(iterator=it)
def drain(it):
    return [int(v) for _, y in it for v in y.numpy()]
if mode == "save":
    first = [int(v) for _ in range(take) for v in next(it)[1].numpy()]
    checkpoint.write(ckpt)
    rest = drain(it)
    print(json.dumps({"first": first, "rest": rest}))
else:
    checkpoint.read(ckpt).assert_consumed()
    print(json.dumps({"rest": drain(it)}))
"""


def test_checkpoint_resumes_mid_epoch_in_a_new_process(pairs, tmp_path):
    ckpt = str(tmp_path / "ckpt")
    saved = _python(RESUME, *pairs, ckpt, "save", "5")
    assert saved.returncode == 0, saved.stderr[-3000:]
    before = json.loads(saved.stdout.strip().splitlines()[-1])
    restored = _python(RESUME, *pairs, ckpt, "restore", "0")
    assert restored.returncode == 0, restored.stderr[-3000:]
    after = json.loads(restored.stdout.strip().splitlines()[-1])
    assert len(before["first"]) == 15
    assert after["rest"] == before["rest"]
    assert Counter(before["first"] + after["rest"]) == Counter(range(N))


def test_save_and_load(pairs, tmp_path):
    ds = npyio.dataset(*pairs, batch_size=4)
    assert _uses_native(ds)
    ds.save(str(tmp_path / "saved"))
    loaded = tf.data.Dataset.load(str(tmp_path / "saved"))
    assert loaded.element_spec == ds.element_spec
    assert ids_of(loaded) == ids_of(ds) == list(range(N))


def test_snapshot_and_cache(pairs, tmp_path):
    ds = npyio.dataset(*pairs, batch_size=4)
    snap = ds.snapshot(str(tmp_path / "snap"))
    assert ids_of(snap) == ids_of(snap) == list(range(N))
    assert os.listdir(tmp_path / "snap")
    cached = ds.cache(str(tmp_path / "cache"))
    assert ids_of(cached) == ids_of(cached) == list(range(N))
    assert any(name.startswith("cache") for name in os.listdir(tmp_path))


def test_dataset_graph_serializes_without_python_state(pairs):
    # The whole pipeline, paths and shapes included, is a graph: serialize it and rebuild it
    # from the graph alone.
    ds = npyio.dataset(*pairs, batch_size=4, shuffle=True, seed=2)
    policy = tf.data.experimental.ExternalStatePolicy.FAIL
    graph = ds._as_serialized_graph(external_state_policy=policy)
    rebuilt = tf.data.experimental.from_variant(
        tf.raw_ops.DatasetFromGraph(graph_def=graph), ds.element_spec
    )
    assert Counter(ids_of(rebuilt)) == Counter(range(N))


@pytest.mark.parametrize("shuffle", [False, True])
def test_service_distributed_epoch_splits_several_crops_of_each_file(pairs, service, shuffle):
    """crops_per_file units come from the same index stream: each file exactly k times over
    the two workers, each crop once."""
    ds = npyio.dataset(
        *pairs, batch_size=4, crop=(2,), label_crop=None, crops_per_file=3, seed=0, shuffle=shuffle
    )
    got = Counter(ids_of(_distribute(ds, "distributed_epoch", service)))
    assert got == Counter(list(range(N)) * 3)
