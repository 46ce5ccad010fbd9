"""Where the time goes, by category: npyio's default pipeline under ``perf``, per profile and
batch size, beside the C read loop and the empty iterator (issue 53, point 1).

A case is ``npyio.dataset(inputs, labels, batch_size=B)`` (the default: the native reader on
local files) over one of ``npyio bench``'s sample profiles (`npyio.cli.sample.PROFILES`,
written once under ``--root``), drained in a fresh process either by a Python iterator
(``for batch in ds``, as Keras and JAX loops read) or by one ``Dataset.reduce`` per epoch. The
child drains two warm-up epochs (the first fills the page cache and pays the first iterator's
tracing and rewrites; the second's time sizes the measured part), says it is ready, and only
then do the tools attach to it, so TensorFlow's import and the first iterator are left out:

- ``perf record -a -e cpu-clock -g`` samples both cores while the child drains the measured
  epochs, and the child's samples are kept (by process id: attached by ``-p``, perf would miss
  the threads each new tf.data iterator starts), the share of the machine's samples that were
  the child's, idle or other processes' beside them (software clock only: this machine has no
  hardware counters). Each
  sample is put in one `CATEGORIES` by its stack (`classify`): the frames are read from the
  leaf up and the first that a `RULES` pattern names decides. Kernel stacks are whole;
  user-space stacks go through frame pointers, which TensorFlow's libraries mostly lack, so
  there the leaf symbol usually decides (a sample in generic code whose callers are lost is
  "TF, other"). Shares are of the child's own samples, so the machine's load (other
  processes) barely moves them, unlike its throughput.
- ``getrusage`` in the child, over the measured epochs only: CPU seconds, minor page faults
  and context switches (voluntary: a thread waited; involuntary: it was preempted) per batch.
- ``strace -c -f -p PID`` (a separate child, one epoch, with the iterator drain: strace slows
  every call, so only its counts are used): system calls per batch, and the busiest ones.

Beside them, the ceilings: the native core's bench driver (``driver bench``, the C read loop
of ``npyio bench``'s "native bare read loop": every core reads whole files into reused
buffers), under ``perf record`` too; ``tf.data.Dataset.range(n).batch(8)`` drained by a
Python iterator, the iterator's own ceiling (also profiled); and per profile one in-memory batch
of its (inputs, labels) repeated (`MEMORY`), the ceiling of a Python iterator over that element:
an iterator pays per component, so a pair's ceiling is well under ``range``'s.

``--malloc [VARIANT ...]`` runs the large profile at batch 128 (a 512 MiB input tensor per
batch; the labels' is 5 KiB) with the iterator, once per `MALLOC_VARIANTS` entry named (all
where none is): environment variables set for the child only (glibc's defaults, glibc's mmap
and trim thresholds, TensorFlow's BFC allocator on the CPU, oneDNN off, which takes away the
allocator TensorFlow's CPU device has with oneDNN on). It reports faults per batch, peak RSS and
the share of samples in page faults, zeroing and ``munmap``: a measurement, nothing npyio
sets. Keep it to a few batches (``--max-gib``): each batch holds 512 MiB and tf.data keeps
several in flight.

The table (``--record``: bench/results/breakdown.json and .md through bench/results.py) has a row
per case: rates, CPU per batch, counters and the share of each category.

    PYTHONPATH=. .venv/bin/python bench/breakdown.py --profiles small --batches 8 128
    PYTHONPATH=. .venv/bin/python bench/breakdown.py --profiles large --batches 128 --malloc \\
        --max-gib 2 --record --load "5-7 (shared)"
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's npyio, not an installed one
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench/results.py

DRAINS = ("iterator", "reduce")
#: Environment variables for the child of each ``--malloc`` variant.
MALLOC_VARIANTS: dict[str, dict[str, str]] = {
    "glibc defaults": {},
    "glibc mmap 32 MiB, trim 4 GiB": {
        "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
        "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
    },
    "glibc mmap 1 GiB, trim 4 GiB": {
        "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
        "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
    },
    "TF BFC allocator on CPU": {"TF_CPU_ALLOCATOR_USE_BFC": "true"},
    # oneDNN on (TF's default on x86 Linux) gives the CPU device oneDNN's allocator
    "oneDNN off": {"TF_ENABLE_ONEDNN_OPTS": "0"},
    "oneDNN off, glibc mmap 1 GiB, trim 4 GiB": {
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
        "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
    },
    "oneDNN off, TF BFC allocator on CPU": {
        "TF_ENABLE_ONEDNN_OPTS": "0",
        "TF_CPU_ALLOCATOR_USE_BFC": "true",
    },
}

#: The categories of the table, in its order.
CATEGORIES = (
    "syscalls",
    "copies: kernel read",
    "copies: memcpy/memmove",
    "page faults",
    "zeroing",
    "malloc/free, mmap/munmap",
    "hand-offs: futex, scheduler",
    "hand-offs: locks, pools (user)",
    "executor, op launches",
    "functions, tf.cond",
    "AttrValue, protobuf",
    "graph passes (MLIR, Grappler)",
    "tf.data: prefetch",
    "tf.data: parallel map",
    "tf.data: batch",
    "tf.data: autotune model",
    "tf.data: other",
    "npyio op (own code)",
    "eager dispatch",
    "Python",
    "Python GC",
    "kernel, other",
    "TF, other",
    "other",
)

#: The categories summed into issue 53's groups, for the summary table.
GROUPS: dict[str, tuple[str, ...]] = {
    "syscalls": ("syscalls",),
    "copies": ("copies: kernel read", "copies: memcpy/memmove"),
    "faults, zeroing": ("page faults", "zeroing"),
    "malloc/free": ("malloc/free, mmap/munmap",),
    "hand-offs": ("hand-offs: futex, scheduler", "hand-offs: locks, pools (user)"),
    "ops, tf.cond": (
        "executor, op launches",
        "functions, tf.cond",
        "AttrValue, protobuf",
        "graph passes (MLIR, Grappler)",
    ),
    "tf.data steps": tuple(c for c in CATEGORIES if c.startswith("tf.data")),
    "npyio op": ("npyio op (own code)",),
    "Python iterator": ("eager dispatch", "Python", "Python GC"),
    "other": ("kernel, other", "TF, other", "other"),
}

#: (category, pattern) per frame, in order: the first pattern that matches a frame (symbol,
#: then its library after a tab) decides, frames read from the leaf up.
RULES: tuple[tuple[str, str], ...] = (
    ("zeroing", r"^clear_page|^clear_user|^(__)?memset|^__bzero"),
    ("page faults", r"^asm_exc_page_fault|^exc_page_fault|^handle_mm_fault|^do_user_addr_fault"),
    (
        "malloc/free, mmap/munmap",
        r"^__x64_sys_(munmap|mmap|brk|madvise|mremap)|^__vm_munmap|^do_mmap|^unmap_region|"
        r"^(__libc_|_int_|_mid_|__posix_)?(malloc|free|memalign|realloc|calloc)\b|^cfree|"
        r"^posix_memalign|^aligned_alloc|^malloc_consolidate|^unlink_chunk|^sysmalloc|"
        r"^systrim|^munmap_chunk|^tcache|^operator new|^operator delete|AlignedMalloc|"
        r"AlignedFree|Allocator::(Allocate|Deallocate)|BFCAllocator|^(munmap|mmap64|mmap)$",
    ),
    ("hand-offs: futex, scheduler", r"^__x64_sys_futex|^futex_|^__schedule|^schedule\b"),
    ("hand-offs: futex, scheduler", r"^finish_task_switch|^__x64_sys_sched_yield"),
    (
        "copies: kernel read",
        r"^copy_user|^_copy_to_(iter|user)|^copy_page_to_iter|^rep_movs|^copyout|^copy_to_user",
    ),
    ("copies: memcpy/memmove", r"^(__)?mem(cpy|move|pcpy)|batch_util::Copy|^std::copy"),
    ("syscalls", r"^entry_SYSCALL|^do_syscall_64|^__x64_sys_|^syscall_exit"),
    (
        "hand-offs: locks, pools (user)",
        r"pthread_cond|pthread_mutex|__lll_lock|__futex|^nsync|absl::[\w:]*(Mutex|CondVar)|"
        r"synchronization_internal|tsl::mutex|condition_variable|ThreadPoolTempl|EventCount|"
        r"Notification|BlockingCounter|^sched_yield|RunQueue|EigenEnvironment|ThreadPool::",
    ),
    ("graph passes (MLIR, Grappler)", r"mlir::|grappler|Grappler|GraphOptimiz|^llvm::"),
    ("graph passes (MLIR, Grappler)", r"GraphConstructor|ConvertGraphDefToGraph|Placer|MetaOpt"),
    ("AttrValue, protobuf", r"AttrValue|google::protobuf|NodeDef|AttrSlice|FunctionDef\b"),
    ("tf.data: prefetch", r"data::PrefetchDatasetOp|data::PrefetchAutotuner"),
    ("tf.data: parallel map", r"data::ParallelMapDatasetOp|data::ParallelMapIterator"),
    ("tf.data: batch", r"data::BatchDatasetOp|data::batch_util"),
    # tf.data times every element for its model (RecordStart/RecordStop): the clock's callers
    ("tf.data: autotune model", r"data::model::|ModelDatasetOp|RamBudget|AutotuneAlgorithm"),
    ("tf.data: autotune model", r"RecordStart|RecordStop|RecordElement|clock_gettime"),
    ("functions, tf.cond", r"IfOp|SwitchOp|MergeOp|CapturedFunction|FunctionLibraryRuntime"),
    ("functions, tf.cond", r"CallFrame|InstantiatedFunction|data::RunFunction|FunctionCall"),
    ("tf.data: other", r"tensorflow::data::|IteratorGetNext|IteratorResource"),
    (
        "executor, op launches",
        r"ExecutorState|ExecutorImpl|PropagatorState|SingleThreadedExecutor|OpKernelContext|"
        r"OpKernel::|KernelAndDevice|Rendezvous|NodeItem|ExecutorBarrier|tensorflow::Device",
    ),
    ("npyio op (own code)", r"\t.*npyio[^/]*\.so|\t.*/native/"),
    # every eager op (IteratorGetNext too) captures the Python stack with its line numbers
    # (TFE_Py_FastPathExecute_C -> StackTrace::Capture -> PyCode_Addr2Line, seen by
    # perf --call-graph dwarf), so the line-number search counts as dispatch, not Python
    ("eager dispatch", r"^_PyCode_CheckLineNumber|^PyCode_Addr2Line|StackTrace::Capture"),
    ("eager dispatch", r"^TFE_|Eager|pybind11|tensorflow::Py|^PyTFE|_pywrap_tfe"),
    ("Python GC", r"^gc_collect|^visit_(decref|reachable)|^subtract_refs|^move_unreachable"),
    ("Python GC", r"^_?PyObject_GC|^\w+_traverse$|^update_refs|^deduce_unreachable"),
    ("Python", r"\t.*(libpython|/python3[.\d]*$)|^_?Py|^PyEval"),
    ("kernel, other", r"\t\[kernel"),
    ("TF, other", r"\t.*tensorflow|\t.*libtensorflow"),
)
#: Categories that say only which library a frame ran in: a frame further up may say more.
WEAK = frozenset({"Python", "kernel, other", "TF, other"})
_RULES = tuple((c, re.compile(p)) for c, p in RULES)


def classify(frames: Sequence[tuple[str, str]]) -> str:
    """The category of one sample, from its frames ``(symbol, library)`` leaf first. Frames are
    read from the leaf up: the first that a `RULES` pattern of a category not in `WEAK` names
    decides; where none does, the first weak match (which library the leaf ran in), else
    "other". So a spin lock in the kernel counts for the futex or the page fault above it,
    and generic TensorFlow code for the executor that called it, where the stack shows it."""
    weak = None
    for symbol, dso in frames:
        text = f"{symbol}\t{dso}"
        for category, pattern in _RULES:
            if pattern.search(text):
                if category not in WEAK:
                    return category
                weak = weak or category
    return weak or "other"


_FRAME = re.compile(r"^\s*[0-9a-f]+ (.*) \((.*)\)$")


def samples(script: str) -> Iterable[tuple[str, int, list[tuple[str, str]]]]:
    """The samples of ``perf script -F comm,pid,tid,ip,sym,dso`` output: (thread name, or
    "main thread" for a process's first, process id, frames leaf first as (symbol, library))."""
    head: tuple[str, int] | None = None
    frames: list[tuple[str, str]] = []
    for line in script.splitlines():
        if not line.strip():
            if head is not None:
                yield head[0], head[1], frames
            head, frames = None, []
        elif head is None:
            m = _HEAD.match(line)
            head = (m.group(1).strip(), int(m.group(2))) if m else ("?", -1)
            if m and m.group(2) == m.group(3):
                head = ("main thread", head[1])
        else:
            m = _FRAME.match(line)
            if m:
                symbol = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1))
                frames.append((symbol, m.group(2)))
    if head is not None:
        yield head[0], head[1], frames


