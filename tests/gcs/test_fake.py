"""The GCS fake works with TensorFlow's real GCS client, inside a sealed namespace.

TensorFlow runs in workers inside the sandbox (imported once per worker): one with the default
environment, one (``fast``) whose GCS client gives up quickly (one retry without delay, a 1 s idle
timeout) and reads 1 MiB blocks, so that faults TensorFlow retries for minutes by default end in
an error within the module's time. Times are asserted only as lower bounds.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gcs.sandbox import ROOT, GcsSandbox, Worker, WorkerError

#: TensorFlow's GCS client in the ``fast`` worker: one retry, no backoff, a 1 s idle timeout
#: (whole seconds, strictly exceeded: more than 1 s), 1 MiB read blocks (the default, 64 MiB,
#: is allocated and zeroed for every file read: tens of milliseconds each).
FAST_ENV = {
    "GCS_RETRY_CONFIG_MAX_RETRIES": "1",
    "GCS_RETRY_CONFIG_INIT_DELAY_TIME_US": "0",
    "GCS_REQUEST_IDLE_TIMEOUT_SECS": "1",
    "GCS_READ_CACHE_BLOCK_SIZE_MB": "1",
}


@pytest.fixture(scope="module")
def workers(gcs_sandbox: GcsSandbox) -> Iterator[list[Worker]]:
    """The default and the fast worker, started together."""
    started = gcs_sandbox.workers(None, FAST_ENV)
    try:
        yield started
    finally:
        for worker in started:
            worker.close()


@pytest.fixture(scope="module")
def gcs_worker(workers: list[Worker]) -> Worker:
    return workers[0]


@pytest.fixture(scope="module")
def fast_worker(workers: list[Worker]) -> Worker:
    return workers[1]


def read(worker: Worker, url: str, timeout: float = 60.0) -> dict:
    """``tf.io.read_file(url)`` in the worker: its length or its exception, and its duration."""
    return worker.exec(
        f"""
        start = time.monotonic()
        try:
            result = {{"length": len(tf.io.read_file({url!r}).numpy())}}
        except Exception as exc:
            result = {{"error": type(exc).__name__, "message": str(exc)}}
        result["seconds"] = time.monotonic() - start
        """,
        timeout=timeout,
    )


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in itertools.pairwise(times)]


# -- the namespace ---------------------------------------------------------------------------
def test_only_loopback_exists_inside(gcs: GcsSandbox) -> None:
    probe = """
        import json, os, socket
        print(json.dumps({
            "index": sorted(name for _, name in socket.if_nameindex()),
            "sys": sorted(os.listdir("/sys/class/net")),
            "hosts": socket.gethostbyname("storage.googleapis.com"),
            "netns": os.stat("/proc/self/ns/net").st_ino,
        }))
    """
    result = gcs.python(textwrap.dedent(probe)).check()
    seen = json.loads(result.stdout)
    assert seen["index"] == ["lo"]
    assert seen["sys"] == ["lo"]
    assert seen["hosts"] == "127.0.0.1"
    assert seen["netns"] != os.stat("/proc/self/ns/net").st_ino


def test_non_loopback_addresses_are_unreachable(gcs: GcsSandbox) -> None:
    # 192.0.2.1 is TEST-NET-1 (never routed) and the other a public resolver: with no route,
    # connect() fails at once (ENETUNREACH) instead of sending anything.
    probe = """
        import socket
        for address in ("192.0.2.1", "8.8.8.8"):
            try:
                socket.create_connection((address, 443), timeout=3).close()
                print(address, "connected")
            except OSError as exc:
                print(address, "failed", exc.errno)
    """
    result = gcs.python(textwrap.dedent(probe)).check()
    assert result.stdout.split("\n")[:2] == [
        f"192.0.2.1 failed {errno.ENETUNREACH}",
        f"8.8.8.8 failed {errno.ENETUNREACH}",
    ]


def test_children_get_env_output_and_a_deadline(gcs: GcsSandbox) -> None:
    code = "import os, sys; print(os.environ['X'], os.environ['CURL_CA_BUNDLE']); sys.exit(3)"
    done = gcs.python(code, env={"X": "seen"})
    assert (done.returncode, done.timed_out) == (3, False)
    assert done.stdout.startswith("seen ") and done.stdout.strip().endswith("ca.pem")
    names = gcs.python("import os; print(*os.environ)").check().stdout.split()
    assert not [name for name in names if name.startswith("GCS_")]
    slow = gcs.python("import time; time.sleep(60)", timeout=1)
    assert slow.timed_out and slow.returncode == -9


def test_nothing_outlives_its_launcher(gcs_sandbox: GcsSandbox) -> None:
    """A launcher killed with SIGKILL (no clean-up ran) leaves no process behind. (It starts a
    sandbox of its own; ``gcs_sandbox`` only applies the skip policy.)"""
    launcher = """
        import sys, time
        from tests.gcs.sandbox import GcsSandbox
        gcs = GcsSandbox().start()
        gcs.spawn([sys.executable, "-c", "import time; time.sleep(600)"])
        print(gcs.workdir, flush=True)
        time.sleep(600)
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(launcher)], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    with proc, proc.stdout:
        workdir = proc.stdout.readline().decode().strip()
        assert workdir and _processes_naming(workdir)
        proc.kill()
    deadline = time.monotonic() + 30
    while _processes_naming(workdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_naming(workdir)
    assert not Path(workdir).exists()  # the orphaned supervisor deleted it


def _processes_naming(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (the sandbox's commands name its
    working directory), and their children (a sleeper names none)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    children = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) in found:
            children.append(int(entry.name))
    return found + children


# -- TensorFlow's client against the fake -------------------------------------------------------
def test_gfile_operations(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    base = gcs.url("gfile/")
    result = gcs_worker.exec(
        f"""
        g, base = tf.io.gfile, {base!r}
        g.makedirs(base + "sub")
        with g.GFile(base + "sub/f.txt", "wb") as f:
            f.write(b"abc" * 1000)
        with g.GFile(base + "empty", "wb") as f:
            f.write(b"")
        result = {{
            "exists": g.exists(base + "sub/f.txt"),
            "missing": g.exists(base + "nothing"),
            "size": g.stat(base + "sub/f.txt").length,
            "empty": g.stat(base + "empty").length,
            "listdir": sorted(g.listdir(base)),
            "glob": g.glob(base + "*/*.txt"),
            "isdir": (g.isdir(base + "sub"), g.isdir(base + "sub/f.txt")),
            "read": tf.io.read_file(base + "sub/f.txt").numpy()[:6],
        }}
        g.rename(base + "sub/f.txt", base + "sub/g.txt")
        result["renamed"] = g.listdir(base + "sub")
        g.remove(base + "sub/g.txt")
        result["removed"] = g.listdir(base + "sub")
        """
    )
    assert result == {
        "exists": True,
        "missing": False,
        "size": 3000,
        "empty": 0,
        "listdir": ["empty", "sub/"],
        "glob": [base + "sub/f.txt"],
        "isdir": (True, False),
        "read": b"abcabc",
        "renamed": ["g.txt"],
        "removed": [],
    }
    kinds = gcs.stats()["by_kind"]
    for kind in ("upload_start", "upload", "stat", "list", "read", "rewrite", "delete"):
        assert kinds.get(kind), kind
    assert gcs.errors() == []


def test_objects_put_directly_are_read_by_tensorflow(
    gcs: GcsSandbox, gcs_worker: Worker, tmp_path: Path
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one.bin").write_bytes(b"1" * 10)
    (tmp_path / "a" / "b" / "two.bin").write_bytes(b"2" * 20)
    assert gcs.put_tree(tmp_path / "a", gcs.url("tree")) == ["tree/b/two.bin", "tree/one.bin"]
    gcs.put("tree/three.bin", b"3" * 30)
    assert gcs.list_objects("tree/") == ["tree/b/two.bin", "tree/one.bin", "tree/three.bin"]
    assert gcs.get("tree/b/two.bin") == gcs.get(gcs.url("tree/b/two.bin")) == b"2" * 20
    assert read(gcs_worker, gcs.url("tree/three.bin"))["length"] == 30
    listed = gcs_worker.exec(f"result = sorted(tf.io.gfile.listdir({gcs.url('tree')!r}))")
    assert listed == ["b/", "one.bin", "three.bin"]
    assert gcs.stats()["ranges"] == [("tree/three.bin", "bytes=0-67108863")]


def test_listings_come_in_pages_of_1000(
    gcs: GcsSandbox, gcs_worker: Worker, tmp_path: Path
) -> None:
    # 2,345 objects and 5 prefixes in one directory: pages of 1,000 entries, objects and
    # prefixes counted together, as GCS pages them; TensorFlow's client follows the tokens
    for i in range(2345):
        (tmp_path / f"{i:05d}.bin").write_bytes(b"")
    for i in range(5):
        (tmp_path / f"sub{i}").mkdir()
        (tmp_path / f"sub{i}" / "f.bin").write_bytes(b"")
    gcs.put_tree(tmp_path, gcs.url("paged"))
    gcs.reset_stats()
    listed = gcs_worker.exec(f"result = tf.io.gfile.listdir({gcs.url('paged')!r})")
    assert sorted(listed) == sorted(
        [f"{i:05d}.bin" for i in range(2345)] + [f"sub{i}/" for i in range(5)]
    )
    # listdir asks whether the directory exists (``maxResults=1``: one page of one entry),
    # then lists it: 2,350 entries in pages of 1,000, 1,000 and 350
    targets = [r["target"] for r in gcs.requests("list")]
    assert [("maxResults=1" in t, "pageToken=" in t) for t in targets] == [
        (True, False),
        (False, False),
        (False, True),
        (False, True),
    ]
    gcs.reset_stats()
    globbed = gcs_worker.exec(f"result = tf.io.gfile.glob({gcs.url('paged/*.bin')!r})")
    assert globbed == [gcs.url(f"paged/{i:05d}.bin") for i in range(2345)]
    assert sum("pageToken=" in r["target"] for r in gcs.requests("list")) == 2
    assert gcs.errors() == []


def test_latency_applies_to_each_request(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    for i in range(5):
        gcs.put(f"latency/{i}", b"x")
    gcs.set_latency(0.1, kinds=["read"])
    gcs.reset_stats()
    gcs_worker.exec(
        """
        for i in range(5):
            tf.io.read_file(gcs.url(f"latency/{i}"))
        """
    )
    gcs.set_latency(0.0)
    # Each read was answered, and held by the latency (the server's own log: a lower bound
    # that its sleep guarantees, not a measure of the client's speed).
    reads = gcs.requests("read")
    assert sorted(r["name"] for r in reads) == [f"latency/{i}" for i in range(5)]
    assert all(200 <= r["status"] < 300 and r["seconds"] >= 0.1 for r in reads), reads
    assert read(gcs_worker, gcs.url("latency/0"))["length"] == 1


def test_reads_in_flight_are_counted(gcs: GcsSandbox, fast_worker: Worker) -> None:
    for i in range(16):
        gcs.put(f"parallel/{i}", b"y" * 1024)
    gcs.set_latency(0.2)
    fast_worker.exec(
        """
        paths = [gcs.url(f"parallel/{i}") for i in range(16)]
        ds = tf.data.Dataset.from_tensor_slices(paths).map(tf.io.read_file, num_parallel_calls=16)
        options = tf.data.Options()
        options.threading.private_threadpool_size = 16  # else one thread per core runs reads
        result = ds.with_options(options).reduce(0, lambda n, x: n + tf.strings.length(x)).numpy()
        """
    )
    stats = gcs.stats()
    assert stats["by_kind"]["read"] == 16
    assert stats["connections"] >= 2
    assert stats["max_in_flight"]["read"] > 1
    # the server counts a request done after its last byte is sent, which the client may
    # see first: wait (a bounded while) for the count to settle
    deadline = time.monotonic() + 10
    while stats["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.05)
        stats = gcs.stats()
    assert stats["in_flight"] == {}


# -- faults ------------------------------------------------------------------------------------
def test_503_is_retried_after_a_delay(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    gcs.put("retry/a", b"z" * 100)
    rule = gcs.fail(503, times=1, kind="read", name="retry/a")
    assert read(gcs_worker, gcs.url("retry/a"))["length"] == 100
    attempts = [r["t"] for r in gcs.requests("read")]
    print(f"503 once: {len(attempts)} attempts, delays {[round(g, 3) for g in gaps(attempts)]}")
    assert len(gcs.hits(rule)) == 1
    assert len(attempts) == 2  # one retry
    # TensorFlow's backoff: 1 s << retry, plus up to 1 s at random
    assert gaps(attempts)[0] >= 0.9


def test_404_after_delete(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    gcs.put("gone/a", b"a")
    assert read(gcs_worker, gcs.url("gone/a"))["length"] == 1
    gcs.delete("gone/a")
    after = read(gcs_worker, gcs.url("gone/a"))
    assert after["error"] == "NotFoundError"
    assert "404" in after["message"]


def test_truncated_body_is_an_error(gcs: GcsSandbox, fast_worker: Worker) -> None:
    gcs.put("cut/a", b"c" * 5000)
    rule = gcs.truncate(keep=100, times=None, name="cut/a")
    result = read(fast_worker, gcs.url("cut/a"))
    assert result["error"] == "AbortedError"  # TensorFlow retried, then gave up
    assert "partial file" in result["message"]
    assert len(gcs.hits(rule)) == 2


def test_stalled_read_waits_until_released(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    gcs.put("stall/a", b"s" * 10)
    rule = gcs.stall(None, times=1, name="stall/a")
    gcs_worker.exec(
        f"""
        import threading
        box = {{}}
        stalled = threading.Thread(
            target=lambda: box.update(n=len(tf.io.read_file({gcs.url("stall/a")!r}).numpy()))
        )
        stalled.start()
        stalled.join(2.0)
        result = stalled.is_alive()
        """
    )
    assert gcs.stats()["in_flight"].get("read") == 1
    assert gcs_worker.eval("stalled.is_alive()")
    gcs.release(rule)  # the stalled request is closed unanswered: TensorFlow retries
    assert gcs_worker.exec("stalled.join(30); result = box", timeout=40) == {"n": 10}
    assert len(gcs.requests("read")) == 2


def test_idle_timeout_ends_a_stalled_read(gcs: GcsSandbox, fast_worker: Worker) -> None:
    gcs.put("stall/b", b"s")
    rule = gcs.stall(None, times=None, name="stall/b")
    result = read(fast_worker, gcs.url("stall/b"))
    assert result["error"] == "AbortedError"
    assert "aborted by an application callback" in result["message"]  # TensorFlow's idle check
    assert len(gcs.hits(rule)) == 2  # the fast worker's two attempts, each ended by the check


def test_stall_with_a_delay_answers_late(gcs: GcsSandbox, gcs_worker: Worker) -> None:
    gcs.put("late/a", b"l" * 7)
    rule = gcs.stall(1.5, times=1, name="late/a")
    result = read(gcs_worker, gcs.url("late/a"))
    assert result["length"] == 7
    # One request, held and then answered: no retry was needed for the late answer.
    assert len(gcs.hits(rule)) == 1
    assert [r["status"] // 100 for r in gcs.requests("read") if r["name"] == "late/a"] == [2]


def test_drop_is_retried(gcs: GcsSandbox, fast_worker: Worker) -> None:
    gcs.put("drop/a", b"d" * 3)
    rule = gcs.drop(times=1, name="drop/a")
    assert read(fast_worker, gcs.url("drop/a"))["length"] == 3
    assert len(gcs.hits(rule)) == 1
    assert len(gcs.requests("read")) == 2


def test_worker_errors_name_the_exception(gcs_worker: Worker) -> None:
    with pytest.raises(WorkerError, match="ZeroDivisionError"):
        gcs_worker.exec("1 / 0")
    with pytest.raises(WorkerError, match="pickle"):
        gcs_worker.eval("lambda: None")
    assert gcs_worker.eval("1 + 1") == 2
