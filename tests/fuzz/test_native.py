"""The native core's fuzz driver, briefly: built with the sanitizers, its invariant holds over
a few seconds of damaged and racing files (read whole, by range, by the op's range read with
its allocator, and by window), of threads racing the remote reads' budget, and of the batch
source's read pool racing and closed on stalled reads; and the sampled files agree with the
graph path."""

from __future__ import annotations

import pytest

from tests.fuzz import native


def test_the_native_fuzz_driver_runs_clean_and_agrees_with_the_graph_path(
    sanitized_driver, tmp_path
):
    counts = native.run_driver(sanitized_driver, 3.0, tmp_path / "run", seed=1)
    assert counts["inputs"] > 1000
    for status in ("OK", "SIZE_MISMATCH", "HEADER_MISMATCH", "NOT_REGULAR", "OPEN_FAILED"):
        assert counts[f"status {status}"] > 0, counts
    for status in ("OK", "BAD_WINDOW", "BAD_BOOL", "SIZE_MISMATCH", "HEADER_MISMATCH"):
        assert counts[f"status window {status}"] > 0, counts  # read_window's leg runs
    assert counts["status race window OK"] > 0, counts
    # the op's range read (allocating once the file is checked), its failed allocations and
    # racing files; the remote budget raced by threads
    for status in ("OK", "NO_MEMORY", "SIZE_MISMATCH", "NOT_REGULAR"):
        assert counts[f"status range_into {status}"] > 0, counts
    assert counts["status race range_into OK"] > 0 and counts["status budget races"] > 0, counts
    # the batch source's read pool, racing, closed with reads stalled in it and in its caller
    # (the latter also once per run, whatever the races met: `close_on_stalled_caller`)
    assert counts["status pool races"] > 0, counts
    assert counts["status pool closed on a caller's stalled read"] > 0, counts
    # its sign that reads waited on storage: past the floor, never a few ms; evicted files
    # by their block inputs where this file system reports them
    assert counts["status pool waits"] == 1, counts
    if _reports_block_inputs(tmp_path):
        assert counts["status pool waits: cold"] == 1, counts
    # the read of a file of any shape, its header parsed by the core (issue 52)
    for status in ("OK", "HEADER_MISMATCH", "SIZE_MISMATCH", "NO_MEMORY", "BAD_BOOL"):
        assert counts[f"status parsed {status}"] > 0, counts
    read, doubted = native.differential(tmp_path / "run" / "cases")
    assert read + doubted == counts["sampled"]


def _reports_block_inputs(tmp_path) -> bool:
    """Whether reading an evicted file here counts block inputs (``ru_inblock``): a disk does,
    a tmpfs does not."""
    import os
    import resource

    path = tmp_path / "evicted"
    path.write_bytes(b"\1" * (1 << 20))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_inblock
        os.pread(fd, 1 << 20, 0)
        return resource.getrusage(resource.RUSAGE_THREAD).ru_inblock > before
    finally:
        os.close(fd)


def test_the_differential_check_catches_a_wrong_verdict(tmp_path):
    """A case the kernel called OK whose bytes the graph path decodes otherwise fails it."""
    import numpy as np

    np.save(tmp_path / "case-0.npy", np.arange(4, dtype="<f4"))
    data = (tmp_path / "case-0.npy").read_bytes()
    (tmp_path / "case-0.header").write_bytes(data[:120])  # claims 8 payload bytes too many
    (tmp_path / "verdicts.tsv").write_text("case-0\tOK\t<f4\t4\n")
    with pytest.raises(AssertionError, match="the graph path decodes other bytes"):
        native.differential(tmp_path)
