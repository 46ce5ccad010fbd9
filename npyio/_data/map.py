"""``parallel_map``: ``Dataset.map`` whose function TensorFlow runs as a single-device function.

``Dataset.map`` marks every function it builds as a possible multi-device function. TensorFlow
then runs Grappler over the function and its whole library, partitions it and places it, and it
does all that again for every new iterator, so once per epoch. A function with
``experimental_ints_on_device`` is instantiated as a plain single-device function instead: no
Grappler, no partitioning, and a cheaper call per element. (tf.data's ``FunctionMetadata``
turns multi-device execution off for functions with that attribute; on the CPU, where tf.data
functions run, the attribute changes nothing else.)

For npyio that is most of the cost of a short epoch: the full header parser (the fallback
behind the header fast path) is a few hundred ops that were optimized at every iterator start,
whether a file ever needed it or not (bench/README.md, "Where the time goes", has the figures).

One difference: TensorFlow keeps about 1 KiB for every error a single-device function raises
(``Dataset.map``'s functions do not), so a pipeline that expects errors and carries on
(``ignore_errors``) should use ``Dataset.map``.

The map is built with ``tf.raw_ops.ParallelMapDatasetV2`` (``MapDataset`` without
parallelism) and wrapped with ``tf.data.experimental.from_variant``. The result is an ordinary
dataset graph: it serializes, checkpoints, and runs on tf.data service workers like any other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

#: Attributes of every function npyio maps over a dataset: it runs on one device. (Not also
#: ``_tf_data_function``, which ``Dataset.map`` sets: with both, a map function with an int32
#: output among several, in a pipeline built inside a ``tf.function``, fails in tf.data's graph
#: optimizations, "Expected only one fetch node".)
ATTRIBUTES = {"experimental_ints_on_device": True}


def _spec(value: Any) -> tf.TensorSpec:
    return tf.TensorSpec(value.shape, value.dtype)


def _apply(fn: Callable[..., Any], element: Any) -> Any:
    """As ``Dataset.map`` calls its function: a plain tuple element as separate arguments, a
    named tuple (or anything else) whole."""
    return fn(*element) if type(element) is tuple else fn(element)


def _function(
    ds: tf.data.Dataset,
    body: Callable[..., tuple[list[tf.Tensor] | tf.Tensor, Any]],
    state: tf.TensorSpec | None = None,
) -> tuple[Any, Any]:
    """The one way npyio traces a function over the elements of ``ds``: a single-device
    concrete function of the flat element (after a ``state`` tensor, if given), and the
    structure its ``body`` reports. ``body(element)`` (``body(state, element)``) returns the
    flat outputs and their structure."""
    in_spec = ds.element_spec
    flat_in = tf.nest.flatten(in_spec)
    lead = [] if state is None else [state]
    structures: list[Any] = []

    def flat_fn(*args: tf.Tensor) -> list[tf.Tensor] | tf.Tensor:
        element = tf.nest.pack_sequence_as(in_spec, list(args[len(lead) :]))
        flat, structure = body(*args[: len(lead)], element)
        structures.append(structure)
        return flat

    f = tf.function(
        flat_fn,
        input_signature=[*lead, *flat_in],
        autograph=False,
        experimental_attributes=ATTRIBUTES,
    ).get_concrete_function()
    return f, structures[-1]


def _op_arguments(ds: tf.data.Dataset, f: Any, structure: Any) -> dict[str, Any]:
    """The arguments every dataset op with a function takes: the input, the function and its
    captures, and the types and shapes of the elements it makes."""
    flat_out = tf.nest.flatten(structure)
    return dict(
        input_dataset=tf.data.experimental.to_variant(ds),
        other_arguments=f.captured_inputs,
        f=f,
        output_types=[s.dtype for s in flat_out],
        output_shapes=[s.shape for s in flat_out],
    )


def parallel_map(
    ds: tf.data.Dataset,
    fn: Callable[..., Any],
    num_parallel_calls: int | None = tf.data.AUTOTUNE,
    deterministic: bool | None = None,
) -> tf.data.Dataset:
    """``ds.map(fn, num_parallel_calls, deterministic)``, ``fn`` run as a single-device function.

    As with ``Dataset.map``, a plain tuple element is passed as separate arguments (a named
    tuple as one). ``fn`` must return a tensor or a (nested) tuple of tensors; elements must
    be dense tensors.
    """
    in_spec = ds.element_spec
    if not all(isinstance(s, tf.TensorSpec) for s in tf.nest.flatten(in_spec)):
        raise TypeError(f"parallel_map needs dense tensor elements, got {in_spec}")

    def body(element: Any) -> tuple[list[tf.Tensor], Any]:
        out = _apply(fn, element)
        return tf.nest.flatten(out), tf.nest.map_structure(_spec, out)

    f, structure = _function(ds, body)
    common = dict(_op_arguments(ds, f, structure), preserve_cardinality=True)
    if num_parallel_calls is None:
        variant = tf.raw_ops.MapDataset(**common)
    else:
        variant = tf.raw_ops.ParallelMapDatasetV2(
            num_parallel_calls=tf.constant(num_parallel_calls, tf.int64),
            deterministic={None: "default", True: "true", False: "false"}[deterministic],
            **common,
        )
    return tf.data.experimental.from_variant(variant, structure)


def _dataset_function(ds: tf.data.Dataset, fn: Callable[..., tf.data.Dataset]) -> tuple[Any, Any]:
    """``fn`` (an element of ``ds`` -> a dataset) as a single-device function returning the
    dataset's variant, and the element structure of the datasets it returns."""

    def body(element: Any) -> tuple[tf.Tensor, Any]:
        inner = _apply(fn, element)
        return tf.data.experimental.to_variant(inner), inner.element_spec

    return _function(ds, body)


