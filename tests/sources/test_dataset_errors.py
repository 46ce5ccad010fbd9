"""Errors that read well, and skips that are seen.

- Eagerly, `read_npy`, `decode_npy`, `read_npz` and `decode_npz` raise with ``"PATH: reason"``
  as the first line of the message; while a dataset is iterated, TensorFlow wraps that text, but
  keeps it on one line.
- ``npyio.dataset(..., ignore_errors=True)`` prints ``npyio: skipping PATH: reason`` to stderr
  for every file it skips, at every ``TF_CPP_MIN_LOG_LEVEL`` (TensorFlow's own warning is gone
  from level 2 on), with a pipeline that runs no Python and serializes.
"""

from __future__ import annotations

import io
import json
import os
import re
import textwrap
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy, npz
from npyio._format.files import NO_SUCH_FILE
from npyio._format.spec import Layout
from npyio._graph.decode import SKIP_PREFIX
from tests._graph_util import graph_def, op_types, python_ops
from tests._npy_testing import child_json, npy_bytes, tf_message

ROOT = Path(__file__).resolve().parents[2]
BAD_MAGIC = b"\x93NUMPX" + npy_bytes(np.zeros(3, "<f4"))[6:]
BAD_MAGIC_REASON = npy.bad_magic("93 4e 55 4d 50 58")