_HEAD = re.compile(r"^(.*?)\s+(\d+)/(\d+)\s*$")


def thread_group(comm: str) -> str:
    """A thread's name without its number (``tf_data_private_threadpool`` for all of them)."""
    return re.sub(r"[\d_/-]+$", "", comm) or comm


def tally(script: str, pid: int | None = None) -> dict[str, Any]:
    """Samples per category, per thread group, and the leaf symbols most sampled, of process
    ``pid`` (every process where None); of a system-wide recording, also the share of all
    samples that were ``pid``'s, idle (the ``swapper``) and other processes'."""
    by_category: collections.Counter[str] = collections.Counter()
    by_thread: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    machine: collections.Counter[str] = collections.Counter()
    for comm, owner, frames in samples(script):
        if pid is not None and owner != pid:
            machine["idle" if comm.startswith("swapper") or owner == 0 else "others"] += 1
            continue
        machine["this"] += 1
        by_category[classify(frames)] += 1
        by_thread[thread_group(comm)] += 1
        leaves[frames[0][0] if frames else "[none]"] += 1
    total = sum(machine.values()) or 1
    out = {
        "samples": sum(by_category.values()),
        "categories": dict(by_category),
        "threads": dict(by_thread.most_common(8)),
        "leaves": dict(leaves.most_common(25)),
    }
    if pid is not None:
        out["machine"] = {k: machine[k] / total for k in ("this", "idle", "others")}
    return out


