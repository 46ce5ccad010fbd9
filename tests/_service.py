"""Real processes for the tf.data service fault tests: a dispatcher, workers and clients.

Every process starts in its own session (process group) and is killed with SIGKILL to that
group, by process id: a crash, nothing flushed or closed, its children included. A `Cluster`
kills whatever it started when it closes. Each process's stderr (TensorFlow's log, INFO level)
goes to a file that failure messages quote.

The dispatcher and workers run `SERVER`, which never imports npyio (``sys.modules["npyio"] =
None``): a tf.data service worker has TensorFlow only. The dispatcher is fault tolerant: it
journals its state to ``work_dir`` and a restart at the same port and ``work_dir`` resumes it.
A worker restarted at the same port has the same address, so it is the same worker.

A client (`CLIENT`) builds the npyio pipeline, slowed down in-graph, distributes it, and prints
each batch's sample ids as a line, so that a test can inject a fault after the client has
received K batches. It runs in a subprocess: a client that waits without end is killed at a
deadline instead of stalling the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)

#: One tf.data service server, dispatcher or worker, with ``json.loads(argv[2])`` as its
#: config. Prints ``ready`` once serving (a worker: once registered with the dispatcher).
SERVER = """
import json, sys
sys.modules["npyio"] = None  # prove that the service never needs npyio
import tensorflow as tf
service = tf.data.experimental.service
kind, config = sys.argv[1], json.loads(sys.argv[2])
if kind == "dispatcher":
    server = service.DispatchServer(service.DispatcherConfig(**config))
else:
    server = service.WorkerServer(service.WorkerConfig(**config))
print("ready", flush=True)
server.join()
"""

#: A client that runs one epoch per config: read a config line (JSON) on stdin, build the
#: pipeline, print ``ready``, wait for ``go``, then print ``batch [ids]`` per element and
#: ``end <seconds>`` at the end, and wait for the next config. On an error it prints ``error
#: <json message>`` and exits. When no element came for ``stall_s`` seconds, it prints
#: ``stalled <seconds>`` and exits: the client-side bound on a wait without end. One process
#: serves consecutive epochs, which spares an import of TensorFlow per test.
CLIENT = """
import json, os, queue, sys, threading, time
import tensorflow as tf
import npyio
from tests._service import slow
service = tf.data.experimental.service
print("started", flush=True)

def build(cfg):
    # backend="graph": the workers have TensorFlow only (SERVER), and the native reader's op
    # is registered only where npyio is imported (tests/sources/test_dataset_scaling.py)
    ds = npyio.dataset(cfg["inputs"], cfg["labels"], batch_size=cfg["batch_size"],
                       shuffle=cfg["shuffle"], seed=cfg["seed"], backend="graph")
    ds = slow(ds, cfg["sleep_us"])
    if cfg["repeat"]:
        ds = ds.repeat()
    ds = ds.apply(service.distribute(
        processing_mode=service.ShardingPolicy[cfg["policy"]], service=cfg["service"],
        **cfg["options"]))
    return ds.take(cfg["take"]) if cfg["take"] else ds

def consume(ds, out):
    try:
        for x, y in ds:
            x, y = x.numpy(), y.numpy()
            assert (x.reshape(x.shape[0], -1) == y.reshape(-1, 1)).all(), "misaligned pair"
            out.put(("batch", [int(v) for v in y]))
        out.put(("end", None))
    except Exception as e:
        out.put(("error", f"{type(e).__name__}: {e}"[:3000]))

for line in sys.stdin:
    cfg = json.loads(line)
    ds = build(cfg)
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.monotonic()
    out = queue.Queue()
    threading.Thread(target=consume, args=(ds, out), daemon=True).start()
    while True:
        try:
            kind, value = out.get(timeout=cfg["stall_s"])
        except queue.Empty:
            print("stalled", round(time.monotonic() - start, 2), flush=True)
            os._exit(0)  # the iterator's threads still wait on the service: do not join them
        if kind == "batch":
            print("batch", json.dumps(value), flush=True)
        elif kind == "end":
            print("end", round(time.monotonic() - start, 2), flush=True)
            break
        else:
            print("error", json.dumps(value), flush=True)
            os._exit(3)