def _npz(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _eager_message(fn, *args, **kwargs) -> str:
    """The message of the op error ``fn`` raises eagerly."""
    with pytest.raises(tf.errors.OpError) as info:
        fn(*args, **kwargs)
    return info.value.message


# --- eager: "PATH: reason" first ----------------------------------------------------------------
def test_read_npy_message_starts_with_path_and_reason(tmp_path):
    bad = tmp_path / "bad.npy"
    bad.write_bytes(BAD_MAGIC)
    message = _eager_message(npyio.read_npy, str(bad), "float32")
    assert message.splitlines()[0] == f"{bad}: {BAD_MAGIC_REASON}"

    wrong = tmp_path / "wrong.npy"
    wrong.write_bytes(npy_bytes(np.zeros(3, "<f8")))
    message = _eager_message(npyio.read_npy, str(wrong), "float32", shape=(3,))
    assert message.splitlines()[0] == f"{wrong}: {npy.dtype_mismatch('float32', 'float64')}"


def test_read_npy_missing_file_names_it(tmp_path):
    missing = tmp_path / "missing.npy"
    with pytest.raises(tf.errors.NotFoundError) as info:
        npyio.read_npy(str(missing), "float32")
    assert info.value.message.splitlines()[0] == f"{missing}: {NO_SUCH_FILE}"
    # ram:// says nothing at all of a missing file; npyio still names it
    with pytest.raises(tf.errors.NotFoundError) as info:
        npyio.read_npy("ram://npyio-errors/missing.npy", "float32")
    assert info.value.message == f"ram://npyio-errors/missing.npy: {NO_SUCH_FILE}"


def test_read_npy_directory_names_it(tmp_path):
    with pytest.raises(tf.errors.OpError) as info:
        npyio.read_npy(str(tmp_path), "float32")
    first = info.value.message.splitlines()[0]
    assert first.startswith(f"{tmp_path}: "), first
    assert "{{" not in first and "[Op:" not in first, first


def test_decode_npy_messages(tmp_path):
    good = npy_bytes(np.zeros(3, "<f4"))
    message = _eager_message(npyio.decode_npy, BAD_MAGIC, "float32")
    assert message.splitlines()[0] == f"<bytes>: {BAD_MAGIC_REASON}"
    message = _eager_message(npyio.decode_npy, [good, BAD_MAGIC], "float32")
    assert message.splitlines()[0] == f"<bytes>[1]: {BAD_MAGIC_REASON}"


def test_npz_messages(tmp_path):
    archive = tmp_path / "a.npz"
    archive.write_bytes(_npz({"x": np.zeros(3, np.float32)}))
    no_member = npz.no_member("'x.npy'", "'y'")
    message = _eager_message(npyio.read_npz, str(archive), "y", "float32")
    assert message.splitlines()[0] == f"{archive}[y]: {no_member}"
    message = _eager_message(npyio.decode_npz, archive.read_bytes(), "y", "float32")
    assert message.splitlines()[0] == f"<bytes>[y]: {no_member}"
    message = _eager_message(npyio.decode_npz, b"not a zip", "x", "float32")
    assert message.splitlines()[0] == f"<bytes>[x]: {npz.not_a_zip()}"
    message = _eager_message(npyio.read_npz, str(archive), "x", "float64")
    assert message.splitlines()[0] == f"{archive}[x]: {npy.dtype_mismatch('float64', 'float32')}"
    missing = tmp_path / "missing.npz"
    with pytest.raises(tf.errors.NotFoundError) as info:
        npyio.read_npz(str(missing), "x", "float32")
    assert info.value.message.splitlines()[0] == f"{missing}: {NO_SUCH_FILE}"


def test_npz_corrupt_deflate_names_the_member(tmp_path):
    """zlib's refusal (raised inside the extractor's graph function) is named too."""
    data = bytearray(_npz({"x": np.arange(1000, dtype=np.float32)}, compressed=True))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        offset = z.getinfo("x.npy").header_offset
    name_len, extra_len = np.frombuffer(bytes(data[offset + 26 : offset + 30]), "<u2")
    start = offset + 30 + int(name_len) + int(extra_len)  # the local header's own lengths
    data[start + 10 : start + 20] = b"\xff" * 10  # inside the deflate stream
    with pytest.raises(tf.errors.OpError) as error:
        npyio.decode_npz(bytes(data), "x", "float32")
    first = error.value.message.splitlines()[0]
    assert first.startswith("<bytes>[x]: "), error.value.message
    assert "Graph execution error" not in error.value.message


# --- iteration: the "PATH: reason" text stays whole on one line -----------------------------------
def _iteration_message(ds: tf.data.Dataset) -> str:
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(ds)
    return info.value.message


def _line_with(message: str, text: str) -> str:
    lines = [line for line in message.splitlines() if text in line]
    assert len(lines) == 1, (text, message)
    return lines[0]


@pytest.mark.parametrize("batch_size", [None, 2], ids=["decode-then-batch", "batch-then-decode"])
def test_iteration_message_holds_path_and_reason(tmp_path, batch_size):
    good, bad = tmp_path / "good.npy", tmp_path / "bad.npy"
    good.write_bytes(npy_bytes(np.zeros(3, "<f4")))
    bad.write_bytes(BAD_MAGIC)
    ds = npyio.dataset([str(good), str(bad)], dtype="float32", shape=(3,), batch_size=batch_size)
    message = _iteration_message(ds)
    line = _line_with(message, f"{bad}: {BAD_MAGIC_REASON}")
    # TensorFlow's graph assertion wraps it: "... ParallelMapV2: assertion failed: [TEXT]"
    assert line.endswith(f"assertion failed: [{bad}: {BAD_MAGIC_REASON}]"), line


def test_iteration_message_of_an_npz_member(tmp_path):
    archive = tmp_path / "a.npz"
    archive.write_bytes(_npz({"x": np.zeros(3, np.float32)}))
    ds = npyio.dataset([str(archive)], key="x", dtype="float64", shape=(3,), batch_size=None)
    text = f"{archive}[x]: {npy.dtype_mismatch('float64', 'float32')}"
    _line_with(_iteration_message(ds), text)
    # the archive's own refusal: one function_node wrapper, not the extractor's twice more
    ds = npyio.dataset([str(archive)], key="y", dtype="float32", shape=(3,), batch_size=None)
    message = _iteration_message(ds)
    assert "__inference__extract" not in message, message
    # Assert C-escapes quotes ('y' shows as \'y\'); tf_message undoes that exactly
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(ds)
    assert tf_message(info.value) == f"{archive}[y]: {npz.no_member(repr('x.npy'), repr('y'))}"


# --- hints and build-time checks ----------------------------------------------------------------
def test_files_that_vary_are_refused_with_the_shape_that_reads_them(tmp_path):
    """Variable-length arrays read without ``shape=``: the files sampled when the dataset is
    built differ, and the error says which shape to pass (`npyio._sources.sampling`)."""
    first, second = tmp_path / "0.npy", tmp_path / "1.npy"
    first.write_bytes(npy_bytes(np.zeros((52, 20), "<f4")))
    second.write_bytes(npy_bytes(np.zeros((40, 20), "<f4")))
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(str(tmp_path))
    assert str(info.value).startswith(
        f"{first}: the files of inputs differ ({first}: float32 (52, 20); {second}: float32 "
        "(40, 20)) -- to read arrays whose sizes vary, pass shape=(None, 20)"
    )
    # what it suggests reads both files
    shapes = [x.shape for x in npyio.dataset(str(tmp_path), shape=(None, 20), batch_size=None)]
    assert shapes == [(52, 20), (40, 20)]


@pytest.mark.parametrize("batch_size", [None, 2], ids=["decode-then-batch", "batch-then-decode"])
def test_one_odd_file_is_named_with_the_file_that_set_the_spec(tmp_path, batch_size):
    """An odd file the build-time samples (0, 2, 4) did not see: the graph's error names it
    and the spec's source, and points to verify and ignore_errors, not to None dims; npyio
    verify (`npyio._format.spec.Layout.reason`) still says which shape= reads both."""
    for i in range(5):
        (tmp_path / f"{i}.npy").write_bytes(npy_bytes(np.zeros((52, 20), "<f4")))
    odd = tmp_path / "1.npy"
    odd.write_bytes(npy_bytes(np.zeros((40, 20), "<f4")))
    ds = npyio.dataset(str(tmp_path), batch_size=batch_size)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(ds)
    assert tf_message(info.value) == (
        f"{odd}: shape mismatch -- expected (52, 20), got (40, 20); the spec came from "
        f"{tmp_path / '0.npy'} -- `npyio verify` lists every file that differs, and "
        "ignore_errors=True skips them"
    )
    spec = ds.element_spec
    reason = Layout(np.dtype("float32"), tuple(spec.shape[1:] if batch_size else spec.shape))
    assert reason.reason(npyio.inspect(str(odd)), str(odd)) == (
        "shape mismatch -- expected (52, 20), got (40, 20); to read arrays whose dims vary, "
        "pass shape=(None, 20)"
    )


def test_shape_hint_names_the_argument_and_only_for_one_rank(tmp_path):
    xs, ys = tmp_path / "x", tmp_path / "y"
    xs.mkdir()
    ys.mkdir()
    (xs / "0.npy").write_bytes(npy_bytes(np.zeros((2, 3), "<f4")))
    (ys / "0.npy").write_bytes(npy_bytes(np.zeros((5, 7), "<i8")))
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(str(xs), str(ys), label_shape=(5, 6))
    assert str(info.value) == (
        f"{ys / '0.npy'}: shape mismatch -- expected label_shape=(5, 6), got (5, 7); "
        "to read arrays whose dims vary, pass label_shape=(5, None)"
    )
    with pytest.raises(npyio.NpyFormatError) as info:  # another rank: no None makes it fit
        npyio.dataset(str(xs), shape=(6,))
    assert str(info.value) == f"{xs / '0.npy'}: shape mismatch -- expected shape=(6,), got (2, 3)"
    message = _eager_message(npyio.read_npy, str(xs / "0.npy"), "float32", shape=(6,))
    assert message.splitlines()[0] == f"{xs / '0.npy'}: {npy.shape_mismatch('(6,)', '(2, 3)')}"


def test_the_guide_iteration_error_is_what_tensorflow_says(tmp_path, monkeypatch):
    """docs/errors.md shows a failed iteration's message on TF 2.21: its bracketed text
    on any TensorFlow, the whole first line (up to the numbers TensorFlow counts) on 2.21."""
    page = (ROOT / "docs" / "errors.md").read_text()
    block = page.split("One file of another shape among many, on TF 2.21:", 1)[1]
    shown = block.split("```\n", 2)[1].splitlines()[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "x").mkdir(parents=True)
    for i, n in enumerate([52, 40, 52, 52, 52]):  # 0001.npy: not one of those sampled
        np.save(f"data/x/{i:04d}.npy", np.zeros((n, 20), "float32"))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        list(npyio.dataset("data/x", batch_size=2))
    assert shown.endswith(f"assertion failed: [{tf_message(info.value)}]"), shown
    if tf.__version__.startswith("2.21."):

        def counted(line: str) -> str:
            return re.sub(r"(output_types_|DatasetV2:)\d+", r"\1N", line)

        got = f"InvalidArgumentError: {info.value.message.splitlines()[0]}"
        assert counted(got) == counted(shown)


@pytest.mark.parametrize("backend", ["graph", "py_function"])
def test_a_truncated_first_file_fails_when_the_dataset_is_built(tmp_path, backend):
    """Its header is read then, and its size is known: the same words as the graph's, which
    says them of a truncated file that is not the first."""
    good = npy_bytes(np.zeros((4, 3), "<f4"))
    for name, data in (("0.npy", good[:-5]), ("1.npy", good), ("2.npy", good[:-5])):
        (tmp_path / name).write_bytes(data)
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(str(tmp_path), backend=backend)
    assert str(info.value) == f"{tmp_path / '0.npy'}: {npy.payload_short('48', '43')}"
    ds = npyio.dataset([str(tmp_path / "1.npy"), str(tmp_path / "2.npy")], batch_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        list(ds)
    assert tf_message(caught.value) == f"{tmp_path / '2.npy'}: {npy.payload_short('48', '43')}"


# --- ignore_errors: every skip on stderr, at every log level -------------------------------------
_SKIP_SCRIPT = textwrap.dedent(r"""
    import json, sys
    import tensorflow as tf
    import npyio

    EPOCHS = 2
    out = {}
    for name, spec in json.loads(sys.argv[1]).items():
        ds = npyio.dataset(spec["inputs"], spec["labels"], **spec["kwargs"])
        # how a user counts what was delivered, as the dataset docstring shows
        counted = []
        sys.stderr.write(f"=== {name}\n")
        sys.stderr.flush()
        for _ in range(EPOCHS):
            ids = []
            for x, y in ds:
                x, y = x.numpy().reshape(-1, 3), y.numpy().reshape(-1)
                assert (x == y[:, None]).all(), "an input was paired with another label"
                ids.extend(int(i) for i in y)
            counted.append(int(ds.reduce(tf.constant(0, tf.int64),
                                         lambda n, x_y: n + tf.size(x_y[1], tf.int64))))
            out.setdefault(name, []).append(ids)
        out[name + ".count"] = counted
        sys.stderr.write(f"=== end {name}\n")
        sys.stderr.flush()
    print(json.dumps(out))
""")
EPOCHS = 2


def _write_npy(path: Path, value: np.ndarray) -> str:
    path.write_bytes(npy_bytes(value))
    return str(path)


def _skip_cases(
    root: Path, backend: str = "native"
) -> tuple[dict, dict[str, list[str]], dict[str, set[int]]]:
    """(pipelines for the script, {pipeline: skip lines expected each epoch}, {pipeline: good
    ids}). Expected lines are built from the eager messages, tested above to be PATH: reason.
    The ``.npy`` pipelines read through ``backend`` (the native reader reads their batches and
    sends the files it doubts to the graph reader; the graph reader reads every file)."""
    n = 12
    (root / "x").mkdir()
    (root / "y").mkdir()
    xs = [_write_npy(root / "x" / f"{i:02d}.npy", np.full(3, i, "<f4")) for i in range(n)]
    ys = [_write_npy(root / "y" / f"{i:02d}.npy", np.int64(i)) for i in range(n)]
    Path(xs[2]).write_bytes(BAD_MAGIC)
    _write_npy(Path(ys[3]), np.array(["abc"]))  # a reason with quotes: '<U3'
    Path(xs[5]).write_bytes(b"junk")  # input and label both bad: both are named
    Path(ys[5]).write_bytes(b"")
    os.remove(ys[7])  # missing label
    os.remove(xs[8])  # missing input, bad label
    Path(ys[8]).write_bytes(npy_bytes(np.int64(8))[:-3])
    _write_npy(Path(xs[9]), np.full(3, 9, "<f8"))  # dtype mismatch
    x_spec = {"dtype": "float32", "shape": (3,)}
    y_spec = {"dtype": "int64", "shape": ()}

    def line(path: str, spec: dict) -> str:
        if not os.path.exists(path):
            return f"{SKIP_PREFIX}{path}: {NO_SUCH_FILE}"
        return SKIP_PREFIX + _eager_message(npyio.read_npy, path, **spec).splitlines()[0]

    npy_lines = [line(p, x_spec) for p in (xs[2], xs[5], xs[8], xs[9])]
    npy_lines += [line(p, y_spec) for p in (ys[3], ys[5], ys[7], ys[8])]
    npy_good = set(range(n)) - {2, 3, 5, 7, 8, 9}

    # .npz archives holding x and y
    (root / "z").mkdir()
    zs = []
    for i in range(6):
        path = root / "z" / f"{i}.npz"
        path.write_bytes(_npz({"x": np.full(3, i, "<f4"), "y": np.int64(i)}, compressed=i == 4))
        zs.append(str(path))
    Path(zs[1]).write_bytes(_npz({"y": np.int64(1)}))  # no member x
    Path(zs[2]).write_bytes(b"not a zip archive")
    os.remove(zs[3])
    Path(zs[5]).write_bytes(_npz({"x": np.full(3, 5, "<f8"), "y": np.int64(5)}))

    def npz_line(path: str, key: str, spec: dict) -> str:
        if not os.path.exists(path):
            return f"{SKIP_PREFIX}{path}: {NO_SUCH_FILE}"
        message = _eager_message(npyio.read_npz, path, key, **spec)
        return SKIP_PREFIX + message.splitlines()[0]

    npz_lines = [npz_line(zs[i], "x", x_spec) for i in (1, 3, 5)]
    # the bad archive is refused twice: once as the inputs', once as the labels' archive
    npz_lines += [npz_line(zs[2], key, spec) for key, spec in (("x", x_spec), ("y", y_spec))]
    npz_good = {0, 4}

    common = {
        "dtype": "float32",
        "shape": [3],
        "label_dtype": "int64",
        "label_shape": [],
        "ignore_errors": True,
    }
    npy_common = {**common, "backend": backend}
    pipelines = {
        "npy": {
            "inputs": xs,
            "labels": ys,
            "kwargs": {
                **npy_common,
                "batch_size": 4,
                "shuffle": True,
                "seed": 1,
                "num_parallel_calls": 4,
                "deterministic": False,
            },
        },
        "npy-inferred-spec": {  # element spec from pair 0's headers
            "inputs": xs,
            "labels": ys,
            "kwargs": {"ignore_errors": True, "batch_size": None, "backend": backend},
        },
        "npz": {
            "inputs": zs,
            "labels": None,
            "kwargs": {**common, "key": "x", "label_key": "y", "batch_size": 2},
        },
    }
    lines = {"npy": npy_lines, "npy-inferred-spec": npy_lines, "npz": npz_lines}
    good = {"npy": npy_good, "npy-inferred-spec": npy_good, "npz": npz_good}
    return pipelines, lines, good


def _sections(err: str) -> dict[str, list[str]]:
    """The lines of stderr between the script's ``=== name`` and ``=== end name`` markers."""
    out: dict[str, list[str]] = {}
    current = None
    for line in err.splitlines():
        if line.startswith("=== end "):
            current = None
        elif line.startswith("=== "):
            current = line[4:]
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


@pytest.mark.parametrize("level", ["0", "1", "2", "3"])
def test_every_skipped_file_is_named_at_every_log_level(tmp_path, level):
    """A process per level (TensorFlow reads it at import), both backends in it."""
    pipelines, expected, good = {}, {}, {}
    for backend in ("native", "graph"):
        (tmp_path / backend).mkdir()
        cases = _skip_cases(tmp_path / backend, backend)
        for name in cases[0]:
            if name == "npz" and backend == "graph":
                continue  # no backend= for archives: once is enough
            for out, case in zip((pipelines, expected, good), cases, strict=True):
                out[f"{backend}/{name}"] = case[name]
    script = tmp_path / "skips.py"
    script.write_text(_SKIP_SCRIPT)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": level, "PYTHONPATH": str(ROOT)}
    delivered, stderr = child_json([str(script), json.dumps(pipelines)], env)
    sections = _sections(stderr)
    for name in pipelines:
        for ids in delivered[name]:  # every good pair exactly once per epoch, nothing else
            assert Counter(ids) == Counter(good[name]), (name, sorted(ids))
        assert delivered[name + ".count"] == [len(good[name])] * EPOCHS, name
        # each skipped file named once per epoch (and once more per ds.reduce epoch), with its
        # reason; no other npyio line
        skips = Counter(line for line in sections[name] if line.startswith(SKIP_PREFIX))
        assert skips == Counter({line: 2 * EPOCHS for line in expected[name]}), (
            name,
            skips,
            expected[name],
        )


def test_skip_reasons_read_as_expected(tmp_path):
    """The lines the test above expects are the words a user should see (spot check)."""
    _, expected, _ = _skip_cases(tmp_path)
    text = "\n".join(expected["npy"] + expected["npz"])
    assert f"{SKIP_PREFIX}{tmp_path}/x/02.npy: {BAD_MAGIC_REASON}" in text
    assert f"{SKIP_PREFIX}{tmp_path}/y/07.npy: {NO_SUCH_FILE}" in text
    assert f"{SKIP_PREFIX}{tmp_path}/y/03.npy: unsupported dtype" in text
    assert "got '<U3'" in text  # quotes intact on stderr
    assert f"{SKIP_PREFIX}{tmp_path}/z/1.npz[x]: no such member in the archive" in text
    assert f"{SKIP_PREFIX}{tmp_path}/z/3.npz: {NO_SUCH_FILE}" in text


@pytest.mark.parametrize("backend", ["native", "graph"])
def test_ignore_errors_pipeline_runs_no_python_and_serializes(tmp_path, backend):
    pipelines, _, good = _skip_cases(tmp_path, backend)
    for name, spec in pipelines.items():
        ds = npyio.dataset(spec["inputs"], spec["labels"], **spec["kwargs"])
        assert python_ops(ds) == set(), name
        assert "PrintV2" in op_types(ds), name  # the report is a graph op
        # serializes even where stateful ops outside the allowlist would refuse to
        graph_def(ds, external_state_policy=tf.data.experimental.ExternalStatePolicy.FAIL)
        assert tf.data.experimental.to_variant(ds).dtype == tf.variant
        saved = str(tmp_path / f"saved-{name}")
        ds.save(saved)
        loaded = tf.data.Dataset.load(saved)
        ids = [int(i) for _, y in loaded for i in np.reshape(y.numpy(), -1)]
        assert Counter(ids) == Counter(good[name]), name


def test_glob_characters_in_paths(tmp_path, capfd):
    """Paths with ``*?[\\`` are not checked for existence (a pattern would list the whole
    directory per element): a bad one is still named, a missing one is skipped unnamed."""
    good = _write_npy(tmp_path / "a[0].npy", np.full(3, 0, "<f4"))
    bad = str(tmp_path / "a[1]*.npy")
    Path(bad).write_bytes(BAD_MAGIC)
    missing = str(tmp_path / "a[2]?.npy")
    also_good = _write_npy(tmp_path / "plain.npy", np.full(3, 3, "<f4"))
    ds = npyio.dataset(
        [good, bad, missing, also_good],
        dtype="float32",
        shape=(3,),
        ignore_errors=True,
        batch_size=None,
    )
    capfd.readouterr()
    assert [int(x[0]) for x in ds] == [0, 3]
    err = capfd.readouterr().err
    assert f"{SKIP_PREFIX}{bad}: {BAD_MAGIC_REASON}" in err.splitlines()
    assert f"{SKIP_PREFIX}{missing}" not in err


def test_py_function_backend_names_missing_files(tmp_path, capfd):
    """A missing file is named by npyio before the backend runs."""
    xs = [_write_npy(tmp_path / f"{i}.npy", np.full(3, i, "<f4")) for i in range(4)]
    os.remove(xs[1])
    ds = npyio.dataset(
        xs, dtype="float32", shape=(3,), backend="py_function", ignore_errors=True, batch_size=None
    )
    capfd.readouterr()
    assert [int(x[0]) for x in ds] == [0, 2, 3]
    assert f"{SKIP_PREFIX}{xs[1]}: {NO_SUCH_FILE}" in capfd.readouterr().err.splitlines()


def _one_bad_of_four(tmp_path) -> tuple[list[str], str]:
    xs = [_write_npy(tmp_path / f"{i}.npy", np.full(3, i, "<f4")) for i in range(4)]
    _write_npy(tmp_path / "1.npy", np.full(3, 1, "<f8"))  # a float64 among float32
    return xs, f"{xs[1]}: " + npy.dtype_mismatch("float32", "float64")


def test_py_function_backend_names_the_files_it_refuses(tmp_path, capfd):
    """It parses in Python (np.load after npyio's checks), and says so on stderr too."""
    xs, line = _one_bad_of_four(tmp_path)
    ds = npyio.dataset(
        xs, dtype="float32", shape=(3,), backend="py_function", ignore_errors=True, batch_size=None
    )
    capfd.readouterr()
    assert [int(x[0]) for x in ds] == [0, 2, 3]
    assert f"{SKIP_PREFIX}{line}" in capfd.readouterr().err.splitlines()
