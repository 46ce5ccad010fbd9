"""MultiWorkerMirroredStrategy over npyio: two worker processes on localhost (TF_CONFIG), each
feeding its replica with ``npyio.dataset(..., shard=ctx)``: every sample exactly once per epoch
across the workers, shuffled, over two epochs, with a file count that two shards do not divide.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

from tests._service import ROOT, free_port
from tests.sources.test_dataset import make_pairs

N = 37  # odd: the shards hold 19 and 18 files, 10 and 9 batches of 2
GLOBAL_BATCH = 4
EPOCHS = 2

WORKER = """
import json, sys
import tensorflow as tf
import npyio
xs, ys, global_batch, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
strategy = tf.distribute.MultiWorkerMirroredStrategy()

def dataset_fn(ctx):
    return npyio.dataset(xs, ys, shard=ctx, shuffle=True, seed=5,
                         batch_size=ctx.get_per_replica_batch_size(global_batch))

dist = strategy.distribute_datasets_from_function(dataset_fn)

@tf.function
def step(x, y):
    def replica_fn(x, y):
        # A collective per step: the workers must step together, uneven shards included.
        ctx = tf.distribute.get_replica_context()
        return ctx.all_reduce("sum", tf.shape(y, out_type=tf.int64)[0])
    return strategy.run(replica_fn, args=(x, y))

out = []
for _ in range(epochs):
    ids, steps, seen_by_all = [], 0, 0
    for x, y in dist:
        for xr, yr in zip(strategy.experimental_local_results(x),
                          strategy.experimental_local_results(y)):
            xr, yr = xr.numpy(), yr.numpy()
            assert (xr == yr[:, None]).all(), "misaligned"  # (batch, 2) inputs, batch may be 0
            ids.extend(int(v) for v in yr)
        seen_by_all += int(strategy.experimental_local_results(step(x, y))[0])
        steps += 1
    out.append({"ids": ids, "steps": steps, "seen_by_all": seen_by_all})
print("result", json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return make_pairs(str(tmp_path_factory.mktemp("multiworker")), n=N, shape=(2,))


@pytest.mark.slow
def test_multi_worker_mirrored_strategy_delivers_each_sample_once_per_epoch(pairs, tmp_path):
    addresses = [f"localhost:{free_port()}" for _ in range(2)]
    procs: list[subprocess.Popen] = []
    logs = [open(tmp_path / f"worker-{i}.log", "w") for i in range(2)]  # noqa: SIM115
    try:
        for index in range(2):
            tf_config = {
                "cluster": {"worker": addresses},
                "task": {"type": "worker", "index": index},
            }
            env = {
                **os.environ,
                "TF_CONFIG": json.dumps(tf_config),
                "TF_CPP_MIN_LOG_LEVEL": "2",
                "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
            }
            args = [*pairs, str(GLOBAL_BATCH), str(EPOCHS)]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", WORKER, *args],
                    stdout=subprocess.PIPE,
                    stderr=logs[index],
                    text=True,
                    env=env,
                    start_new_session=True,
                )
            )
        results = []
        for index, proc in enumerate(procs):
            # MWMS needs both workers up: one that waits without end fails here.
            out, _ = proc.communicate(timeout=240)
            log = (tmp_path / f"worker-{index}.log").read_text()[-3000:]
            assert proc.returncode == 0, f"worker {index}:\n{log}"
            line = [x for x in out.splitlines() if x.startswith("result ")][-1]
            results.append(json.loads(line.split(" ", 1)[1]))
    finally:
        for proc in procs:
            if proc.returncode is None:  # not reaped yet, so its id is still its own
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for log in logs:
            log.close()

    for epoch in range(EPOCHS):
        first, second = (r[epoch]["ids"] for r in results)
        assert first and second, "a worker got nothing"
        # exactly once across the workers, the odd file included
        assert Counter(first) + Counter(second) == Counter(range(N)), epoch
        assert {len(first), len(second)} == {N // 2, N - N // 2}
        # the workers stepped together (the shorter shard's worker got an empty last batch)
        # and the all-reduce over every step saw every sample
        assert results[0][epoch]["steps"] == results[1][epoch]["steps"]
        assert results[0][epoch]["seen_by_all"] == results[1][epoch]["seen_by_all"] == N
    for r in results:
        # the same files per worker each epoch (sharding is by file), in a new order
        assert set(r[0]["ids"]) == set(r[1]["ids"])
        assert r[0]["ids"] != r[1]["ids"], "reshuffle_each_iteration should give a new order"
