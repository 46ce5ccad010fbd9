"""The dataset op `NpyioBatchDataset` (``npyio/_native/src/batch_dataset.cc``), through
`npyio.dataset`, whose files of one static shape on the local disk it reads: batches equal to
the graph path's, the files it doubts decided by the graph path (its values or its error, naming
the file), exact resume from checkpoints that hold units, not data, and a graph that serializes.
"""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import graph_pb2

import npyio

pytestmark = pytest.mark.usefixtures("native_ops")


def _ops(ds: tf.data.Dataset) -> list[str]:
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())
    return [node.op for node in graph.node if node.op.endswith("Dataset")]


def _flat(ds: tf.data.Dataset) -> list[list[np.ndarray]]:
    return [[np.asarray(t) for t in tf.nest.flatten(e)] for e in ds]


def _same(a: tf.data.Dataset, b: tf.data.Dataset) -> None:
    got, want = _flat(a), _flat(b)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for x, y in zip(g, w):
            assert x.dtype == y.dtype and x.shape == y.shape
            if x.dtype == object:  # paths
                assert x.tolist() == y.tolist()
            else:
                assert x.tobytes() == y.tobytes()


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """37 pairs with unpadded names (so sorted by name: 0, 1, 10, 11, ...) and a stray file."""
    root = tmp_path_factory.mktemp("pairs")
    rng = np.random.default_rng(0)
    for d in ("x", "y"):
        (root / d).mkdir()
    for i in range(37):
        np.save(root / "x" / f"{i}.npy", rng.random((6, 5), np.float32))
        np.save(root / "y" / f"{i}.npy", rng.integers(0, 9, (3,), np.int16))
    (root / "x" / "notes.txt").write_text("not an array")
    return root / "x", root / "y"


@pytest.mark.parametrize("batch_size", [1, 8, 37, 64])
@pytest.mark.parametrize("drop_remainder", [False, True])
def test_batches_equal_the_graph_paths(pairs, batch_size, drop_remainder):
    x, y = pairs
    common = dict(batch_size=batch_size, drop_remainder=drop_remainder, shuffle=True, seed=5)
    native = npyio.dataset(str(x), str(y), **common)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(str(x), str(y), backend="graph", **common))
    lead = batch_size if drop_remainder else None
    assert native.element_spec[0].shape.as_list() == [lead, 6, 5]
    batches = 37 // batch_size if drop_remainder else -(-37 // batch_size)
    assert int(native.cardinality()) == batches


def test_dicts_values_and_paths_take_their_places(pairs):
    x, _ = pairs
    common = dict(batch_size=5, with_paths=True)
    files = [str(x / f"{i}.npy") for i in range(37)]  # a list keeps the values' order
    inputs, labels = {"a": files, "b": files}, list(range(37))
    native = npyio.dataset(inputs, labels, **common)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(inputs, labels, backend="graph", **common))
    first = next(iter(native))
    assert set(first[0]) == {"a", "b"} and first[1].numpy().tolist() == [0, 1, 2, 3, 4]
    assert first[2].numpy()[1].decode().endswith(os.sep + "1.npy")


def test_large_batches_read_on_the_pool_equal_the_graph_paths(tmp_path):
    # 24 files of 128 KiB: a batch of 16 passes the op's 1 MiB, so its reads go to the pool
    rng = np.random.default_rng(1)
    for i in range(24):
        np.save(tmp_path / f"{i:02d}.npy", rng.random((128, 256), np.float32))
    native = npyio.dataset(str(tmp_path), batch_size=16)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(str(tmp_path), batch_size=16, backend="graph"))


def test_files_it_doubts_are_the_graph_paths_values(tmp_path):
    # the same arrays in headers the kernel does not compare equal to the first file's
    rng = np.random.default_rng(2)
    arrays = [rng.random((4, 3), np.float32) for _ in range(12)]
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"{i:02d}.npy", a)
    np.save(tmp_path / "03.npy", arrays[3].astype(">f4"))  # byte-swapped
    np.save(tmp_path / "07.npy", np.asfortranarray(arrays[7]))  # Fortran order
    # a header with other padding (another writer): version 2.0, same dict
    with open(tmp_path / "09.npy", "wb") as f:
        np.lib.format.write_array(f, arrays[9], version=(2, 0))
    ds = npyio.dataset(str(tmp_path), batch_size=5)
    assert "NpyioBatchDataset" in _ops(ds)
    got = np.concatenate([b.numpy() for b in ds])
    np.testing.assert_array_equal(got, np.stack(arrays))