"""


def slow(ds, sleep_us: int):
    """``ds`` waiting ``sleep_us`` before each element, in-graph (``SleepDataset``), so that an
    epoch lasts long enough to be interrupted: the workers run no Python of ours.
    """
    import tensorflow as tf

    if not sleep_us:
        return ds
    flat = tf.nest.flatten(ds.element_spec)
    variant = tf.raw_ops.SleepDataset(
        input_dataset=tf.data.experimental.to_variant(ds),
        sleep_microseconds=sleep_us,
        output_types=[s.dtype for s in flat],
        output_shapes=[s.shape for s in flat],
    )
    return tf.data.experimental.from_variant(variant, ds.element_spec)


def free_port() -> int:
    """A port free now (the server binds it a moment later; a clash shows as a failed start)."""
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


class Proc:
    """A subprocess in its own process group, its stdout read line by line into a queue."""

    def __init__(self, name: str, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.name = name
        self.log = log
        self._log_file = open(log, "a")  # noqa: SIM115 (closed by kill)
        self.popen = subprocess.Popen(
            [sys.executable, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.ready = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        with contextlib.suppress(ValueError, OSError):  # closed by kill
            for line in self.popen.stdout:
                self.lines.put(line.rstrip("\n"))
        self.lines.put(None)  # end of output

    def next_line(self, timeout: float) -> str | None:
        """The next line; ``None`` at the end of the output; raises ``queue.Empty``."""
        return self.lines.get(timeout=max(timeout, 0.0))

    def expect(self, word: str, timeout: float) -> str:
        """Wait for a line starting with ``word``; fail with the log's tail otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.next_line(deadline - time.monotonic())
            except queue.Empty:
                raise AssertionError(
                    f"{self.name}: no {word!r} within {timeout:.0f}s\n{self.tail()}"
                ) from None
            if line is None:
                raise AssertionError(f"{self.name} exited before {word!r}\n{self.tail()}")
            if line.split(" ", 1)[0] == word:
                self.ready = self.ready or word == "ready"
                return line

    def send(self, line: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def alive(self) -> bool:
        """Still running; an exited process is left unreaped, so `kill` may still signal its
        group (a process id is not reused before its process is reaped).
        """
        if self.popen.returncode is not None:
            return False
        try:
            info = os.waitid(os.P_PID, self.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return info is None

    def kill(self) -> None:
        """SIGKILL the process group (a crash), then reap the process. Once reaped, its id
        may be another process's: it is never signalled again.
        """
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait()
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        self._log_file.close()

    def tail(self, chars: int = 3000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._log_file.flush()
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- {self.name} ({self.log}) ---\n{text[-chars:]}"


@dataclass
class Epoch:
    """What a client received: sample ids in arrival order, how it ended, and when."""

    ids: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # each batch's arrival, from "go"
    how: str = ""  # "end", "error", "stalled", "exited" or "timeout"
    detail: str = ""
    seconds: float = 0.0  # from "go" to the last line
    fault_at: float | None = None  # when the fault ran, from "go"
    before_fault: int = 0  # samples received before the fault

    def missing(self, n: int) -> list[int]:
        return sorted(set(range(n)) - set(self.ids))

    def duplicated(self) -> dict[int, int]:
        return {i: c for i, c in sorted(Counter(self.ids).items()) if c > 1}

    def copies(self) -> dict[int, int]:
        """How many samples came k times, for each k."""
        return dict(sorted(Counter(Counter(self.ids).values()).items()))

    def summary(self, n: int) -> str:
        fault = "" if self.fault_at is None else f" ({self.seconds - self.fault_at:.1f}s after"
        fault += "" if self.fault_at is None else f" the fault, {self.before_fault} before it)"
        return (
            f"{self.how} after {self.seconds:.1f}s{fault}: {len(self.ids)} samples, "
            f"{len(set(self.ids))} distinct of {n}, missing {len(self.missing(n))}, "
            f"samples delivered k times: {self.copies()}"
            + (f"; {self.detail[:1500]}" if self.detail else "")
        )


class Cluster:
    """A fault-tolerant dispatcher and ``workers`` workers on localhost, each in its own
    process; every process it starts is killed by `close`.
    """

    def __init__(
        self,
        root: Path,
        *,
        workers: int = 2,
        dispatcher: dict[str, object] | None = None,
        worker: dict[str, object] | None = None,
    ) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.address = f"localhost:{self.port}"
        self.worker_ports = [free_port() for _ in range(workers)]
        self.dispatcher_config = {
            "port": self.port,
            "work_dir": str(root / "work_dir"),
            "fault_tolerant_mode": True,
            # Static sharding (ShardingPolicy.DATA, FILE, HINT...) needs the workers' fixed
            # addresses: a worker's index in this list is its shard.
            "worker_addresses": [f"localhost:{port}" for port in self.worker_ports],
            **(dispatcher or {}),
        }
        self.worker_config = dict(worker or {})
        self.procs: list[Proc] = []  # everything started, for close
        self.servers: dict[str, Proc] = {}  # "dispatcher" or a worker's port: its process
        self.env = {
            **os.environ,
            "TF_CPP_MIN_LOG_LEVEL": "0",
            "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]),
        }
        self.env.pop("TF_CONFIG", None)
        self._client: Proc | None = None  # a worker address that will never come back is registered

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for proc in self.procs:
            proc.kill()

    def _start(self, name: str, args: list[str]) -> Proc:
        proc = Proc(name, args, self.root / f"{name}.log", self.env)
        self.procs.append(proc)
        return proc

    def start_dispatcher(self) -> Proc:
        """(Re)start the dispatcher at the cluster's port and work_dir; does not wait."""
        config = json.dumps(self.dispatcher_config)
        proc = self._start("dispatcher", ["-c", SERVER, "dispatcher", config])
        self.servers["dispatcher"] = proc
        return proc

    def start_worker(self, port: int) -> Proc:
        """(Re)start the worker at ``localhost:port``; does not wait."""
        config = {"dispatcher_address": self.address, "port": port, **self.worker_config}
        proc = self._start(f"worker-{port}", ["-c", SERVER, "worker", json.dumps(config)])
        self.servers[str(port)] = proc
        return proc

    def kill(self, server: str | int) -> None:
        """SIGKILL ``"dispatcher"`` or the worker at a port."""
        self.servers[str(server)].kill()

    def heal(self, timeout: float = 120) -> None:
        """Restart every dead server at its address and wait until all are ready."""
        if not self.servers.get("dispatcher") or not self.servers["dispatcher"].alive():
            self.start_dispatcher()
        for port in self.worker_ports:
            proc = self.servers.get(str(port))
            if proc is None or not proc.alive():
                self.start_worker(port)
        starting = [p for p in self.servers.values() if p.alive() and not p.ready]
        wait_ready(*starting, timeout=timeout)

    def start_client(self) -> Proc:
        """Start the client process now (its imports overlap other start-ups); `client` uses it."""
        if self._client is None or not self._client.alive():
            self._client = self._start("client", ["-c", CLIENT])
        return self._client

    def client(self, inputs: str, labels: str, **cfg: object) -> Proc:
        """The client, given the epoch to run: the npyio pipeline of ``inputs`` and ``labels``
        with ``cfg``'s settings (see `CLIENT`); `consume` runs it.
        """
        cfg = {
            "inputs": inputs,
            "labels": labels,
            "service": f"grpc://{self.address}",
            "policy": "DYNAMIC",
            "batch_size": 4,
            "shuffle": True,
            "seed": 7,
            "sleep_us": 0,
            "repeat": False,
            "take": 0,
            "options": {},
            "stall_s": 3600,
            **cfg,
        }
        client = self.start_client()
        client.send(json.dumps(cfg))
        return client

    def tails(self, chars: int = 1500) -> str:
        return "\n".join(proc.tail(chars) for proc in self.procs[-6:])


def wait_ready(*procs: Proc, timeout: float = 120) -> None:
    """Wait until every process printed ``ready`` (they start in parallel)."""
    deadline = time.monotonic() + timeout
    for proc in procs:
        proc.expect("ready", deadline - time.monotonic())


def consume(
    client: Proc,
    *,
    timeout: float,
    fault_after: int | None = None,
    fault: Callable[[], None] | None = None,
) -> Epoch:
    """Send ``go`` and read the client's batches until it ends, fails or stalls, or until
    ``timeout`` seconds pass; the client is killed in every case (a hang fails the test instead
    of stalling the suite); it is killed unless the epoch ended, when it waits for the next
    one. ``fault`` runs once the client has received ``fault_after`` batches.
    """
    epoch = Epoch()
    try:
        client.expect("ready", 120)
        client.send("go")
        start = time.monotonic()
        deadline = start + timeout
        while True:
            try:
                line = client.next_line(deadline - time.monotonic())
            except queue.Empty:
                epoch.how = "timeout"
                break
            if line is None:
                epoch.how = "exited"
                epoch.detail = client.tail(2000)
                break
            word, _, rest = line.partition(" ")
            if word == "batch":
                epoch.ids.extend(json.loads(rest))
                epoch.times.append(time.monotonic() - start)
                if fault is not None and len(epoch.times) == fault_after:
                    epoch.before_fault = len(epoch.ids)
                    fault()
                    epoch.fault_at = time.monotonic() - start
            elif word in ("end", "stalled"):
                epoch.how = word
                break
            elif word == "error":
                epoch.how = word
                epoch.detail = json.loads(rest)
                break
        epoch.seconds = time.monotonic() - start
    finally:
        if epoch.how != "end":
            client.kill()
    return epoch
