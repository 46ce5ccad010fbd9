"""``npyio bench INPUTS [LABELS]`` (`npyio.cli.bench_data`): the sample's bound, the rules of
the suggestion on fixed numbers, and the report of a real run on a few files (no timing is
asserted: only that every line and ratio is there)."""

from __future__ import annotations

import builtins
import json
import os
import tempfile
import uuid

import numpy as np
import pytest
import tensorflow as tf

from npyio.cli import bench, bench_data, peers
from npyio.cli import main as cli

N = 1000


@pytest.fixture(scope="module")
def thousand(tmp_path_factory) -> str:
    """``x/NNNN.npy`` (float32 (4,)) and ``y/NNNN.npy`` (int64), 1,000 pairs."""
    root = tmp_path_factory.mktemp("thousand")
    for side in ("x", "y"):
        (root / side).mkdir()
    for i in range(N):
        np.save(root / "x" / f"{i:04d}.npy", np.full((4,), i, np.float32))
        np.save(root / "y" / f"{i:04d}.npy", np.int64(i % 3))
    return str(root)


@pytest.mark.parametrize(
    ("total", "size", "expected"),
    [(10, 4, [0, 2, 5, 7]), (3, 8, [0, 1, 2]), (5, 5, [0, 1, 2, 3, 4]), (7, 1, [0])],
)
def test_evenly_spreads_the_sample_over_the_listing(total, size, expected):
    assert bench_data.evenly(total, size) == expected


def test_the_sample_is_bounded_and_reads_no_file(thousand, monkeypatch):
    def no_open(*args, **kwargs):
        raise AssertionError(f"a file was opened: {args}")

    monkeypatch.setattr(builtins, "open", no_open)  # listing and pairing read no header
    smp = bench_data.take_sample(f"{thousand}/x", f"{thousand}/y", 16)
    monkeypatch.undo()
    assert smp.total == N and len(smp.inputs) == len(smp.labels) == 16
    names = [os.path.basename(p) for p in smp.inputs]
    assert names[:3] == ["0000.npy", "0062.npy", "0125.npy"] and names[-1] == "0937.npy"
    assert [os.path.basename(p) for p in smp.labels] == names  # paired by name


@pytest.mark.parametrize(
    ("loose", "packed", "fixed", "share"),
    [
        (0.05, 0.02, 0.01, 0.75),  # 40 ms beyond the fixed cost, 10 of them bytes
        (0.05, 0.05, 0.0, 0.0),
        (0.05, 0.06, 0.01, 0.0),  # the packed floor slower: no per-file cost
        (0.05, 0.005, 0.01, 1.0),  # the packed floor within the fixed cost: all per-file
        (0.01, 0.01, 0.02, 0.0),  # noise: the loose floor within the fixed cost
    ],
)
def test_files_share_is_the_loose_floors_time_beyond_the_packed_one(loose, packed, fixed, share):
    assert bench_data.files_share(loose, packed, fixed) == pytest.approx(share)


CMD = "npyio pack x y --out DIR"


@pytest.mark.parametrize(
    ("npyio_vs_py", "in_order", "shuffled", "share", "expected"),
    [
        (5.14, 9.0, 8.0, 0.9, ["npyio reads 5.1x py_function: use it",
                               f"files are small and per-file cost dominates: a pack reads "
                               f"8.0x faster shuffled, the way training reads (9.0x in order): "
                               f"`{CMD}`"]),
        (1.0, 2.0, 2.0, 0.1, ["npyio reads 1.00x py_function: no clear gain in speed on these "
                              "files", f"a pack reads 2.0x faster shuffled, the way training "
                              f"reads (2.0x in order): `{CMD}`"]),
        (0.5, 1.1, 1.0, 0.2, ["npyio reads slower than py_function here (0.50x): keep py_function",
                              "bytes-bound: a pack will not help much (1.10x in order, 1.00x "
                              "shuffled measured)"]),
        (1.3, 1.2, 1.1, 0.6, ["npyio reads 1.3x py_function: use it",
                              "per-file cost dominates the read-only floor, but npyio read a pack "
                              "only 1.20x in order, 1.10x shuffled: a pack will not help much"]),
    ],
    ids=["files-bound", "no-gain", "slower", "files-bound-pack-no-help"],
)  # fmt: skip
def test_suggest_on_fixed_numbers(npyio_vs_py, in_order, shuffled, share, expected):
    assert bench_data.suggest(npyio_vs_py, in_order, shuffled, share, CMD) == expected