def test_a_bad_file_fails_with_the_graph_paths_error_naming_it(tmp_path):
    rng = np.random.default_rng(3)
    for i in range(10):
        np.save(tmp_path / f"{i}.npy", rng.random((4, 3), np.float32))
    (tmp_path / "6.npy").write_bytes((tmp_path / "6.npy").read_bytes()[:-4])  # truncated
    native = npyio.dataset(str(tmp_path), batch_size=4)
    assert "NpyioBatchDataset" in _ops(native)
    graph = npyio.dataset(str(tmp_path), batch_size=4, backend="graph")
    errors = []
    for ds in (native, graph):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            list(ds)
        errors.append(info.value.message.splitlines()[0])
    # the graph path's words (TensorFlow prefixes the map's with where its function ran)
    reason = errors[1][errors[1].index("assertion failed: ") :]
    assert str(tmp_path / "6.npy") in reason and errors[0].endswith(reason)


@pytest.mark.parametrize("symbolic", [False, True])
def test_resume_is_exact_and_the_checkpoint_holds_units_not_data(pairs, tmp_path, symbolic):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=4, shuffle=True, seed=9)
    if symbolic:
        options = tf.data.Options()
        options.experimental_symbolic_checkpoint = True
        ds = ds.with_options(options)
    it = iter(ds)
    for _ in range(3):
        next(it)
    path = tf.train.Checkpoint(it=it).write(str(tmp_path / "ckpt"))
    rest = [e[0].numpy() for e in it]
    again = iter(ds)
    tf.train.Checkpoint(it=again).read(path).assert_consumed()
    resumed = [e[0].numpy() for e in again]
    assert len(resumed) == len(rest) == 7
    for a, b in zip(resumed, rest):
        np.testing.assert_array_equal(a, b)
    size = sum(p.stat().st_size for p in tmp_path.glob("ckpt*"))
    # the batches in flight are saved as their units (paths), not their 4x(6x5) data
    assert size < 16 * 1024


def test_the_graph_serializes_and_reloads(pairs, tmp_path):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=8)
    ds.save(str(tmp_path / "saved"))
    loaded = tf.data.Dataset.load(str(tmp_path / "saved"))
    _same(loaded, ds)


def test_an_iterator_deleted_mid_epoch_stops_its_reads(pairs):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=2)
    for _ in range(20):
        it = iter(ds)
        next(it)
        del it
        gc.collect()
    assert len(list(ds)) == 19


# Once the file NPYIO_STALL_ARM exists, open(2) of a path holding "npyio-stall" announces itself
# (NPYIO_STALL_MARK) and waits until the file NPYIO_STALL_GATE exists: a read stalled in a system
# call, as on a hung NFS. (Armed only after the plan, whose header checks read that file too.)
_STALL_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

typedef int (*open_fn)(const char*, int, ...);

static int stalled_open(const char* name, const char* path, int flags, va_list ap) {
  mode_t mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
  open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
  const char* arm = getenv("NPYIO_STALL_ARM");
  /* npyio-stall files wait for the gate, npyio-hold files for the hold gate */
  const int hold = strstr(path, "npyio-hold") != NULL;
  if ((hold || strstr(path, "npyio-stall") != NULL) && arm != NULL && access(arm, F_OK) == 0) {
    const char* mark = getenv("NPYIO_STALL_MARK");
    const char* gate = getenv(hold ? "NPYIO_STALL_HOLD" : "NPYIO_STALL_GATE");
    const char* marks = getenv("NPYIO_STALL_MARKS");  /* a mark per stalled file, here */
    if (mark != NULL) close(real(mark, O_WRONLY | O_CREAT, 0644));
    if (marks != NULL) {
      char each[4096];
      const char* base = strrchr(path, '/');
      snprintf(each, sizeof each, "%s/%s", marks, base == NULL ? path : base + 1);
      close(real(each, O_WRONLY | O_CREAT, 0644));
    }
    while (gate != NULL && access(gate, F_OK) != 0) usleep(10000);
  }
  return real(path, flags, mode);
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = stalled_open("open", path, flags, ap);
  va_end(ap);
  return fd;
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = stalled_open("open64", path, flags, ap);
  va_end(ap);
  return fd;
}
"""

_STALL_SCRIPT = r"""
import gc, os, sys, time
import npyio
root, arm, mark, gate = sys.argv[1:5]
ds = npyio.dataset(root, batch_size=4)
open(arm, "w").close()
it = iter(ds)
next(it)  # the producer reads ahead, into the batch with the stalled file
while not os.path.exists(mark):
    time.sleep(0.01)
