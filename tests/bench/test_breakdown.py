"""Smoke test of bench/breakdown.py with tiny counts: perf samples are put in the right category,
perf's and strace's outputs are read, a case's child drains every sample and reports its
counters, and the C loop reads every file. perf and strace themselves are not needed; the
figures are the benchmark's, not asserted here."""

import pytest

from tests.bench import load

KERNEL = "[kernel.kallsyms]"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
TF = "/venv/lib/python3.11/site-packages/tensorflow/libtensorflow_framework.so.2"
PYTHON = "/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"


@pytest.fixture(scope="module")
def profile():
    return load("breakdown")


@pytest.mark.parametrize(
    ("frames", "category"),
    [
        # a spin lock counts for the page fault above it, not for the memcpy that faulted
        (
            [
                ("_raw_spin_lock", KERNEL),
                ("do_anonymous_page", KERNEL),
                ("handle_mm_fault", KERNEL),
                ("exc_page_fault", KERNEL),
                ("asm_exc_page_fault", KERNEL),
                ("__memmove_avx512_unaligned_erms", LIBC),
            ],
            "page faults",
        ),
        ([("clear_page_erms", KERNEL), ("do_anonymous_page", KERNEL)], "zeroing"),
        (
            [
                ("_copy_to_iter", KERNEL),
                ("filemap_read", KERNEL),
                ("do_syscall_64", KERNEL),
                ("preadv", LIBC),
            ],
            "copies: kernel read",
        ),
        ([("__d_lookup_rcu", KERNEL), ("do_syscall_64", KERNEL)], "syscalls"),
        (
            [("_raw_spin_unlock", KERNEL), ("futex_wait", KERNEL), ("do_syscall_64", KERNEL)],
            "hand-offs: futex, scheduler",
        ),
        ([("__vm_munmap", KERNEL), ("do_syscall_64", KERNEL)], "malloc/free, mmap/munmap"),
        ([("_int_free", LIBC), ("PyObject_Free", PYTHON)], "malloc/free, mmap/munmap"),
        # generic TensorFlow code counts for the executor above it, where the stack shows it
        (
            [("std::_Hash_bytes", TF), ("tensorflow::ExecutorState::Process", TF)],
            "executor, op launches",
        ),
        ([("std::_Hash_bytes", TF), ("_PyEval_EvalFrameDefault", PYTHON)], "TF, other"),
        (
            [("tensorflow::data::ParallelMapDatasetOp::Dataset::Iterator::RunnerThread", TF)],
            "tf.data: parallel map",
        ),
        ([("tensorflow::AttrValue::CopyFrom", TF)], "AttrValue, protobuf"),
        ([("visit_decref", PYTHON), ("gc_collect_main", PYTHON)], "Python GC"),
        ([("_PyEval_EvalFrameDefault", PYTHON)], "Python"),
        (
            [("read_npy", "/root/.cache/npyio/native/tf2.21.0-abc/npyio_native.so")],
            "npyio op (own code)",
        ),
        ([("[unknown]", "[unknown]")], "other"),
    ],
)
def test_a_sample_is_put_in_the_category_its_stack_names(profile, frames, category):
    assert category in profile.CATEGORIES
    assert profile.classify(frames) == category


PERF_SCRIPT = """\
python 100/100
\t    7f00 _PyEval_EvalFrameDefault+0x10 (/lib/libpython3.11.so.1.0)

python 100/101
\tffffffff81 _copy_to_iter (/[kernel.kallsyms])
\tffffffff82 do_syscall_64 ([kernel.kallsyms])

swapper 0/0
\tffffffff83 default_idle ([kernel.kallsyms])

cc1plus 200/200
\t    40 main (/usr/bin/cc1plus)
"""


def test_perf_output_is_tallied_for_its_process_and_the_machine(profile):
    tally = profile.tally(PERF_SCRIPT, pid=100)
    assert tally["samples"] == 2
    assert tally["categories"] == {"Python": 1, "copies: kernel read": 1}
    assert tally["threads"] == {"main thread": 1, "python": 1}
    assert tally["machine"] == {"this": 0.5, "idle": 0.25, "others": 0.25}
    shares = profile.shares(tally["categories"])
    assert list(shares) == list(profile.CATEGORIES) and sum(shares.values()) == 1.0


STRACE = """\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.00    0.004000           2      1600           preadv
 30.00    0.003000           1      3200        12 newfstatat
 30.00    0.003000           3       900           futex
------ ----------- ----------- --------- --------- ----------------
100.00    0.010000           1      5700        12 total
"""


def test_strace_counts_are_read_per_call(profile):
    assert profile.parse_strace(STRACE) == {"preadv": 1600, "newfstatat": 3200, "futex": 900}


@pytest.mark.parametrize("drain", ["iterator", "reduce"])
def test_a_case_drains_every_sample_in_its_child_and_reports_its_counters(profile, tmp_path, drain):
    args = profile.parse(["--root", str(tmp_path), "--seconds", "0.1"])
    run = profile.measure(profile.Case("small", 8, drain, pairs=20), args, tool="", epochs=2)
    assert (run["samples"], run["batches"], run["epochs"]) == (40, 6, 2)  # 8 + 8 + 4, twice
    assert run["cpu_s"] > 0 and run["wall_s"] > 0 and run["minflt"] >= 0
    row = profile.case_row("small b8", run, {"preadv": 120})
    assert row["syscalls/batch"] == "20.0" and row["top syscalls/batch"] == "preadv 20.0"
    assert float(row["CPU ms/batch"].replace(",", "")) > 0


def test_the_in_memory_ceiling_has_the_profiles_element_and_reads_nothing(profile, tmp_path):
    args = profile.parse(["--root", str(tmp_path), "--seconds", "0.1"])
    case = profile.Case(f"{profile.MEMORY}small", 8, "iterator", pairs=20)
    ds, epoch_bytes = profile._dataset(case, str(tmp_path))
    x, y = ds.element_spec
    assert (x.shape.as_list(), y.shape.as_list(), epoch_bytes) == ([8, 16, 16], [8, 10], 0)
    run = profile.measure(case, args, tool="", epochs=1)
    assert (run["samples"], run["batches"]) == (16, 2)  # the whole batches of 20 pairs


def test_the_c_loop_reads_every_pair(profile, tmp_path):
    import npyio

    args = profile.parse(["--root", str(tmp_path), "--no-perf", "--count", "20"])
    try:
        run = profile.c_loop("small", args)
    except npyio.BackendUnavailableError as e:
        pytest.skip(str(e))
    assert run["samples"] == 20 and run["cpu_s"] >= 0 and run["wall_s"] > 0