@pytest.mark.parametrize("share", [0.1, 0.9])
def test_a_pack_faster_in_order_but_slower_shuffled_is_not_advised(share):
    # The run: 2.06x in order, but about 0.18x shuffled (16-19k against 88-96k/s).
    line = bench_data.suggest_pack(2.06, 0.18, share, CMD)
    assert CMD not in line and "pack reads" in line
    assert line == (
        "a pack reads 2.1x faster in order, but 0.18x as fast shuffled, the way training "
        "reads: keep the loose files"
    )
    # Shuffled just below the threshold, in order far above it: still not advised.
    below = bench_data.PACK_WORTH - 0.01
    assert CMD not in bench_data.suggest_pack(10.0, below, share, CMD)


def test_the_shuffled_figure_alone_decides_for_a_pack():
    assert CMD in bench_data.suggest_pack(1.0, bench_data.PACK_WORTH, 0.0, CMD)
    assert CMD in bench_data.suggest_pack(0.5, 3.0, 0.9, CMD)  # slower in order: still faster
    for in_order, shuffled in [(1.0, 1.0), (3.0, 1.0), (1.0, 0.5), (3.0, 1.49)]:
        assert CMD not in bench_data.suggest_pack(in_order, shuffled, 0.9, CMD)


def test_no_pack_is_advised_when_none_was_made():
    why = "a pack holds rows of one shape, and the elements' shapes vary ((None, 3))"
    assert bench_data.suggest_pack(9.0, 9.0, 0.9, CMD, why) == f"no pack measured: {why}"


@pytest.mark.parametrize(
    ("arguments", "shapes", "expected"),
    [
        ({}, [(4,), ()], None),
        ({"shape": (4,)}, [(4,)], None),
        ({"label_crop": None}, [(4,), (2,)], None),  # labels whole, and no crop: a pack
        ({"crop": (2,)}, [(2,)], "crop"),
        ({"label_crop": (2,)}, [(4,), (2,)], "crop"),
        ({"shape": (None, 8)}, [(None, 8), ()], "(None, 8)"),
    ],
)
def test_pack_unavailable_with_a_crop_or_none_dims(arguments, shapes, expected):
    found = bench_data.pack_unavailable(arguments, shapes)
    assert found is None if expected is None else expected in found


def test_the_thresholds_are_the_edges():
    assert bench_data.suggest(bench_data.USE_NPYIO, 1.0, bench_data.PACK_WORTH, 0.0, CMD)[1] == (
        f"a pack reads 1.5x faster shuffled, the way training reads (1.0x in order): `{CMD}`"
    )
    assert "use it" in bench_data.suggest(bench_data.USE_NPYIO, 1.0, 1.0, 0.0, CMD)[0]
    assert "files are small" in bench_data.suggest(1.0, 2.0, 2.0, bench_data.FILES_BOUND, CMD)[1]
    assert bench_data.pack_command("my dir/x", None) == "npyio pack 'my dir/x' --out DIR"
    assert bench_data.pack_command("x", "y", {"dtype": np.dtype("float16"), "crop": (2,)}) == (
        "npyio pack x y --dtype float16 --out DIR"
    )


def test_bench_of_a_thousand_files_measures_the_sample_only(thousand, tmp_path, monkeypatch,
                                                            capsys):  # fmt: skip
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the pack goes
    made = []  # every npyio.dataset the bench builds: its source and whether it shuffles

    def dataset(inputs, labels=None, **kwargs):
        made.append((inputs if isinstance(inputs, str) else "loose", kwargs.get("shuffle")))
        return real(inputs, labels, **kwargs)

    real = bench_data.npyio.dataset
    monkeypatch.setattr(bench_data.npyio, "dataset", dataset)
    argv = ["bench", f"{thousand}/x", f"{thousand}/y", "--sample", "16", "--rounds", "1"]
    assert cli.main(argv) == cli.EXIT_OK
    pack = next(source for source, _ in made if source != "loose")
    assert sorted(made, key=str) == sorted(
        [("loose", None), ("loose", None), ("loose", True), (pack, None), (pack, True)], key=str
    )
    out = capsys.readouterr().out
    assert "sample: 16 of 1,000 samples, taken evenly" in out
    # 128-byte headers, float32 (4,) and int64 (): 144 and 136 B, the 16 pairs' bytes only
    assert "2 files per sample, mean file 140 B" in out
    table = [line.strip("| ").split(" | ") for line in out.splitlines() if line.startswith("| ")]
    rows = {cells[0]: cells for cells in table}
    names = [bench.NPYIO, bench.NATIVE, bench_data.SHUFFLED, bench.PY_FUNCTION, bench.FLOOR,
             bench.NUMPY_LOOP, bench_data.PACKED, bench_data.PACKED_SHUFFLED,
             bench_data.PACKED_FLOOR]  # fmt: skip
    assert list(rows)[1:] == names
    assert rows["pipeline"][3:] == ["vs py_function", "vs floor"]
    assert rows[bench.PY_FUNCTION][3] == "1.00x" and rows[bench.FLOOR][4] == "1.00x"
    assert all(cells[3].endswith("x") and cells[4].endswith("x") for cells in table[2:])
    assert "bound: " in out and "files/s" in out and "from the pack's 2 shard files" in out
    assert " ms of an epoch (files-bound from 50%)" in out
    assert bench_data.FIXED not in rows  # a measurement of the rule, not a pipeline
    assert "pack: npyio reads the packed sample " in out and "removed" in out
    assert "x as fast as the loose files in order, " in out
    assert "x shuffled (shuffle=True, the way training reads, which decides;" in out
    suggestion = out.split("suggestion:\n", 1)[1].splitlines()
    assert len(suggestion) == 2 and suggestion[0].startswith("  - npyio reads ")
    # the temporary pack is gone (autograph leaves its own files there)
    assert not [n for n in os.listdir(tmp_path) if n.startswith("npyio-bench-")]