def shares(counts: dict[str, int]) -> dict[str, float]:
    """Each category's share of the samples, in `CATEGORIES` order (0 where none)."""
    total = sum(counts.values()) or 1
    return {c: counts.get(c, 0) / total for c in CATEGORIES}


# --- the child --------------------------------------------------------------------------------
#: A case's profile with this prefix is the iterator's ceiling for that profile's element: one
#: in-memory batch of its (inputs, labels), repeated for an epoch's batches. A Python iterator
#: pays per component of an element, so a pair's ceiling is not ``range(n).batch(B)``'s.
MEMORY = "in memory: "


class Case(NamedTuple):
    """One measured process: ``profile`` (a `npyio.cli.sample.PROFILES` name, that name after
    `MEMORY` for its element's ceiling, or ``empty`` for ``range(pairs).batch(batch)``), the
    batch size, the drain, the pairs read (default: the
    profile's) and the `MALLOC_VARIANTS` entry set for the child."""

    profile: str
    batch: int
    drain: str = "iterator"
    pairs: int | None = None
    variant: str = ""

    def name(self) -> str:
        extra = f", {self.variant}" if self.variant else ""
        return f"{self.profile} b{self.batch} {self.drain}{extra}"


def _dataset(case: Case, root: str) -> tuple[Any, int]:
    """The case's dataset and the bytes of one epoch."""
    import tensorflow as tf

    if case.profile == "empty":
        return tf.data.Dataset.range(case.pairs or 400_000).batch(case.batch), 0
    import npyio
    from npyio.cli import sample

    name = case.profile.removeprefix(MEMORY)
    profile = sample.PROFILES[name]
    if case.pairs:
        profile = dataclasses.replace(profile, count=case.pairs)
    if name != case.profile:  # one batch of the profile's element, repeated: nothing is read
        spec = npyio.dataset(*sample.paths(profile, sample.ensure(profile, root, quiet=True)),
                             batch_size=case.batch).element_spec  # fmt: skip
        batch = tuple(tf.zeros([case.batch, *s.shape[1:]], s.dtype) for s in spec)
        return tf.data.Dataset.from_tensors(batch).repeat(profile.count // case.batch), 0
    xs, ys = sample.paths(profile, sample.ensure(profile, root, quiet=True))
    return npyio.dataset(xs, ys, batch_size=case.batch), profile.count * profile.pair_bytes


def _drain(ds: Any, how: str) -> tuple[int, int]:
    """One epoch of ``ds``: (samples, batches)."""
    import tensorflow as tf

    if how == "reduce":

        def count(total: Any, element: Any) -> Any:
            first = tf.nest.flatten(element)[0]
            return total + tf.stack([tf.cast(tf.shape(first)[0], tf.int64), 1])

        n, b = ds.reduce(tf.constant([0, 0], tf.int64), count).numpy()
        return int(n), int(b)
    n = b = 0
    for element in ds:
        n += int(tf.nest.flatten(element)[0].shape[0])
        b += 1
    return n, b


def _usage() -> dict[str, float]:
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "cpu_s": u.ru_utime + u.ru_stime,
        "minflt": u.ru_minflt,
        "nvcsw": u.ru_nvcsw,
        "nivcsw": u.ru_nivcsw,
        "wall_s": time.perf_counter(),
    }


