"""The native header parser (``npy_header.cc``) against the grammar: briefly, the differential
fuzz of `tests.fuzz.headers` under the sanitizers; and by hand, the forms it must accept, the
ones it doubts, and the ones it must never accept."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest

from npyio._format import npy
from npyio.errors import NpyFormatError
from tests.fuzz import headers


@pytest.fixture
def driver(sanitized_driver):
    return sanitized_driver


def _head(text: str, version: int = 1) -> bytes:
    raw = text.encode("latin-1")
    return (
        npy.MAGIC_PREFIX
        + bytes([version, 0])
        + len(raw).to_bytes(2 if version == 1 else 4, "little")
        + raw
    )


def _verdicts(driver, tmp_path, heads: list[bytes], limit: int = npy.MAX_HEADER_SIZE) -> list[str]:
    return headers.native_verdicts(driver, limit, heads, tmp_path)


def test_the_differential_fuzz_holds_for_a_run(driver, tmp_path):
    report = headers.run(driver, 30_000, seed=7, work=tmp_path, graph=60)
    assert report.violations == []
    counts = report.counts
    assert counts["numpy OK"] > 1000 and counts["written OK"] > 5000, counts
    assert counts["mutated OK"] > 0 and counts["mutated SHORT"] > 0 and counts["mutated DOUBT"] > 0
    assert counts["graph decoded"] == 60


def test_every_header_numpy_writes_is_accepted_with_its_values(driver, tmp_path):
    arrays = [
        np.zeros((), "<f8"),
        np.zeros((0,), "|b1"),
        np.zeros((3, 4), ">i2"),
        np.asfortranarray(np.zeros((5, 6, 2), "<c16")),
        np.zeros((2,) * 12, "u1"),
    ]
    heads = []
    for a in arrays:
        for version in ((1, 0), (2, 0), (3, 0)):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, a, version=version)
            heads.append(buf.getvalue())
    for head, verdict in zip(heads, _verdicts(driver, tmp_path, heads)):
        ref = npy.read_header(io.BytesIO(head), "<t>")
        status, code, little, fortran, offset, payload, rank, *dims = verdict.split()
        assert status == "OK", (head, verdict)
        assert (code, fortran == "1", int(offset), int(payload)) == (
            npy.dtype_code(ref.dtype),
            ref.fortran_order,
            ref.data_offset,
            ref.nbytes,
        )
        assert tuple(int(d) for d in dims) == ref.shape and int(rank) == len(ref.shape)
        if ref.dtype.itemsize > 1:
            assert (little == "1") == (ref.dtype.byteorder in "<=|")


DICT = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"


@pytest.mark.parametrize(
    "text",
    [
        DICT % "(2L, 3L)",  # Python 2 longs: the grammar takes them in 1.0, the parser doubts
        DICT % "(-0,)",  # "-0" is 0 to the grammar; doubted
        (DICT % "(2,)") + "\n  ",  # the Python 2 filter's trailing line; doubted
        DICT % ("(" + "1, " * 33 + ")"),  # more dims than the kernel takes
    ],
)
def test_forms_the_grammar_takes_and_the_parser_doubts(driver, tmp_path, text):
    head = _head(text)
    npy.read_header(io.BytesIO(head), "<t>")  # the grammar accepts it
    assert _verdicts(driver, tmp_path, [head]) == ["DOUBT"]


@pytest.mark.parametrize(
    "text",
    [
        DICT % "(-1, 2)",
        DICT % "(1234567890123456789,)",  # 19 digits
        DICT % "(2**40,)",
        DICT % "(2)",  # not a tuple
        DICT % "(0, 1152921504606846976)",  # a zero-size shape whose other dim reaches 2**62 bytes
        DICT % "(02,)",
        "{'descr': '<f4', 'descr': '<f4', 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }",
        "{'descr': 'float32', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': \"<f4', 'fortran_order': False, 'shape': (2,), }",
        "\n{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        (DICT % "(2,)") + "\n  x",
        (DICT % "(2,)").replace("'shape'", "'sh\xe9pe'"),
    ],
)
def test_forms_the_grammar_refuses_are_never_accepted(driver, tmp_path, text):
    head = _head(text)
    with pytest.raises(NpyFormatError):
        npy.read_header(io.BytesIO(head), "<t>")
    assert _verdicts(driver, tmp_path, [head]) == ["DOUBT"]


def test_a_head_cut_short_asks_for_the_whole_header(driver, tmp_path):
    head = _head(DICT % "(2, 3)" + " " * 40 + "\n")
    cut = head[:20]
    assert _verdicts(driver, tmp_path, [cut]) == [f"SHORT {len(head)}"]
    # ... but never past the limit: a length field over max_header_size is doubted at once
    assert _verdicts(driver, tmp_path, [cut], limit=len(head) - 11) == ["DOUBT"]


def test_the_check_catches_a_wrong_verdict():
    """A verdict of OK with other values, or on a refused head, is a violation."""
    head = _head(DICT % "(2, 3)")
    offset = len(head)
    report = headers.Report()
    headers.check(head, "written", f"OK f4 1 0 {offset} 24 2 2 3", npy.MAX_HEADER_SIZE, report)
    assert report.violations == []
    headers.check(head, "written", f"OK f4 1 0 {offset} 24 2 3 2", npy.MAX_HEADER_SIZE, report)
    headers.check(head, "written", f"OK f8 1 0 {offset} 48 2 2 3", npy.MAX_HEADER_SIZE, report)
    headers.check(head[:-3], "written", f"OK f4 1 0 {offset} 24 2 2 3", npy.MAX_HEADER_SIZE, report)
    assert len(report.violations) == 3, report.violations


def test_generated_heads_are_reproducible_from_the_seed():
    first = list(headers.heads(random.Random(3), 200))
    assert first == list(headers.heads(random.Random(3), 200))
    assert {kind for kind, _ in first} == {"numpy", "written", "mutated"}