def test_inputs_alone_on_a_remote_file_system_with_the_pack_beside_them(capsys):
    root = f"ram://npyio-bench-{uuid.uuid4().hex}"
    tf.io.gfile.makedirs(f"{root}/x")
    for i in range(6):
        with tf.io.gfile.GFile(f"{root}/x/{i:04d}.npy", "wb") as f:
            np.save(f, np.full((2, 3), i, np.int16))
    argv = ["bench", f"{root}/x", "--sample", "4", "--rounds", "1", "--json",
            "--batch-size", "3", "--pack-dir", f"{root}/tmp"]  # fmt: skip
    tf.io.gfile.makedirs(f"{root}/tmp")
    assert cli.main(argv) == cli.EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    assert (doc["sample"], doc["total"], doc["batch_size"]) == (4, 6, 3)
    assert doc["bytes_per_sample"] == 128 + 12  # one file: header and 2x3 int16
    assert {r["pipeline"] for r in doc["results"]} >= {bench.NPYIO, bench_data.PACKED}
    assert all(r["samples"] == 4 and r["samples_per_s"] > 0 for r in doc["results"])
    assert doc["bound"] in ("files", "bytes") and len(doc["suggestions"]) == 2
    assert doc["pack"] == "measured" and doc["pack_vs_loose_shuffled"] > 0
    assert tf.io.gfile.listdir(f"{root}/tmp") == []  # the pack is removed from there too


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "a", "b", "c"], "expected INPUTS [LABELS], got 3 paths"),
        (["bench", "a", "--profiles", "small"], "--profiles: for the sample profiles"),
        (["bench", "--sample", "4"], "--sample: for your own files, give INPUTS [LABELS]"),
        (["bench", "--pack-dir", "d"], "--pack-dir: for your own files"),
        (["bench", "--crop", "4,4"], "--crop: for your own files"),
        (["bench", "--shape", "None,4", "--label-crop", "none"], "--shape, --label-crop: for"),
        (["bench", "a", "--crop", "4,x"], "expected a window's sizes such as 64,64,64"),
        (["bench", "a", "--cold"], "--cold: for the sample profiles"),
        (["bench", "a", "--drain", "reduce"], "--drain reduce: INPUTS are drained by a Python"),
    ],
)
def test_options_of_the_other_mode_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == cli.EXIT_USAGE and message in capsys.readouterr().err


def test_a_missing_source_exits_1_naming_it(tmp_path, capsys):
    assert cli.main(["bench", str(tmp_path / "no"), "--rounds", "1"]) == 1
    assert f"npyio bench: inputs: '{tmp_path / 'no'}' does not exist" in capsys.readouterr().err


def test_the_help_states_the_rules_as_the_code_has_them():
    text = " ".join(cli.BENCH.description.split())
    assert f"from {bench_data.FILES_BOUND:.0%} of its time the pipeline is files-bound" in text
    assert f"npyio is advised from {bench_data.USE_NPYIO}x py_function" in text
    assert f"a pack from {bench_data.PACK_WORTH}x the loose files" in text
    assert f"taken evenly ({cli.sample.USER_SAMPLE})" in " ".join(
        o.settings.get("help", "") for o in cli.BENCH.options
    )