del it
gc.collect()
print("deleted, gate open:", os.path.exists(gate), flush=True)
open(gate, "w").close()  # the stalled read ends, into tensors the pool keeps alive
time.sleep(0.5)
"""


def _stall_shim(tmp_path: Path) -> Path:
    """The shim (_STALL_SHIM) built into ``tmp_path``; the test skips without a C compiler."""
    import shutil
    import subprocess

    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler for the shim")
    (tmp_path / "shim.c").write_text(_STALL_SHIM)
    shim = tmp_path / "shim.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "shim.c"), "-ldl"],
        check=True,
    )
    return shim


def _run_stalled(tmp_path: Path, script: str, root: Path, *args: str) -> str:
    """``script`` run with the shim over ``root`` (its argv: root, arm, mark, gate, marks,
    hold, then ``args``); its stdout. A child that hangs fails the test at its timeout."""
    import subprocess
    import sys

    files = [tmp_path / name for name in ("arm", "mark", "gate", "marks", "hold")]
    files[3].mkdir()
    env = {**os.environ, "LD_PRELOAD": str(_stall_shim(tmp_path))}
    env |= {f"NPYIO_STALL_{f.name.upper()}": str(f) for f in files}
    done = subprocess.run(
        [sys.executable, "-c", script, str(root), *map(str, files), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("shape", [(4,), (256, 256, 4)], ids=["in-the-producer", "on-the-pool"])
def test_deleting_an_iterator_never_waits_on_a_stalled_read(
    tmp_path: Path, shape: tuple[int, ...]
) -> None:
    """Once the plan is made, the read of the third batch's file stalls in open(2) (an
    LD_PRELOAD shim) until a gate file exists. The iterator is deleted while it stalls:
    deletion returns before the test opens the gate (else the child would hang until its
    timeout), and the process ends clean after the read does. Small files are read in the
    producer's thread, 1 MiB ones on the pool."""
    root = tmp_path / "x"
    root.mkdir()
    for i in range(8):
        np.save(root / f"a{i}.npy", np.full(shape, i, np.float32))
    np.save(root / "npyio-stall.npy", np.zeros(shape, np.float32))  # sorted last: batch 3
    assert "deleted, gate open: False" in _run_stalled(tmp_path, _STALL_SCRIPT, root)


_IN_FLIGHT_SCRIPT = r"""
import json, os, sys, threading, time
import tensorflow as tf
import npyio
root, arm, mark, gate, marks = sys.argv[1:6]
threads, budget = json.loads(sys.argv[7])
options = tf.data.Options()
if threads:
    options.threading.private_threadpool_size = threads
if budget:
    options.autotune.ram_budget = budget
ds = npyio.dataset(root, batch_size=64).with_options(options)
open(arm, "w").close()
it = iter(ds)
reader = threading.Thread(target=lambda: print("batches:", sum(1 for _ in it), flush=True))
reader.start()
deadline = time.monotonic() + 120
while not os.listdir(marks) and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(2.0)  # every task that will start has met its stalled file by now
print("stalled:", len(os.listdir(marks)), flush=True)
open(gate, "w").close()
reader.join()
"""


@pytest.mark.parametrize(
    ("threads", "budget", "stalled"),
    [(1, 0, 2), (3, 0, 6), (1, 1, 1), (3, 1, 3)],
    ids=["1-thread", "3-threads", "1-thread-no-room", "3-threads-no-room"],
)
def test_threads_and_batches_in_flight_follow_the_options(
    tmp_path: Path, threads: int, budget: int, stalled: int
) -> None:
    """Every open stalls until a gate opens, and the shim marks each file it stalls, so the
    marks are the reads in flight. A batch of 64 files goes to the pool in a task per thread
    of tf.data's runner (``threading.private_threadpool_size``), and two batches go ahead
    while ``autotune.ram_budget`` has room, one where it has none; every batch comes after."""
    root = tmp_path / "x"
    root.mkdir()
    for i in range(192):
        np.save(root / f"npyio-stall-{i:03d}.npy", np.full((4,), i, np.float32))
    out = _run_stalled(tmp_path, _IN_FLIGHT_SCRIPT, root, json.dumps([threads, budget]))
    assert f"stalled: {stalled}\n" in out and "batches: 3\n" in out, out


