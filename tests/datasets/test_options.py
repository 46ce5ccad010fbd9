"""Options as data: every public keyword argument lands in exactly one options class, the
classes check their values when they are made, and planning passes them along unchanged."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import npyio
from npyio._data.options import (
    DatasetOptions,
    LoaderOptions,
    ReadOptions,
    RowsOptions,
    SplitOptions,
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
            if f.init:
                assert f.name in params, f"{cls.__name__}.{f.name} is not an argument of dataset"
                assert params[f.name] == f.default, f"{f.name}: dataset and {cls.__name__}"


def test_rows_parameters_are_rows_options():
    params = keyword_parameters(npyio.rows)
    assert set(params) == init_fields(RowsOptions)
    for f in dataclasses.fields(RowsOptions):
        assert params[f.name] == f.default


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
        ({"key": "x", "max_file_size": 10}, "max_file_size is not supported with key"),
        ({"label_key": "y"}, "label_key needs key"),
        ({"key": "x", "backend": "py_function"}, "needs backend='graph'"),
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


def test_rows_options_check_their_values():
    with pytest.raises(ValueError, match="shuffle_buffer must be a positive int"):
        RowsOptions(shuffle_buffer=0)
    with pytest.raises(ValueError, match="num_parallel_reads must be a positive int"):
        RowsOptions(num_parallel_reads=0)
    assert RowsOptions().auto and not RowsOptions(num_parallel_reads=2).auto
