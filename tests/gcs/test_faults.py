"""Faults of the store, as a user of `npyio.dataset` on ``gs://`` sees them: each ends in the
epoch completed after TensorFlow's retries, or in an error that names the object, within a
bound (docs/object-storage.md, "Faults", has the table and TensorFlow's retry schedule).

Each case runs in a fresh process inside the sandbox, npyio imported first, with TensorFlow's
defaults, but for the cases under `QUICK`'s settings: they share one worker (`quick`,
TensorFlow imported first), each on objects of its own; the fault strikes an object read after
the dataset is built (its first header was read then). The native reader's kernel reads the
objects; one it could not read is doubted and read again by the graph path, whose error is the
one raised.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator

import numpy as np
import pytest

from tests.gcs.sandbox import GcsSandbox, Worker

N, BATCH = 8, 2
#: TensorFlow's GCS client with one retry, no backoff and a 2 s idle timeout: the stall case
#: would take about 14 minutes with the defaults (11 attempts, each ended by the 60 s idle
#: timeout, with backoff between them).
QUICK = {
    "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
    "GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "0",
    "GCS_REQUEST_IDLE_TIMEOUT_SECS": "2",
}

EPOCH = """
import json, sys, time
import npyio
import tensorflow as tf
ds = npyio.dataset(sys.argv[1], sys.argv[2], batch_size={batch})
if len(sys.argv) > 3:  # a handshake directory: say "built", wait for "go"
    import pathlib
    (pathlib.Path(sys.argv[3]) / "built").touch()
    while not (pathlib.Path(sys.argv[3]) / "go").exists():
        time.sleep(0.05)
got, error, start = [], None, time.monotonic()
try:
    for x, y in ds:
        got.extend(int(v) for v in y.numpy())
except tf.errors.OpError as e:
    error = [type(e).__name__, e.message]
print(json.dumps({"got": got, "error": error, "seconds": time.monotonic() - start}))
""".replace("{batch}", str(BATCH))


#: `EPOCH` as a function of the `quick` worker.
WORKER_EPOCH = f"""
import npyio

def epoch(inputs, labels):
    ds = npyio.dataset(inputs, labels, batch_size={BATCH})
    got, error = [], None
    try:
        for x, y in ds:
            got.extend(int(v) for v in y.numpy())
    except tf.errors.OpError as e:
        error = [type(e).__name__, e.message]
    return {{"got": got, "error": error}}
"""


@pytest.fixture(scope="module")
def quick(gcs_sandbox: GcsSandbox) -> Iterator[Worker]:
    """A worker under `QUICK`'s settings (read once, when its GCS client starts), shared by the
    module's cases that use them: one TensorFlow import instead of one per case."""
    worker = gcs_sandbox.worker(env=QUICK)
    try:
        yield worker
    finally:
        worker.close()


def quick_epoch(quick: Worker, pairs: tuple[str, str]) -> dict:
    return quick.exec(WORKER_EPOCH + f"result = epoch({pairs[0]!r}, {pairs[1]!r})", 120)


@pytest.fixture
def pairs(gcs: GcsSandbox, tmp_path, request) -> tuple[str, str]:
    """N pairs under a prefix of the test's own; labels are the pair's index."""
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
    for i in range(N):
        np.save(tmp_path / "x" / f"{i}.npy", np.full((4,), i, np.float32))
        np.save(tmp_path / "y" / f"{i}.npy", np.int64(i))
    prefix = f"faults/{request.node.name}"
    gcs.put_tree(tmp_path, prefix)
    return gcs.url(f"{prefix}/x"), gcs.url(f"{prefix}/y")


def epoch(gcs: GcsSandbox, pairs: tuple[str, str], env: dict | None = None, **kw) -> dict:
    run = gcs.python(EPOCH, *pairs, env=env, **kw)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def object_name(pairs: tuple[str, str], i: int) -> str:
    return pairs[0].removeprefix("gs://npyio-test/") + f"/{i}.npy"