def child(case: Case, root: str, seconds: float, max_gib: float, epochs: int) -> dict[str, Any]:
    """Runs in the child: two warm-up epochs, "ready" on stdout, then (after a line on stdin) the
    measured epochs: ``epochs``, or as many as fill ``seconds`` at the second warm-up's pace,
    at most ``max_gib`` of data. Returns the counters over the measured epochs, and the
    process's peak RSS."""
    import resource

    ds, epoch_bytes = _dataset(case, root)
    _drain(ds, case.drain)  # the first iterator: tracing, graph rewrites, the page cache
    start = time.perf_counter()
    _drain(ds, case.drain)
    warm = time.perf_counter() - start
    if not epochs:
        epochs = max(1, round(seconds / max(warm, 1e-3)))
        if epoch_bytes:
            epochs = max(1, min(epochs, int(max_gib * 2**30 // epoch_bytes)))
    print(json.dumps({"ready": os.getpid(), "warm_s": warm, "epochs": epochs}), flush=True)
    sys.stdin.readline()
    before, n, b = _usage(), 0, 0
    for _ in range(epochs):
        dn, db = _drain(ds, case.drain)
        n, b = n + dn, b + db
    after = _usage()
    out = {k: after[k] - before[k] for k in after}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {**out, "samples": n, "batches": b, "epochs": epochs, "warm_s": warm, "peak_mib": peak}


# --- the parent -------------------------------------------------------------------------------
def _start_tool(tool: str, pid: int, out: str) -> subprocess.Popen[bytes] | None:
    if tool == "perf":
        # system-wide: tf.data starts its threads with each iterator, after any attach by pid
        command = ["perf", "record", "-q", "-a", "-e", "cpu-clock", "-F", "1999", "-g"]
        command += ["-o", out]
    elif tool == "strace":
        command = ["strace", "-c", "-f", "-p", str(pid), "-o", out]
    else:
        return None
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)  # let it attach to every thread before the measured epochs start
    return proc


def _stop_tool(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)


def measure(case: Case, args: argparse.Namespace, tool: str = "", epochs: int = 0) -> dict:
    """Runs ``case`` in a fresh child with ``tool`` (``perf``, ``strace`` or none) attached over
    its measured epochs; the child's counters, the load, and the tool's findings."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **MALLOC_VARIANTS.get(case.variant, {}))
    command = [sys.executable, __file__, "--child", json.dumps(case._asdict())]
    command += ["--root", args.root, "--seconds", str(args.seconds)]
    command += ["--max-gib", str(args.max_gib), "--epochs", str(epochs)]
    with tempfile.TemporaryDirectory(prefix="npyio-profile-") as tmp:
        out = os.path.join(tmp, tool or "none")
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
        with subprocess.Popen(command, env=env, **pipes) as proc:  # type: ignore[call-overload]
            ready = json.loads(proc.stdout.readline() or "{}")
            if "ready" not in ready:
                raise SystemExit(f"{case.name()}: the child failed before its warm-up ended")
            attached = _start_tool(tool, proc.pid, out)
            load = os.getloadavg()[0]
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
            result = json.loads(proc.stdout.readline())  # before the child's teardown
            _stop_tool(attached)
        if proc.returncode:
            raise SystemExit(f"{case.name()}: the child exited {proc.returncode}")
        result["load"] = [load, os.getloadavg()[0]]
        if tool == "perf":
            result["perf"] = tally(_perf_script(out), proc.pid)
        elif tool == "strace":
            result["strace"] = parse_strace(Path(out).read_text())
    return result


def _perf_script(data: str) -> str:
    command = ["perf", "script", "-i", data, "-F", "comm,pid,tid,ip,sym,dso"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def parse_strace(text: str) -> dict[str, int]:
    """``strace -c``'s table: calls per system call."""
    calls = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 5 and re.fullmatch(r"[\d.]+", words[0]) and words[-1] != "total":
            calls[words[-1]] = int(words[3])
    return calls


def c_loop(profile: str, args: argparse.Namespace) -> dict[str, Any]:
    """The native core's bench driver on every core over the profile's inputs, then its
    labels (as ``npyio bench``'s bare loop): pairs/s from the driver's own timing, CPU seconds
    from its rusage; then again under ``perf record`` (where ``args.perf``) for its shares."""
    from npyio._native.library import build_driver
    from npyio.cli import sample

    p = sample.PROFILES[profile]
    if args.count:
        p = dataclasses.replace(p, count=args.count)
    xs, ys = sample.paths(p, sample.ensure(p, args.root, quiet=True))
    driver, threads = build_driver(), str(os.cpu_count() or 1)
    seconds = cpu = 0.0
    script = ""
    with tempfile.TemporaryDirectory(prefix="npyio-profile-") as tmp:
        for side, paths in (("inputs", xs), ("labels", ys)):
            listing = os.path.join(tmp, side)
            with open(listing, "w") as f:
                f.write("".join(f"{path}\n" for path in paths))
            # a warm-up pass first, as npyio's cases have: the timed pass reads the page cache,
            # not the disk (an untouched profile read cold here at a tenth of its warm rate)
            subprocess.run([driver, "bench", threads, listing], capture_output=True, check=True)
            before = os.times()
            text = subprocess.run(
                [driver, "bench", threads, listing], capture_output=True, text=True, check=True
            ).stdout
            after = os.times()
            cpu += after.children_user + after.children_system
            cpu -= before.children_user + before.children_system
            fields = dict(zip(text.split()[::2], text.split()[1::2]))
            if fields.get("ok") != str(len(paths)):
                raise SystemExit(f"{listing}: the driver read {fields.get('ok')} of {len(paths)}")
            side_s = float(fields["seconds"])
            seconds += side_s
            if args.perf:  # the list repeated, for about 2 s of samples
                with open(listing, "a") as f:
                    f.write("".join(f"{path}\n" for path in paths) * int(2 / max(side_s, 0.01)))
                data = os.path.join(tmp, f"{side}.data")
                command = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "1999", "-g"]
                command += ["-o", data, "--", driver, "bench", threads, listing]
                subprocess.run(command, capture_output=True, check=True)
                script += _perf_script(data) + "\n"
    result = {"samples": len(xs), "wall_s": seconds, "cpu_s": cpu, "load": os.getloadavg()[0]}
    return result | ({"perf": tally(script)} if script else {})


# --- rows and the command ---------------------------------------------------------------------
def _per(value: float, n: int, scale: float = 1.0, digits: int = 1) -> str:
    return f"{value * scale / n:,.{digits}f}" if n else ""


def case_row(name: str, run: dict[str, Any], syscalls: dict[str, int] | None) -> dict[str, str]:
    """A case's cells: its rate, CPU and counters per batch, the busiest system calls per batch
    and each category's share of its perf samples."""
    b, n = run.get("batches", 0), run["samples"]
    row = {
        "case": name,
        "load (1 min)": "-".join(f"{x:.1f}" for x in run["load"])
        if isinstance(run["load"], list)
        else f"{run['load']:.1f}",
        "samples/s": f"{n / run['wall_s']:,.0f}",
        "batches/s": f"{b / run['wall_s']:,.0f}" if b else "",
        "CPU us/sample": _per(run["cpu_s"], n, 1e6),
        "CPU ms/batch": _per(run["cpu_s"], b, 1e3, 2),
        "cores busy": f"{run['cpu_s'] / run['wall_s']:.2f}",
        "faults/batch": _per(run.get("minflt", 0), b),
        "waits/batch": _per(run.get("nvcsw", 0), b),
        "preempted/batch": _per(run.get("nivcsw", 0), b),
        "peak RSS MiB": f"{run['peak_mib']:,.0f}" if "peak_mib" in run else "",
    }
    if syscalls and b:
        total = sum(syscalls.values())
        top = sorted(syscalls.items(), key=lambda kv: -kv[1])[:5]
        row["syscalls/batch"] = f"{total / b:,.1f}"
        row["top syscalls/batch"] = ", ".join(f"{k} {v / b:,.1f}" for k, v in top)
    if "perf" in run:
        row["perf samples"] = str(run["perf"]["samples"])
        if "machine" in run["perf"]:
            m = run["perf"]["machine"]
            row["% of machine: this, idle, others"] = ", ".join(
                f"{100 * m[k]:.0f}" for k in ("this", "idle", "others")
            )
        for category, share in shares(run["perf"]["categories"]).items():
            row[f"% {category}"] = f"{100 * share:.1f}"
    return row


def run_all(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every case the arguments ask for, one after another (never two at once): per profile the
    C loop, then each batch size and drain (perf, then strace for the iterator), then the
    malloc variants and the empty iterator. Returns ``{"case", "run", "syscalls"}`` per row."""
    tool = "perf" if args.perf else ""
    out = []

    def note(name: str, run: dict[str, Any], syscalls: dict[str, int] | None = None) -> None:
        out.append({"case": name, "run": run, "syscalls": syscalls})
        print(json.dumps(case_row(name, run, syscalls)), file=sys.stderr, flush=True)

    for profile in args.profiles:
        if args.ceilings:
            note(f"{profile} C loop", c_loop(profile, args))
        for batch in args.batches:
            for drain in args.drains:
                case = Case(profile, batch, drain, args.count)
                run = measure(case, args, tool)
                calls = None
                if args.strace and drain == "iterator":
                    calls = measure(case, args, "strace", epochs=1)
                    calls = {
                        k: v * run["batches"] // calls["batches"]
                        for k, v in calls["strace"].items()
                    }
                note(case.name(), run, calls)
    if args.malloc is not None:
        for variant in args.malloc or MALLOC_VARIANTS:
            case = Case("large", 128, "iterator", args.count, variant)
            note(case.name(), measure(case, args, tool))
    if args.ceilings:
        for batch in args.batches:
            case = Case("empty", batch, "iterator", args.empty_count)
            note(case.name(), measure(case, args, tool))
            for profile in args.profiles:
                case = Case(f"{MEMORY}{profile}", batch, "iterator", args.count)
                note(case.name(), measure(case, args, tool))
    return out


def summary(runs: list[dict[str, Any]]) -> str:
    """A Markdown table, a line per case: rate, CPU per sample, and each of `GROUPS`' share of
    the case's perf samples (%)."""
    lines = [
        "| case | samples/s | load | CPU us/sample | " + " | ".join(GROUPS) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(GROUPS),
    ]
    for r in runs:
        row = case_row(r["case"], r["run"], r["syscalls"])
        cells = [row["case"], row["samples/s"], row["load (1 min)"], row["CPU us/sample"]]
        if "perf" in r["run"]:
            share = shares(r["run"]["perf"]["categories"])
            cells += [f"{100 * sum(share[c] for c in g):.1f}" for g in GROUPS.values()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def record_rows(runs: list[dict[str, Any]], load: str, command: str) -> list[dict[str, str]]:
    """The table's rows (`bench/results.py`'s head first)."""
    from npyio.cli.bench import machine

    head = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "machine": machine()}
    head |= {"load": load, "command": command}
    return [head | case_row(r["case"], r["run"], r["syscalls"]) for r in runs]


TITLE = "bench/breakdown.py: where the time goes, by category"
ABOUT = (
    "`bench/breakdown.py`: `npyio.dataset(x, y, batch_size=B)` (native reader, page cache warm) "
    "on `npyio bench`'s sample profiles, each case in a fresh process after its warm-up "
    "epochs (two; one where the command says so), drained by a Python iterator or one "
    "`Dataset.reduce` per epoch; the C read loop (the native bench driver on every core) and "
    "`range(n).batch(B)` by iterator beside them. CPU, faults and context switches (waits: "
    "voluntary, preempted: involuntary) are the child's `getrusage` over the measured epochs; "
    "system calls are `strace -c -f` counts (one epoch, scaled); `%` columns are shares of "
    "the child's samples in a `perf record -a -e cpu-clock -g` of the measured epochs, by "
    "category (the script's `RULES`), and `% of machine` the child's, idle and other "
    "processes' shares of all samples. Rates are wall-clock on a shared machine: see the "
    "load; shares and CPU per sample are the process's own."
)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    from npyio.cli import sample

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="*", default=list(sample.PROFILES))
    parser.add_argument("--batches", nargs="+", type=int, default=[8, 128])
    parser.add_argument("--drains", nargs="+", choices=DRAINS, default=list(DRAINS))
    parser.add_argument("--count", type=int, help="pairs per profile (default: npyio bench's)")
    parser.add_argument("--empty-count", type=int, default=400_000, help="range(n) of the ceiling")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured time per case")
    parser.add_argument("--max-gib", type=float, default=4.0, help="data per measured phase")
    parser.add_argument("--root", default=sample.default_cache(), help="where the data goes")
    parser.add_argument("--no-perf", dest="perf", action="store_false")
    parser.add_argument("--no-strace", dest="strace", action="store_false")
    parser.add_argument(
        "--no-ceilings",
        dest="ceilings",
        action="store_false",
        help="skip the C loop and the empty iterator",
    )
    parser.add_argument(
        "--malloc",
        nargs="*",
        choices=list(MALLOC_VARIANTS),
        help="large b128 under these MALLOC_VARIANTS (all where none is named)",
    )
    parser.add_argument("--json", help="write the raw runs (perf's leaves and threads) here")
    parser.add_argument("--runs", help="take the raw runs from this --json file, measure none")
    parser.add_argument("--record", action="store_true", help="add the rows to bench/results")
    parser.add_argument("--load", default="", help="the machine's load, for --record")
    parser.add_argument("--command", help="the measuring command, for --record with --runs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--epochs", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.perf = args.perf and shutil.which("perf") is not None
    args.strace = args.strace and shutil.which("strace") is not None
    return args


def main(argv: Sequence[str]) -> int:
    args = parse(argv)
    if args.child:
        case = Case(**json.loads(args.child))
        print(json.dumps(child(case, args.root, args.seconds, args.max_gib, args.epochs)))
        return 0
    if args.runs:
        with open(args.runs) as f:
            runs = json.load(f)
    else:
        runs = run_all(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    command = args.command or "bench/breakdown.py " + " ".join(argv)
    rows = record_rows(runs, args.load or "unrecorded", f"`{command}`")
    if args.record:
        import results

        if not (results.RESULTS / "breakdown.json").exists():
            results.write("breakdown", {"title": TITLE, "about": ABOUT, "rows": []})
        results.record("breakdown", rows)
    print(summary(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
