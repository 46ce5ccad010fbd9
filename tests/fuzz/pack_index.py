"""The pack index fuzzer: a valid small pack whose ``npyio-pack.json`` is mutated.

Mutations: a value replaced by another type or number (negative, zero, huge, off by one), shard
and row names made unsafe (separators, ``..``, absolute, schemes, empty, duplicates), keys
removed and added, list items dropped and repeated, and the JSON text truncated. Each case ends
one of two ways, or the case fails:

- `npyio.dataset` of the pack gives exactly the packed rows (the mutation changed nothing that
  matters: a part's name, an extra key, a digest only ``verify`` reads);
- it raises an `NpyioError` naming the index (and ``npyio verify`` finds a problem too).

The cases run in one long-lived child process under ``RLIMIT_AS`` (the address space it had when
warm, plus `HEADROOM`), so an allocation sized by a lying count fails the case (a
``MemoryError`` or a dead child), not the machine; a case that does not answer within
`TIMEOUT` seconds is a hang.
"""

from __future__ import annotations

import atexit
import json
import multiprocessing
import os
import tempfile
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.fuzz import oracle

#: Address space the child may grow by once warm (TensorFlow reserves much more than it uses).
HEADROOM = 2 << 30
#: Seconds a case may take before it counts as a hang.
TIMEOUT = 60.0
#: The valid pack: FILES files of ROW float32 rows, labels, SHARD_ROWS rows a shard.
FILES, ROW, SHARD_ROWS = 10, (3, 2), 4

#: Shard and row names no index may point at.
UNSAFE_NAMES = [
    "",
    ".",
    "..",
    "../x/00000.npy",
    "../p/inputs-00000-of-00003.npy",
    "/etc/passwd",
    "/tmp/inputs-00000-of-00003.npy",
    "gs://bucket/x.npy",
    "file:///x.npy",
    "ram://x/inputs-00000-of-00003.npy",
    "sub/inputs-00000-of-00003.npy",
    "a\\b.npy",
    "C:x.npy",
    "x\x00.npy",
    "inputs-00000-of-00003.npy.tmp",
    "npyio-pack.json",
    "npyio-pack.incomplete",
    "nothing.npy",
]
NUMBERS = [0, -1, 1, 2, 3, 4, 5, 9, 10, 11, 2**31, 2**62, 2**63, 2**64, 10**9, -(2**63)]


# --- the child ------------------------------------------------------------------------------
def _address_space() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _leaves(ds: Any) -> list[Any]:
    import numpy as np
    import tensorflow as tf

    out = [[] for _ in tf.nest.flatten(ds.element_spec)]
    for element in ds.as_numpy_iterator():
        for column, leaf in zip(out, tf.nest.flatten(element)):
            column.append(leaf)
    return [np.concatenate(c) for c in out]


def _serve(conn: Any, root: str) -> None:
    """The child: packs the valid pack, answers its index and rows, then runs cases."""
    import resource

    import numpy as np

    import npyio
    from npyio._format.packed import INDEX
    from npyio._io.packed import load_index, verify_pack

    os.makedirs(f"{root}/x")
    for i in range(FILES):
        np.save(f"{root}/x/{i:03d}.npy", np.full(ROW, i, "f4") + np.arange(6).reshape(ROW))
    row_bytes = 4 * ROW[0] * ROW[1]
    npyio.pack(
        f"{root}/x", np.arange(FILES) % 3, out=f"{root}/p", shard_size=SHARD_ROWS * row_bytes
    )
    index = f"{root}/p/{INDEX}"
    with open(index) as f:
        valid = f.read()
    want = _leaves(npyio.dataset(f"{root}/p", batch_size=3))
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + HEADROOM, resource.RLIM_INFINITY))
    conn.send((valid, index))
    read: dict[str | None, list[Any]] = {}
    while True:
        text = conn.recv()
        if text is None:
            return
        with open(index, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            key = repr(load_index(f"{root}/p"))
        except npyio.NpyioError:
            key = None
        try:
            # The dataset is a function of the parsed index and the shards: an index that
            # parses to one already read gives the rows it gave (the check is not skipped).
            got = read[key] if key in read else _leaves(npyio.dataset(f"{root}/p", batch_size=3))
        except npyio.NpyioError as e:
            problems = verify_pack(f"{root}/p")[1]
            conn.send(("refused", type(e).__name__, str(e), len(problems)))
            continue
        except BaseException as e:  # reported, never raised: the child serves on
            conn.send(("crashed", type(e).__name__, str(e)[:2000], 0))
            continue
        same = len(got) == len(want) and all(
            g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)
            for g, w in zip(got, want)
        )
        if key is not None:
            read[key] = got
        conn.send(("rows" if same else "different", "", "", 0))