@pytest.fixture(scope="module")
def volumes(tmp_path_factory) -> str:
    """``img/case_00N.npy`` (float32 (D, H, W, 1)) and ``seg/case_00N.npy`` (uint8 (D, H, W)),
    a different (D, H, W) per case, as a segmentation dataset has them."""
    root = tmp_path_factory.mktemp("volumes")
    for side in ("img", "seg"):
        (root / side).mkdir()
    for i in range(6):
        dhw = (6 + i, 7 + 2 * i, 5 + i)
        np.save(root / "img" / f"case_{i:03d}.npy", np.full((*dhw, 1), i, np.float32))
        np.save(root / "seg" / f"case_{i:03d}.npy", np.full(dhw, i % 2, np.uint8))
    return str(root)


def test_a_crop_runs_on_files_of_different_shapes(volumes, capsys):
    # the plain form, as npyio.dataset takes it: the window's axes sized by each file
    argv = ["bench", f"{volumes}/img", f"{volumes}/seg", "--crop", "4,4,4", "--crops-per-file",
            "3", "--rounds", "1", "--json", "--batch-size", "2"]  # fmt: skip
    assert cli.main(argv) == cli.EXIT_OK, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    rows = {r["pipeline"]: r for r in doc["results"]}
    loose = [bench.NPYIO, bench.NATIVE, bench_data.SHUFFLED, bench.PY_FUNCTION, bench.FLOOR]
    loose += [bench.MMAP]  # local files: the py_function pipeline over mapped files too
    assert set(loose) <= set(rows) and all(rows[k]["samples"] == 6 * 3 for k in loose)
    assert bench_data.PACKED not in rows  # a pack reads rows whole: none is made
    assert doc["arguments"] == {"crop": [4, 4, 4], "crops_per_file": 3}
    assert doc["pack"].startswith("a pack's rows are read whole, and --crop") and not doc["bound"]
    assert doc["suggestions"][1] == f"no pack measured: {doc['pack']}"


def test_the_report_says_what_was_measured_without_a_pack(volumes, capsys):
    argv = ["bench", f"{volumes}/seg", "--shape", "None,None,None", "--rounds", "1"]
    assert cli.main(argv) == cli.EXIT_OK, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "npyio.dataset arguments: shape=(None, None, None)" in out
    assert "pack: none made -- a pack holds rows of one shape, and the elements' shapes vary" in out
    assert "bound: not measured" in out
    assert f"| {bench_data.SHUFFLED} | " in out and f"| {bench.PY_FUNCTION} | " in out


def test_a_crop_reads_enough_windows_a_round():
    assert bench_data.crops_per_file({}, 6) == 1  # whole files: each once
    assert bench_data.crops_per_file({"crop": (4,)}, 6) == -(-bench_data.CROP_WINDOWS // 6)
    assert bench_data.crops_per_file({"crop": (4,)}, 1000) == 1
    assert bench_data.crops_per_file({"crop": (4,), "crops_per_file": 2}, 6) == 2


def test_peers_read_the_users_pairs_with_the_crop_in_workers_of_their_own(volumes, monkeypatch):
    stub = peers.Peer(
        "cropping stub", "Stub", "numpy", "numpy", "tests.cli.peer_stub:crop_drain", ""
    )
    monkeypatch.setitem(peers.PEERS, "stub", stub)
    smp = bench_data.take_sample(f"{volumes}/img", f"{volumes}/seg", 6)
    arguments = {"crop": (4, 4, 4), "crops_per_file": 2}
    m = bench_data.measure(smp, 2, 1, None, lambda _: None, arguments, ["stub"])
    assert m.row(stub.name).samples == 12 and m.row(bench.NATIVE).samples == 12


@pytest.mark.parametrize("name", ["dali", "grain"])
def test_an_installed_peer_reads_the_users_crops(volumes, name):
    peer = peers.PEERS[name]
    if not peers.installed(peer):
        pytest.skip(f"{peer.package} is not installed (the peers extra)")
    smp = bench_data.take_sample(f"{volumes}/img", f"{volumes}/seg", 6)
    m = bench_data.measure(smp, 4, 1, None, lambda _: None, {"crop": (4, 4, 4)}, [name])
    assert m.row(peer.name).samples == 6 * bench_data.crops_per_file({"crop": (4,)}, 6)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--peers", "tfio"], "--peers with INPUTS: dali, grain"),
        (["--peers", "dali"], "give LABELS"),
    ],
)
def test_peers_with_inputs_must_read_pairs_that_they_can_crop(volumes, capsys, argv, words):
    sources = [f"{volumes}/img"] + ([f"{volumes}/seg"] if "tfio" in argv else [])
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", *sources, "--crop", "4,4,4", *argv])
    assert e.value.code == 2 and words in capsys.readouterr().err