_DEEPER_SCRIPT = r"""
import json, os, sys, threading, time
import npyio
root, arm, mark, gate, marks, hold = sys.argv[1:7]
(prefetch,) = json.loads(sys.argv[7])
ds = npyio.dataset(root, batch_size=8, prefetch=prefetch)
open(arm, "w").close()
it = iter(ds)
reader = threading.Thread(target=lambda: print("batches:", sum(1 for _ in it), flush=True))
reader.start()
time.sleep(0.5)
open(gate, "w").close()  # the first batch's reads end: they waited, so waiting mode is on
deadline = time.monotonic() + 120
while not any("hold" in n for n in os.listdir(marks)) and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(2.0)
print("held:", sum("hold" in n for n in os.listdir(marks)), flush=True)
open(hold, "w").close()
reader.join()
"""


@pytest.mark.parametrize(
    ("prefetch", "shape", "held"),
    [(None, (4,), 32), (2, (4,), 16), (None, (512, 1024), 10)],
    ids=["auto", "fixed", "auto-2-MiB-files"],
)
def test_reads_that_wait_keep_batches_enough_for_every_read_in_flight(
    tmp_path: Path, prefetch: int | None, shape: tuple[int, ...], held: int
) -> None:
    """The first batch's files stall until a gate opens (its reads waited: waiting mode); every
    later file until a second gate, and the shim marks each, so the marks are the files in
    flight. Batches of 8 are 8 tasks each: with prefetch=AUTOTUNE the op keeps enough batches
    ahead for all 32 reads in flight (8 batches, the rest queued), with prefetch=2 two; and
    batches of 16 MiB (2 MiB files) two, the most that 32 MiB holds: there the first batch is
    large enough for the pool, so the second went out (2 tasks) before waiting mode began, and
    the third in it (8 tasks), where without the cap the pool's 32 threads would all hold one."""
    root = tmp_path / "x"
    root.mkdir()
    for i in range(8):
        np.save(root / f"a-npyio-stall-{i}.npy", np.full(shape, i, np.float32))
    for i in range(40):
        np.save(root / f"b-npyio-hold-{i:03d}.npy", np.full(shape, i, np.float32))
    out = _run_stalled(tmp_path, _DEEPER_SCRIPT, root, json.dumps([prefetch]))
    assert f"held: {held}\n" in out and "batches: 6\n" in out, out


_UNORDERED_SCRIPT = r"""
import os, sys
import npyio
root, arm, mark, gate = sys.argv[1:5]
ds = npyio.dataset(root, batch_size=2, deterministic=False, with_paths=True)
open(arm, "w").close()
it = iter(ds)
names = lambda batch: [os.path.basename(p.decode()) for p in batch[1].numpy()]
seen = names(next(it))
second = names(next(it))  # batch 2 stalls: only out of order can this come before the gate
print("second:", ",".join(second), "gate open:", os.path.exists(gate), flush=True)
open(gate, "w").close()
seen += second + [n for batch in it for n in names(batch)]
print("all:", ",".join(sorted(seen)), flush=True)
"""


def test_not_deterministic_a_full_batch_read_early_goes_first(tmp_path: Path) -> None:
    """With ``deterministic=False``, while batch 2's read stalls (the shim; files of 1 MiB,
    read on the pool), batch 3 comes first; then every file comes once."""
    root = tmp_path / "x"
    root.mkdir()
    names = ["a0", "a1", "b-npyio-stall", "b1", "c0", "c1", "d0"]  # in batches of 2
    for name in names:
        np.save(root / f"{name}.npy", np.zeros((256, 256, 4), np.float32))
    out = _run_stalled(tmp_path, _UNORDERED_SCRIPT, root)
    assert "second: c0.npy,c1.npy gate open: False" in out, out
    assert f"all: {','.join(sorted(n + '.npy' for n in names))}" in out, out