@dataclass
class _Child:
    process: Any
    conn: Any
    valid: str
    index: str
    tmp: Any


_CHILD: list[_Child] = []


def _start() -> _Child:
    ctx = multiprocessing.get_context("spawn")
    tmp = tempfile.TemporaryDirectory(prefix="npyio-index-fuzz-")
    parent, child = ctx.Pipe()
    process = ctx.Process(target=_serve, args=(child, tmp.name), daemon=True)
    process.start()
    if not parent.poll(300):
        process.kill()
        raise RuntimeError("the index fuzzer's child did not start within 300 s")
    valid, index = parent.recv()
    return _Child(process, parent, valid, index, tmp)


def child() -> _Child:
    """The warm child, started on first use (again after a case killed it)."""
    if not _CHILD or not _CHILD[0].process.is_alive():
        _CHILD[:] = [_start()]
    return _CHILD[0]


@atexit.register
def _stop() -> None:
    for c in _CHILD:
        if c.process.is_alive():
            c.conn.send(None)
            c.process.join(10)
        c.tmp.cleanup()


def outcome(text: str) -> tuple[str, str, str, int]:
    """How `npyio.dataset` of the pack with this index text ends: ``(kind, error type, message,
    verify's problem count)``; kind is ``rows``, ``refused``, ``crashed``, ``different``,
    ``hang`` or ``died``."""
    c = child()
    c.conn.send(text)
    if not c.conn.poll(TIMEOUT):
        c.process.kill()
        return "hang", "", f"no answer within {TIMEOUT} s", 0
    try:
        return c.conn.recv()
    except EOFError:
        return "died", "", f"the child died (exit code {c.process.exitcode})", 0


def check(text: str) -> None:
    """One case: the packed rows, or an NpyioError naming the index."""
    kind, error, message, problems = outcome(text)
    oracle.STATS[f"index: {kind}"] += 1
    index = child().index
    if kind == "rows":
        return
    if kind == "refused" and message.startswith(index + ": ") and problems:
        return
    raise AssertionError(f"index case ended as {kind}: {error}: {message} (verify: {problems})")


# --- the mutations --------------------------------------------------------------------------
def _paths(node: Any, at: tuple = ()) -> list[tuple]:
    """The path (keys and indices) of every node under ``node``."""
    out = [at]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*at, i))
    return out


def _values(names: list[str]) -> st.SearchStrategy:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from(NUMBERS),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(UNSAFE_NAMES + names),
        st.text(max_size=8),
    )
    return st.one_of(
        scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=4), scalars)
    )


def _mutate(draw: st.DrawFn, doc: Any, names: list[str]) -> Any:
    path = draw(st.sampled_from(_paths(doc)))
    if not path:
        return doc
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, old = path[-1], parent[path[-1]]
    op = draw(st.sampled_from(["replace", "number", "name", "remove", "add", "repeat", "swap"]))
    if op == "number" and isinstance(old, int) and not isinstance(old, bool):
        parent[key] = old + draw(st.sampled_from([-1, 1])) if draw(st.booleans()) else old * 1000
    elif op == "name" and isinstance(old, str):
        parent[key] = draw(st.sampled_from(UNSAFE_NAMES + names))
    elif op == "remove":
        del parent[key]
    elif op == "add" and isinstance(old, dict):
        old[draw(st.sampled_from(["extra", "rows", "name", "dict", "tuple", "x"]))] = draw(
            _values(names)
        )
    elif op == "repeat" and isinstance(old, list) and old:
        old.insert(draw(st.integers(0, len(old))), draw(st.sampled_from(old)))
    elif op == "swap" and isinstance(old, list) and len(old) > 1:
        i, j = draw(st.permutations(range(len(old))))[:2]
        old[i], old[j] = old[j], old[i]
    else:
        parent[key] = draw(_values(names))
    return doc


@st.composite
def mutated_indexes(draw: st.DrawFn) -> str:
    """The valid index's text, mutated: 1-3 edits of its JSON, then maybe truncated."""
    valid = child().valid
    doc = json.loads(valid)
    names = [f["name"] for s in doc["shards"] for f in s["files"]]
    for _ in range(draw(st.integers(1, 3))):
        doc = _mutate(draw, doc, names)
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 1])))
    if draw(st.integers(0, 7)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text
