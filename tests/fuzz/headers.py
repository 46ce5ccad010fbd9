"""The native header parser against the grammar: ``python -m tests.fuzz.headers --count 1000000``.

Generates file heads (headers written the ways numpy and other writers write them, then
mutated: bytes flipped, inserted, deleted, cut short, spans repeated, the length field and the
version changed), parses each with the core's `parse_header` (``npyio/_native/src/
npy_header.cc``, in the sanitized driver's ``headers`` mode) and with the Python grammar
(`npyio._format.npy.read_header`), and holds the rule of issue 52:

- whatever the C++ parser accepts, the grammar accepts, with the same dtype, byte order,
  order, shape and payload offset (so whatever the grammar refuses, the C++ parser never
  accepts);
- every header numpy's own writer makes (versions 1.0, 2.0 and 3.0), it accepts;
- a sample of what it accepts, the graph parser decodes alike (payload bytes in native order
  and C order). The graph parser is held to the grammar on everything by its own property
  tests (tests/graph/test_decode_properties.py).

It may doubt more than the grammar refuses (then the graph path decides); the counts say how
much. Exit status 0 when the rule holds; the first violations are printed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from npyio._format import npy
from npyio.errors import NpyFormatError
from tests.fuzz.native import build_driver

_CODES = list(npy.CODES)
_ORDERS = ["<", ">", "|", "=", ""]
# Bytes a mutation inserts: the grammar's own punctuation and words' letters, and a few others.
_ALPHABET = b"{}()[]:,'\" \t\n\r\f-0123456789LTFrueals_descrhpofitn<>|=\x00\x7f\x80\xff"


try:  # numpy's writer, with its version argument (numpy 2 moved it)
    from numpy.lib._format_impl import _write_array_header as _WRITE_HEADER
except ImportError:  # numpy 1.x
    from numpy.lib.format import _write_array_header as _WRITE_HEADER  # type: ignore


# --- generating heads -------------------------------------------------------------------------
def _shape(rng: random.Random) -> tuple[int, ...]:
    rank = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 8, 32, 33])
    pick = rng.random()
    if pick < 0.7:
        return tuple(rng.randint(0, 300) for _ in range(rank))
    if pick < 0.85:
        return tuple(
            rng.choice([0, 1, 2**31, 2**40, 10**17, 10**18 - 1, 10**18]) for _ in range(rank)
        )
    return tuple(rng.randint(0, 2**20) for _ in range(rank))


def _ws(rng: random.Random, chars: str = " \t\n\r\f") -> str:
    return (
        "" if rng.random() < 0.6 else "".join(rng.choice(chars) for _ in range(rng.randint(1, 3)))
    )


def _dims_text(rng: random.Random, shape: tuple[int, ...]) -> str:
    if not shape:
        return "(" + _ws(rng) + ")"
    dims = []
    for d in shape:
        text = str(d)
        if rng.random() < 0.02:
            text = rng.choice(["-0", "-1", f"{d}L", f"{d} L", f"0{d}", f"{d}l", f"+{d}"])
        dims.append(text)
    sep = "," + _ws(rng) if rng.random() < 0.5 else ", "
    inner = sep.join(dims)
    comma = len(shape) == 1 or rng.random() < 0.3
    return "(" + _ws(rng) + inner + ("," if comma else "") + _ws(rng) + ")"


def _entries(rng: random.Random, shape: tuple[int, ...]) -> list[str]:
    def q() -> str:  # numpy's quote, or now and then the other
        return rng.choice("'\"") if rng.random() < 0.2 else "'"

    def key(name: str) -> str:
        quote = q()
        return f"{quote}{name}{quote}:{_ws(rng) or ' '}"

    quote = q()
    descr = f"{quote}{rng.choice(_ORDERS)}{rng.choice(_CODES)}{quote}"
    return [
        key("descr") + descr,
        key("fortran_order") + rng.choice(["True", "False"]),
        key("shape") + _dims_text(rng, shape),
    ]


def _trail(rng: random.Random) -> str:
    return rng.choice(["\n", "\n", " \n", "", "\r\n", " \t\f", "\n \n", "\n  ", "\n\t", "\n\f\n"])


def _written(rng: random.Random) -> bytes:
    """A header the way some writer might write it: any key order, quotes, spacing, padding."""
    entries = _entries(rng, _shape(rng))
    if rng.random() < 0.5:
        rng.shuffle(entries)
    sep = "," + _ws(rng) + (" " if rng.random() < 0.7 else "")
    body = rng.choice(["", " ", "\t"]) + "{" + _ws(rng) + sep.join(entries)
    body += ("," if rng.random() < 0.5 else "") + _ws(rng) + "}"
    version = rng.choice([1, 1, 2, 3])
    prefix = 10 if version == 1 else 12
    trail = _trail(rng)
    if rng.random() < 0.5 and trail.endswith("\n"):  # numpy's padding to a multiple of 64
        pad = -(prefix + len(body) + len(trail)) % 64
        trail = " " * pad + trail
    text = (body + trail).encode("latin-1")
    size = len(text).to_bytes(2 if version == 1 else 4, "little")
    return npy.MAGIC_PREFIX + bytes([version, 0]) + size + text


def _numpy_written(rng: random.Random) -> bytes:
    """A header numpy's own writer makes (its padding, its key order)."""
    dt = np.dtype(npy.CODES[rng.choice(_CODES)]).newbyteorder(rng.choice("<>"))
    shape = tuple(rng.randint(0, 300) for _ in range(rng.randint(0, 5)))
    d = {
        "descr": np.lib.format.dtype_to_descr(dt),
        "fortran_order": rng.random() < 0.3,
        "shape": shape,
    }
    buf = io.BytesIO()
    _WRITE_HEADER(buf, d, rng.choice([(1, 0), (2, 0), (3, 0)]))
    return buf.getvalue()