def test_a_503_is_retried_and_the_epoch_completes(gcs, pairs):
    name = object_name(pairs, 5)
    rule = gcs.fail(503, times=2, kind="read", name=name)
    out = epoch(gcs, pairs)
    assert out["error"] is None and sorted(out["got"]) == list(range(N))  # none lost or doubled
    attempts = [r["t"] for r in gcs.requests("read") if r["name"] == name]
    delays = [b - a for a, b in itertools.pairwise(attempts)]
    print(f"503 twice: {len(attempts)} attempts, delays {[round(d, 2) for d in delays]} s")
    assert len(gcs.hits(rule)) == 2 and len(attempts) == 3
    # TensorFlow's backoff: 1 s, then 2 s, each plus up to 1 s at random
    assert 0.9 <= delays[0] <= 2.5 and 1.9 <= delays[1] <= 3.5


def test_a_503_that_lasts_ends_the_epoch_naming_the_object(gcs, quick, pairs):
    name = object_name(pairs, 5)
    gcs.fail(503, times=None, kind="read", name=name)
    out = quick_epoch(quick, pairs)
    assert out["error"][0] == "AbortedError"  # TensorFlow's "All 1 retry attempts failed"
    assert name in out["error"][1]
    assert 5 not in out["got"] and len(out["got"]) <= N


def test_an_object_deleted_mid_epoch_is_named(gcs, pairs, tmp_path):
    name = object_name(pairs, 6)
    run = gcs.spawn([gcs.python_executable, "-c", EPOCH, *pairs, str(tmp_path)], timeout=120)
    deadline = time.monotonic() + 100
    while not (tmp_path / "built").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    gcs.delete(name)  # after the dataset was built, before its epoch
    (tmp_path / "go").touch()
    done = run.wait()
    assert done is not None and done.returncode == 0, done
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["error"][0] == "NotFoundError"
    assert name in out["error"][1]
    assert 6 not in out["got"]


def test_a_truncated_body_is_retried_then_named(gcs, quick, pairs):
    name = object_name(pairs, 3)
    gcs.truncate(keep=10, times=None, kind="read", name=name)
    out = quick_epoch(quick, pairs)
    assert out["error"][0] == "AbortedError"
    assert name in out["error"][1]
    assert 3 not in out["got"]


def test_a_truncated_object_is_named_with_its_length(gcs, pairs):
    name = object_name(pairs, 4)
    data = gcs.get(name)
    gcs.put(name, data[:-3])  # the object itself is short: no retry helps
    out = epoch(gcs, pairs)
    assert out["error"][0] == "InvalidArgumentError"
    # refused by the read of known size (npyio._read.objects), with the object's length
    assert name in out["error"][1] and f"length {len(data) - 3} bytes" in out["error"][1]


def test_a_stalled_server_ends_in_an_error_naming_the_object(gcs, quick, pairs):
    name = object_name(pairs, 2)
    rule = gcs.stall(None, times=None, kind="read", name=name)
    out = quick_epoch(quick, pairs)
    assert out["error"][0] == "AbortedError"
    assert name in out["error"][1]
    # QUICK's two attempts, each ended by the idle timeout, twice: the native reader's kernel
    # doubts the object it could not read, and the graph path reads it again, whose error
    # names it (so a store that keeps failing takes two rounds of TensorFlow's retries)
    assert len(gcs.hits(rule)) == 4


def test_ignore_errors_skips_a_failed_object_and_names_it(gcs, pairs):
    name = object_name(pairs, 5)
    gcs.fail(503, times=None, kind="read", name=name)
    code = EPOCH.replace("batch_size=", "ignore_errors=True, batch_size=")
    # TensorFlow's C++ logger, whose line is checked below, whatever the test process sets
    run = gcs.python(code, *pairs, env={**QUICK, "TF_CPP_MIN_LOG_LEVEL": "0"})
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["error"] is None and sorted(out["got"]) == [i for i in range(N) if i != 5]
    # a failed read is not a bad file: TensorFlow's ignore_errors logs it, naming the object
    assert "Error raised" in run.stderr
    assert f"when reading gs://npyio-test/{name}" in run.stderr
