"""``parallel_map`` and its kin: ``Dataset.map``, ``flat_map``, ``interleave`` and ``scan``
whose functions TensorFlow runs as single-device functions.

``Dataset.map`` marks every function it builds as a possible multi-device function, which
TensorFlow optimizes again at every iterator start, so once per epoch; a single-device function
skips that (`npyio._tf.single_device_function` says how and why; bench/README.md, "Where the
time goes", has the figures). The maps here trace their functions so, and build the dataset ops
themselves (`npyio._tf.map_dataset` and the others). The result is an ordinary dataset graph:
it serializes, checkpoints, and runs on tf.data service workers like any other.

One difference: TensorFlow keeps about 1 KiB for every error a single-device function raises
(``Dataset.map``'s functions do not), so a pipeline that expects errors and carries on
(``ignore_errors``) should use ``Dataset.map``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from npyio._tf import (
    dataset_variant,
    flat_map_dataset,
    interleave_dataset,
    map_dataset,
    scan_dataset,
    single_device_function,
)


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

    f = single_device_function(flat_fn, [*lead, *flat_in])
    return f, structures[-1]


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
    return map_dataset(ds, f, structure, num_parallel_calls, deterministic)


def _dataset_function(ds: tf.data.Dataset, fn: Callable[..., tf.data.Dataset]) -> tuple[Any, Any]:
    """``fn`` (an element of ``ds`` -> a dataset) as a single-device function returning the
    dataset's variant, and the element structure of the datasets it returns."""

    def body(element: Any) -> tuple[tf.Tensor, Any]:
        inner = _apply(fn, element)
        return dataset_variant(inner), inner.element_spec

    return _function(ds, body)


def flat_map(ds: tf.data.Dataset, fn: Callable[..., tf.data.Dataset]) -> tf.data.Dataset:
    """``ds.flat_map(fn)``, ``fn`` run as a single-device function (see `parallel_map`).

    As with ``Dataset.flat_map``, a plain tuple element is passed as separate arguments; ``fn``
    returns a dataset, whose elements must be dense tensors.
    """
    f, structure = _dataset_function(ds, fn)
    return flat_map_dataset(ds, f, structure)


def interleave(
    ds: tf.data.Dataset,
    fn: Callable[..., tf.data.Dataset],
    cycle_length: int,
    num_parallel_calls: int | None,
    block_length: int = 1,
) -> tf.data.Dataset:
    """``ds.interleave(fn, cycle_length, block_length, num_parallel_calls, deterministic=True)``,
    ``fn`` run as a single-device function (see `parallel_map`): it makes the dataset of every
    element, so a multi-device one would be optimized again at each iterator start.
    ``num_parallel_calls=None``: no thread of its own (as ``Dataset.interleave`` without it).

    With ``cycle_length=1`` and no thread, it is `flat_map` but for checkpoints: a
    ``flat_map`` after a parallel map, restored where the read-ahead had reached the epoch's
    end, gave the next epoch another order of `npyio._pipeline.shuffle.IndexShuffle` (TF 2.21,
    blocks of 32 over 40 rows); this did not."""
    f, structure = _dataset_function(ds, fn)
    return interleave_dataset(ds, f, structure, cycle_length, block_length, num_parallel_calls)


def scan(
    ds: tf.data.Dataset, initial: tf.Tensor, fn: Callable[[tf.Tensor, Any], tuple[tf.Tensor, Any]]
) -> tf.data.Dataset:
    """``ds.scan(initial, fn)`` with one tensor of state, ``fn`` run as a single-device
    function (see `parallel_map`); ``fn(state, element)`` returns ``(state, output)``."""

    def body(state: tf.Tensor, element: Any) -> tuple[list[tf.Tensor], Any]:
        new_state, out = fn(state, element)
        return [new_state, *tf.nest.flatten(out)], tf.nest.map_structure(_spec, out)

    f, structure = _function(ds, body, tf.TensorSpec(initial.shape, initial.dtype))
    return scan_dataset(ds, initial, f, structure)