def _mutated(rng: random.Random, head: bytes) -> bytes:
    b = bytearray(head)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        at = rng.randrange(len(b) + 1)
        op = rng.randrange(8)
        if op == 0 and at < len(b):
            b[at] = rng.randrange(256)
        elif op == 1:
            b[at:at] = bytes([rng.choice(_ALPHABET)])
        elif op == 2 and at < len(b):
            del b[at]
        elif op == 3:
            del b[rng.randrange(len(b) + 1) :]
        elif op == 4 and at < len(b):
            end = min(len(b), at + rng.randint(1, 12))
            b[at:at] = b[at:end]
        elif op == 5 and len(b) >= 12:  # the length field: off by a little, or huge
            field_len = 2 if b[6] == 1 else 4
            value = int.from_bytes(b[8 : 8 + field_len], "little")
            value = rng.choice([value + 1, value - 1, 0, 2 ** (8 * field_len) - 1, 10_000, 10_001])
            b[8 : 8 + field_len] = (value % 2 ** (8 * field_len)).to_bytes(field_len, "little")
        elif op == 6 and len(b) > 7:
            b[rng.choice([6, 7])] = rng.choice([0, 1, 2, 3, 4, 255])
        elif op == 7 and at < len(b):
            b[at] = rng.choice(_ALPHABET)
    return bytes(b)


def heads(rng: random.Random, count: int) -> Iterator[tuple[str, bytes]]:
    """(how it was made, the head), ``count`` of them."""
    for _ in range(count):
        pick = rng.random()
        if pick < 0.05:
            yield "numpy", _numpy_written(rng)
        elif pick < 0.45:
            yield "written", _written(rng)
        else:
            base = _numpy_written(rng) if rng.random() < 0.3 else _written(rng)
            yield "mutated", _mutated(rng, base)


# --- checking ---------------------------------------------------------------------------------
@dataclass
class Report:
    counts: Counter = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    accepted: list[tuple[bytes, str]] = field(default_factory=list)  # a sample for the graph

    def fail(self, head: bytes, why: str) -> None:
        self.counts["violations"] += 1
        if len(self.violations) < 10:
            self.violations.append(f"{why}: {head!r}")