def flat_map(ds: tf.data.Dataset, fn: Callable[..., tf.data.Dataset]) -> tf.data.Dataset:
    """``ds.flat_map(fn)``, ``fn`` run as a single-device function (see `parallel_map`).

    As with ``Dataset.flat_map``, a plain tuple element is passed as separate arguments; ``fn``
    returns a dataset, whose elements must be dense tensors.
    """
    f, structure = _dataset_function(ds, fn)
    variant = tf.raw_ops.FlatMapDataset(**_op_arguments(ds, f, structure))
    return tf.data.experimental.from_variant(variant, structure)


def interleave(
    ds: tf.data.Dataset,
    fn: Callable[..., tf.data.Dataset],
    cycle_length: int,
    num_parallel_calls: int,
    block_length: int = 1,
) -> tf.data.Dataset:
    """``ds.interleave(fn, cycle_length, block_length, num_parallel_calls, deterministic=True)``,
    ``fn`` run as a single-device function (see `parallel_map`): it makes the dataset of every
    element, so a multi-device one would be optimized again at each iterator start."""
    f, structure = _dataset_function(ds, fn)
    autotune = tf.constant(tf.data.AUTOTUNE, tf.int64)
    variant = tf.raw_ops.ParallelInterleaveDatasetV4(
        cycle_length=tf.constant(cycle_length, tf.int64),
        block_length=tf.constant(block_length, tf.int64),
        buffer_output_elements=autotune,  # as Dataset.interleave
        prefetch_input_elements=autotune,
        num_parallel_calls=tf.constant(num_parallel_calls, tf.int64),
        deterministic="true",
        **_op_arguments(ds, f, structure),
    )
    return tf.data.experimental.from_variant(variant, structure)


def scan(
    ds: tf.data.Dataset, initial: tf.Tensor, fn: Callable[[tf.Tensor, Any], tuple[tf.Tensor, Any]]
) -> tf.data.Dataset:
    """``ds.scan(initial, fn)`` with one tensor of state, ``fn`` run as a single-device
    function (see `parallel_map`); ``fn(state, element)`` returns ``(state, output)``."""

    def body(state: tf.Tensor, element: Any) -> tuple[list[tf.Tensor], Any]:
        new_state, out = fn(state, element)
        return [new_state, *tf.nest.flatten(out)], tf.nest.map_structure(_spec, out)

    f, structure = _function(ds, body, tf.TensorSpec(initial.shape, initial.dtype))
    variant = tf.raw_ops.ScanDataset(
        initial_state=[initial], preserve_cardinality=True, **_op_arguments(ds, f, structure)
    )
    return tf.data.experimental.from_variant(variant, structure)
