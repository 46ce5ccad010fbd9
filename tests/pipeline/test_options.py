"""Options as data: every public keyword argument lands in exactly one options class, the
classes check their values when they are made, and planning passes them along unchanged."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap

import numpy as np
import pytest

import npyio
import npyio.errors
from npyio._pipeline.options import (
    ROWS_OPTIONS,
    DatasetOptions,
    LoaderOptions,
    ReadOptions,
    SplitOptions,
    called,
    entry_points,
)

DATASET_CLASSES = (ReadOptions, LoaderOptions, SplitOptions)
#: Arguments that are not options: the sources, and dataset_from_directory's own listing.
NOT_OPTIONS = {
    "inputs",
    "labels",
    "directory",
    "label_mode",
    "class_names",
    "follow_links",
    "verbose",
}


def init_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if f.init}


def keyword_parameters(function: object) -> dict[str, object]:
    return {
        name: p.default
        for name, p in inspect.signature(function).parameters.items()  # type: ignore[arg-type]
        if name not in NOT_OPTIONS
    }


@pytest.mark.parametrize("function", [npyio.dataset, npyio.dataset_from_directory])
def test_every_parameter_is_a_field_of_exactly_one_class(function):
    for name in keyword_parameters(function):
        owners = [cls.__name__ for cls in DATASET_CLASSES if name in init_fields(cls)]
        assert len(owners) == 1, f"{function.__name__}({name}=...) is in {owners}"


def test_every_field_is_a_parameter_of_dataset_with_the_same_default():
    params = keyword_parameters(npyio.dataset)
    for cls in DATASET_CLASSES:
        for f in dataclasses.fields(cls):
            if f.init and f.name != "shuffle_buffer":  # npyio.rows' alone
                assert f.name in params, f"{cls.__name__}.{f.name} is not an argument of dataset"
                assert params[f.name] == f.default, f"{f.name}: dataset and {cls.__name__}"


def test_rows_parameters_are_loader_and_split_options_by_rows_names():
    """One options schema: npyio.rows' parameters are `LoaderOptions`' and `SplitOptions`'
    fields, by the names rows gives them (``num_parallel_reads``), with the same defaults."""
    params = keyword_parameters(npyio.rows)
    assert set(params) == ROWS_OPTIONS | init_fields(SplitOptions)
    for cls in (LoaderOptions, SplitOptions):
        for f in dataclasses.fields(cls):
            name = called("rows", f.name)
            if name in params:
                assert params[name] == f.default, name


#: The options classes each entry point makes, and its parameters that are no option.
MADE = {
    npyio.dataset: ({"ReadOptions", "LoaderOptions", "SplitOptions"}, NOT_OPTIONS),
    npyio.dataset_from_directory: ({"ReadOptions", "LoaderOptions", "SplitOptions"}, NOT_OPTIONS),
    npyio.rows: ({"LoaderOptions", "SplitOptions"}, NOT_OPTIONS),
    npyio.pack: ({"PackOptions", "ReadOptions"}, NOT_OPTIONS | {"out", "progress"}),
}


@pytest.mark.parametrize("function", list(MADE), ids=lambda f: f.__name__)
def test_every_option_is_passed_by_its_own_name(function):
    """Each entry point makes its options explicitly, each parameter passed as the keyword of
    its own name (``dtype=dtype``), and every option parameter is passed: a reader (or mypy)
    follows a parameter from the signature to where it acts, and none is dropped or crossed
    (``shape=label_shape``) without a test failing."""
    classes, others = MADE[function]
    tree = ast.parse(textwrap.dedent(inspect.getsource(inspect.unwrap(function))))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in classes
    ]
    assert {call.func.id for call in calls} == classes  # type: ignore[attr-defined]
    passed = []
    name = function.__name__
    for call in calls:
        assert not call.args, f"{call.func.id} made with positional arguments"  # type: ignore[attr-defined]
        for keyword in call.keywords:
            if keyword.arg == "function":  # the entry point whose words name the fields
                assert isinstance(keyword.value, ast.Constant) and keyword.value.value == name
                continue
            # its own parameter, or the one this entry point calls it (SAME_IDEA)
            own = called(name, keyword.arg)
            assert isinstance(keyword.value, ast.Name) and keyword.value.id == own, (
                f"{name}: {keyword.arg}= is not passed its own parameter"
            )
            passed.append(own)
    assert sorted(passed) == sorted(set(inspect.signature(function).parameters) - others)


def test_from_arguments_takes_each_field_by_name_and_leaves_other_names():
    options = DatasetOptions.from_arguments(
        {"batch_size": 4, "key": "x", "subset": None, "verbose": True, "inputs": "ignored"}
    )
    assert options.loader.batch_size == 4
    assert options.read.key == "x"
    assert options.read.suffix == ".npz"
    assert options.split == SplitOptions()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"batch_size": 0}, "batch_size must be a positive int or None, got 0"),
        ({"batch_size": True}, "batch_size must be a positive int or None, got True"),
        ({"backend": "nope"}, "unknown backend 'nope'"),
        ({"shard": (2, 2)}, "shard must satisfy"),
        ({"max_header_size": -1}, "max_header_size"),
        ({"subset": "training"}, "needs validation_split"),
        ({"validation_split": 1.5, "subset": "training"}, "between 0 and 1"),
        ({"validation_split": 0.2, "subset": "train"}, "subset must be"),
        ({"validation_split": 0.2, "subset": "both", "shuffle": True}, "needs a seed"),
    ],
)
def test_options_check_their_values_when_made(arguments, message):
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(")):
        DatasetOptions.from_arguments(arguments)


def test_shard_is_kept_as_a_pair():
    class Context:  # a tf.distribute.InputContext, as far as shard= cares
        num_input_pipelines, input_pipeline_id = 3, 1

    assert LoaderOptions(shard=Context()).shard == (3, 1)
    assert dataclasses.replace(LoaderOptions(shard=(3, 1)), shuffle=True).shard == (3, 1)


def test_limits_come_from_the_size_arguments():
    read = ReadOptions(max_header_size=50, max_file_size=1000)
    assert (read.limits.max_header_size, read.limits.max_file_size) == (50, 1000)


def test_rows_options_check_their_values_in_rows_words():
    with pytest.raises(ValueError, match="shuffle_buffer must be a positive int"):
        LoaderOptions(shuffle=True, shuffle_buffer=0, function="rows")
    with pytest.raises(ValueError, match="num_parallel_reads must be a positive int"):
        LoaderOptions(num_parallel_calls=0, function="rows")
    with pytest.raises(ValueError, match="num_parallel_calls must be a positive int"):
        LoaderOptions(num_parallel_calls=0)
    assert LoaderOptions().auto and not LoaderOptions(num_parallel_calls=2).auto
    options = DatasetOptions.from_arguments({"num_parallel_reads": 3, "shuffle": True}, "rows")
    assert options.loader.num_parallel_calls == 3 and options.loader.shuffle


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"shuffle": "no"}, TypeError, "shuffle must be a bool, got 'no'"),
        ({"drop_remainder": 1}, TypeError, "drop_remainder must be a bool, got 1"),
        ({"with_paths": None}, TypeError, "with_paths must be a bool, got None"),
        ({"ignore_errors": "yes"}, TypeError, "ignore_errors must be a bool"),
        ({"reshuffle_each_iteration": 0}, TypeError, "reshuffle_each_iteration must be a bool"),
        ({"deterministic": "false"}, TypeError, "deterministic must be a bool or None"),
        ({"seed": "x"}, TypeError, "seed must be an int or None, got 'x'"),
        ({"seed": True}, TypeError, "seed must be an int or None, got True"),
        ({"seed": 1.5}, TypeError, "seed must be an int or None"),
        ({"prefetch": "abc"}, ValueError, "prefetch must be a positive int, tf.data.AUTOTUNE"),
        ({"prefetch": -2}, ValueError, "prefetch must be"),
        ({"num_parallel_calls": 0}, ValueError, "num_parallel_calls must be a positive int"),
        ({"num_parallel_calls": "4"}, ValueError, "num_parallel_calls must be a positive int"),
        ({"num_parallel_calls": True}, ValueError, "num_parallel_calls must be a positive int"),
        ({"batch_size": 2.0}, ValueError, "batch_size must be a positive int or None"),
        ({"backend": 3}, TypeError, "backend must be a str"),
        ({"key": 3}, TypeError, "key must be a str or None, got 3"),
        ({"key": "x", "label_key": b"y"}, TypeError, "label_key must be a str or None"),
        ({"dtype": "float33"}, TypeError, "dtype: "),
        ({"label_dtype": {"a": "nope"}}, TypeError, "label_dtype: "),
        ({"shape": "3,2"}, TypeError, "shape must be a shape"),
        ({"max_file_size": "1k"}, ValueError, "max_file_size must be None or a non-negative int"),
        ({"validation_split": "0.2", "subset": "both"}, ValueError, "validation_split must be"),
        ({"validation_split": 0.2, "subset": 1}, ValueError, "subset must be"),
        ({"padding_value": "0"}, TypeError, "padding_value must be a number"),
        ({"batchsize": 4}, TypeError, "argument 'batchsize' -- did you mean 'batch_size'?"),
    ],
)
def test_every_argument_is_checked_at_the_boundary_naming_it(arguments, error, message):
    with pytest.raises(error, match=re.escape(message)):
        DatasetOptions.from_arguments(arguments)


def test_values_a_check_takes_are_kept_in_their_plain_form():
    loader = LoaderOptions(
        shuffle=np.bool_(True), seed=np.int64(3), prefetch=0, num_parallel_calls=-1
    )
    assert (loader.shuffle, loader.seed, loader.prefetch) == (True, 3, 0)
    assert type(loader.shuffle) is bool and type(loader.seed) is int
    assert LoaderOptions(deterministic=None, prefetch=None).prefetch is None


def test_the_public_functions_refuse_a_bad_argument_before_reading_anything(tmp_path):
    missing = str(tmp_path / "nothing-here")
    with pytest.raises(TypeError, match="shuffle must be a bool"):
        npyio.dataset(missing, shuffle="no")
    with pytest.raises(TypeError, match="seed must be an int or None"):
        npyio.dataset_from_directory(missing, seed="x")
    with pytest.raises(ValueError, match="num_parallel_reads must be a positive int"):
        npyio.rows(missing, num_parallel_reads=0)
    with pytest.raises(TypeError, match="drop_remainder must be a bool"):
        npyio.rows(missing, drop_remainder="yes")
    with pytest.raises(ValueError, match="subset must be"):
        npyio.rows(missing, validation_split=0.5, subset="test")
    with pytest.raises(ValueError, match="needs a seed"):
        npyio.rows(
            missing,
            validation_split=0.5,
            subset="both",
            shuffle=True,
            shuffle_buffer=8,
        )


def test_rows_options_refuse_unknown_names():
    with pytest.raises(TypeError, match=r"'with_paths' is an option of npyio.dataset, "):
        DatasetOptions.from_arguments({"inputs": "x", "with_paths": True}, "rows")
    with pytest.raises(TypeError, match=r"did you mean 'num_parallel_calls'"):
        DatasetOptions.from_arguments({"num_parallel_reads": 2})
    with pytest.raises(TypeError, match=r"'shuffle_buffer' is an option of npyio.rows"):
        DatasetOptions.from_arguments({"shuffle_buffer": 2})


def test_rows_shuffle_buffer_needs_shuffle():
    assert LoaderOptions(shuffle=True).shuffle_buffer is None  # the plan picks the cycle
    with pytest.raises(ValueError, match=r"shuffle_buffer=8 .* needs shuffle=True"):
        LoaderOptions(shuffle_buffer=8, function="rows")
    with pytest.raises(TypeError, match="shuffle must be a bool"):
        LoaderOptions(shuffle="yes", function="rows")


def test_entry_points_are_the_signatures():
    for name, names in entry_points().items():
        assert names == set(inspect.signature(getattr(npyio, name)).parameters), name


#: A wrong keyword, and what each entry point's TypeError says of it.
WRONG = [
    (npyio.rows, {"shufle": True}, "argument 'shufle' -- did you mean 'shuffle'?"),
    (npyio.dataset, {"batchsize": 2}, "argument 'batchsize' -- did you mean 'batch_size'?"),
    (npyio.pack, {"sharde_size": 2}, "did you mean 'shard_size'?"),
    (
        npyio.rows,
        {"num_parallel_calls": 2},
        "did you mean 'num_parallel_reads'? ('num_parallel_calls' is an option of "
        "npyio.dataset, npyio.dataset_from_directory; npyio.rows calls it so)",
    ),
    (npyio.dataset, {"num_parallel_reads": 2}, "did you mean 'num_parallel_calls'?"),
    (npyio.dataset_from_directory, {"inputs": "x"}, "did you mean 'directory'?"),
    (
        npyio.rows,
        {"key": "x"},
        "'key' is an option of npyio.dataset, npyio.pack, not of npyio.rows, whose options "
        "are batch_size, ",
    ),
    (npyio.dataset, {"shuffle_buffer": 8}, "'shuffle_buffer' is an option of npyio.rows, not"),
    (npyio.pack, {"batch_size": 8}, "'batch_size' is an option of npyio.dataset, "),
    (npyio.dataset, {"zzz": 1}, "argument 'zzz' -- expected one of backend, batch_size, "),
]


@pytest.mark.parametrize(
    ("function", "arguments", "message"),
    WRONG,
    ids=[f"{f.__name__}-{next(iter(a))}" for f, a, _ in WRONG],
)
def test_a_wrong_keyword_names_the_nearest_or_the_entry_point_that_has_it(
    tmp_path, function, arguments, message
):
    kw = {"out": str(tmp_path / "p")} if function is npyio.pack else {}
    with pytest.raises(TypeError, match="^" + re.escape(f"npyio.{function.__name__}() got an ")):
        function(str(tmp_path / "missing"), **kw, **arguments)
    with pytest.raises(TypeError, match=re.escape(message)):
        function(str(tmp_path / "missing"), **kw, **arguments)
    assert not (tmp_path / "p").exists()  # refused before anything is read or written