def native_verdicts(exe: Path, max_header_size: int, batch: list[bytes], work: Path) -> list[str]:
    """The driver's verdict line for each head of ``batch``."""
    src, out = work / "heads.bin", work / "verdicts.txt"
    with open(src, "wb") as f:
        for head in batch:
            f.write(len(head).to_bytes(4, "little") + head)
    done = subprocess.run(
        [str(exe), "headers", str(max_header_size), str(src), str(out)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise AssertionError(f"the header driver failed:\n{done.stdout}\n{done.stderr}")
    lines = out.read_text().splitlines()
    assert len(lines) == len(batch), (len(lines), len(batch))
    return lines


def _byteorder_little(dt: np.dtype) -> bool:
    return dt.byteorder == "<" or (dt.byteorder in "=|" and sys.byteorder == "little")


def check(head: bytes, kind: str, verdict: str, max_header_size: int, report: Report) -> None:
    """Holds one head's native verdict against the grammar's."""
    try:
        ref: npy.NpyHeader | None = npy.read_header(
            io.BytesIO(head), "<fuzz>", max_header_size=max_header_size
        )
    except NpyFormatError:
        ref = None
    status, *fields = verdict.split()
    report.counts[f"{kind} {status}"] += 1
    report.counts[f"grammar {'accepts' if ref else 'refuses'}"] += 1
    if status != "OK":
        if ref is not None:
            report.counts["doubted, the grammar accepts"] += 1
            if kind == "numpy":
                report.fail(head, "a header numpy writes, doubted")
        return
    if ref is None:
        report.fail(head, "the C++ parser accepts what the grammar refuses")
        return
    code, little, fortran, offset, payload, rank, *dims = fields
    want = (
        npy.dtype_code(ref.dtype),
        ref.fortran_order,
        ref.data_offset,
        ref.nbytes,
        ref.shape,
    )
    got = (code, fortran == "1", int(offset), int(payload), tuple(int(d) for d in dims))
    if want != got or int(rank) != len(ref.shape):
        report.fail(head, f"the parsers disagree: grammar {want}, C++ {got}")
    elif ref.dtype.itemsize > 1 and _byteorder_little(ref.dtype) != (little == "1"):
        report.fail(head, "the parsers disagree on the byte order")
    elif ref.nbytes <= 4096 and len(report.accepted) < 100_000:
        report.accepted.append((head[: ref.data_offset], ref.dtype.str))


def graph_sample(report: Report, count: int, rng: random.Random) -> None:
    """Decodes ``count`` accepted heads, each with a random payload, by the graph parser."""
    import tensorflow as tf

    from npyio._format.header import Limits
    from npyio._format.spec import Spec
    from npyio._graph import parser

    for head, _ in rng.sample(report.accepted, min(count, len(report.accepted))):
        ref = npy.read_header(io.BytesIO(head), "<fuzz>", max_header_size=len(head))
        payload = rng.randbytes(ref.nbytes)
        if ref.dtype.kind == "b":  # a bool byte other than 0 or 1 decodes as True, not as itself
            payload = bytes(b & 1 for b in payload)
        spec = Spec.whole(ref.dtype.newbyteorder("="), None, limits=Limits(len(head)))
        files = parser.Files(tf.constant([head + payload]), tf.constant(["<fuzz>"]))
        raw, dims, ok, message = parser.parser()(files, parser.spec_tensors(spec))
        want = np.ascontiguousarray(npy.payload_array(ref, payload)).astype(
            ref.dtype.newbyteorder("=")
        )
        report.counts["graph decoded"] += 1
        if not bool(ok) or tuple(dims.numpy()) != ref.shape:
            report.fail(head, f"the graph parser refuses it: {message.numpy()!r}")
        elif raw.numpy().tobytes() != want.tobytes():
            report.fail(head, "the graph parser decodes other bytes")


def run(exe: Path, count: int, seed: int, work: Path, graph: int, chunk: int = 100_000) -> Report:
    """Generates ``count`` heads from ``seed`` and checks them all, in chunks."""
    rng = random.Random(seed)
    report = Report()
    done = 0
    while done < count:
        n = min(chunk, count - done)
        # The default limit, and now and then a small one, so that the limit itself is fuzzed.
        limit = npy.MAX_HEADER_SIZE if done == 0 or rng.random() < 0.7 else rng.randint(0, 400)
        made = list(heads(rng, n))
        verdicts = native_verdicts(exe, limit, [h for _, h in made], work)
        for (kind, head), verdict in zip(made, verdicts):
            check(head, kind, verdict, limit, report)
        done += n
    report.counts["heads"] = done
    graph_sample(report, graph, rng)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.headers", description=__doc__)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--graph", type=int, default=2_000, help="accepted heads the graph decodes")
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    parser.add_argument("--json", help="write the counts to this file")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="npyio-header-fuzz-"))
    start = time.perf_counter()
    try:
        report = run(build_driver(work), args.count, args.seed, work, args.graph)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = dict(sorted(report.counts.items())) | {"seed": args.seed}
    took = time.perf_counter() - start
    print(f"headers: {report.counts['heads']} in {took:.0f} s (seed {args.seed})")
    for key, value in counts.items():
        print(f"  {key:32} {value}")
    for line in report.violations:
        print("VIOLATION", line)
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=2))
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
