"""TensorFlow's internals, behind one module: the raw ops and the private or experimental
names npyio uses, and the reading of TensorFlow's error text.

Each is here because the public API does not serve, and its comment or docstring says why.
They are what a new TensorFlow can break (CONTRIBUTING.md, "Supported TensorFlow"): their
tests are ``tests/test_tf.py`` and those of the modules that call them. Everything else in npyio
uses public TensorFlow.

TensorFlow is imported inside the functions that build ops, never when this module is
imported: ``npyio verify`` and ``npyio inspect`` read error text here, and the plan imports
the package, without loading TensorFlow.

**Error text.** A ``tf.errors.OpError`` carries its reason only as text, decorated by where it
was raised, and no public TensorFlow API gives the reason alone. npyio reads the forms below
(each pattern says why it is needed), so that its errors say ``"PATH: reason"`` from every entry
point. The patterns follow TensorFlow's wording: a TensorFlow that words them otherwise fails
the tests that pin each form (``tests/test_tf.py``, ``tests/read/test_part.py``,
``tests/graph/test_zip.py``, ``tests/cli/test_verify.py``).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tensorflow as tf

__all__ = [
    "ANNOTATION",
    "FUNCTION_NODE",
    "GRAPH_ASSERT",
    "OP_SUFFIX",
    "SINGLE_DEVICE",
    "dataset_variant",
    "executing_eagerly_outside_functions",
    "fixed_length_records",
    "flat_map_dataset",
    "function_reason",
    "get_seed",
    "graph_assertion",
    "ignore_external_state",
    "interleave_dataset",
    "last_line",
    "lower_bound",
    "map_dataset",
    "no_injected_prefetch",
    "print_to_stderr",
    "random_index_shuffle",
    "rebatch_dataset",
    "scan_dataset",
    "single_device_function",
    "split_values",
    "stateless_call",
    "unbatch_dataset",
    "undecorated",
]

# --- TensorFlow's error text ------------------------------------------------------------------
#: An eager op's error raised inside a ``tf.function`` starts with the function's name
#: (``"{{function_node __inference_...}} PATH; REASON"``): not part of the reason.
FUNCTION_NODE = re.compile(r"^\{\{function_node [^}]*\}\}\s*")
#: An eager op's error ends with the op and the op's name (``"... [Op:ReadFile] name: "``).
OP_SUFFIX = re.compile(r"\s*\[Op:\w+\].*$", re.DOTALL)
#: A failed graph ``Assert`` holds its message C-escaped, between ``assertion failed: [`` and the
#: node it failed in; for npyio's assertions that message is npyio's own words.
GRAPH_ASSERT = re.compile(r"assertion failed: \[(.*?)\]\n\t \[\[\{\{", re.DOTALL)
#: ``{{node ...}}`` and the other annotations TensorFlow writes into a message's lines.
ANNOTATION = re.compile(r"\{\{[^}]*\}\}\s*")


def undecorated(message: str) -> str:
    """An eager op error's message without its function-node prefix and its op suffix."""
    return OP_SUFFIX.sub("", FUNCTION_NODE.sub("", message))


def function_reason(message: str) -> str:
    """The reason of an error raised inside a graph function that ran eagerly: the message's
    last paragraph (after ``"Graph execution error: ... Detected at ..."``), without the node
    line that follows it ('' when there is none)."""
    return message.split("\n\n")[-1].split("\n\t")[0].strip()


def graph_assertion(message: str) -> str | None:
    """The message of a failed graph assertion, unescaped; None if ``message`` holds none."""
    m = GRAPH_ASSERT.search(message)
    if m is None:
        return None
    raw, _ = codecs.escape_decode(m.group(1).encode("utf-8"))
    return raw.decode("utf-8", "replace")


def last_line(message: str) -> str:
    """The last line of a message that is not empty, without TensorFlow's ``{{...}}``
    annotations."""
    return ANNOTATION.sub("", message.strip().splitlines()[-1]).strip()


# --- functions: single-device, never inlined, called without state ---------------------------
#: The attributes of every function npyio maps over a dataset (`single_device_function`).
#: ``experimental_ints_on_device`` is an attribute of TensorFlow's function runtime, not an
#: option of the public API. (Not also ``_tf_data_function``, which ``Dataset.map`` sets: with
#: both, a map function with an int32 output among several, in a pipeline built inside a
#: ``tf.function``, fails in tf.data's graph optimizations, "Expected only one fetch node".)
SINGLE_DEVICE = {"experimental_ints_on_device": True}


def single_device_function(fn: Callable[..., Any], input_signature: Sequence[Any]) -> Any:
    """``fn`` traced as a concrete function that TensorFlow runs as a single-device function,
    for the dataset ops below.

    Why not ``Dataset.map`` and its kin: they mark every function they build as a possible
    multi-device function. TensorFlow then runs Grappler over the function and its whole
    library, partitions it and places it, and it does all that again for every new iterator,
    so once per epoch. A function with ``experimental_ints_on_device`` is instantiated as a
    plain single-device function instead: no Grappler, no partitioning, and a cheaper call per
    element. (tf.data's ``FunctionMetadata`` turns multi-device execution off for functions
    with that attribute; on the CPU, where tf.data functions run, the attribute changes nothing
    else.) For npyio that is most of the cost of a short epoch: the full header parser is a few
    hundred ops that were optimized at every iterator start, whether a file ever needed it or
    not (bench/README.md, "Where the time goes"). No public API builds a dataset op from such a
    function, hence the raw ops below.
    """
    import tensorflow as tf

    return tf.function(
        fn,
        input_signature=list(input_signature),
        autograph=False,
        experimental_attributes=SINGLE_DEVICE,
    ).get_concrete_function()


def stateless_call(function: Any, args: Sequence[Any], out_types: Sequence[Any]) -> list[Any]:
    """The outputs of the concrete ``function`` on ``args`` (nested as its signature, flattened
    for the call op), as a list.

    Eagerly, the function itself. In a graph, the ``PartitionedCall`` op, not the
    ``StatefulPartitionedCall`` that calling the function there emits for a body with an
    ``Assert``: tf.data refuses to checkpoint an iterator whose map holds the latter, and no
    public API emits the former. Its outputs have no static shape (set it at the call site)."""
    import tensorflow as tf

    if tf.executing_eagerly():
        return list(tf.nest.flatten(function(*args)))
    return list(
        tf.raw_ops.PartitionedCall(
            args=[*tf.nest.flatten(list(args)), *function.captured_inputs],
            Tout=list(out_types),
            f=function,
        )
    )


def executing_eagerly_outside_functions() -> bool:
    """Whether the code around the current ``tf.function`` (or dataset function) runs eagerly:
    False only in a TF1-style graph (``tf.Graph().as_default()``, a session,
    ``disable_eager_execution``). ``tf.executing_eagerly()`` is False inside every function,
    where npyio builds most of its ops, so it cannot tell the two apart; only ``tf.compat.v1``
    has this one."""
    import tensorflow as tf

    return bool(tf.compat.v1.executing_eagerly_outside_functions())


# --- dataset ops, built from their raw ops ----------------------------------------------------
def dataset_variant(ds: tf.data.Dataset) -> tf.Tensor:
    """``ds`` as the variant tensor a dataset op takes (or a function of `flat_map_dataset`
    and `interleave_dataset` returns)."""
    import tensorflow as tf

    return tf.data.experimental.to_variant(ds)


def dataset_from_variant(variant: tf.Tensor, structure: Any) -> tf.data.Dataset:
    """The dataset a dataset op's ``variant`` output is, its elements ``structure`` (of
    ``tf.TensorSpec``): for an op of npyio's own (``NpyioBatchDataset``)."""
    import tensorflow as tf

    return tf.data.experimental.from_variant(variant, structure)


def _op_arguments(ds: tf.data.Dataset, f: Any, structure: Any) -> dict[str, Any]:
    """The arguments every dataset op with a function takes: the input, the function and its
    captures, and the types and shapes of the elements it makes."""
    import tensorflow as tf

    flat_out = tf.nest.flatten(structure)
    return dict(
        input_dataset=dataset_variant(ds),
        other_arguments=f.captured_inputs,
        f=f,
        output_types=[s.dtype for s in flat_out],
        output_shapes=[s.shape for s in flat_out],
    )


def map_dataset(
    ds: tf.data.Dataset,
    f: Any,
    structure: Any,
    num_parallel_calls: int | None,
    deterministic: bool | None,
) -> tf.data.Dataset:
    """``ds.map``, by the ``ParallelMapDatasetV2`` op (``MapDataset`` for no parallelism), with
    the concrete function ``f`` (`single_device_function`) whose outputs make ``structure``.
    ``Dataset.map`` takes a Python function and traces it multi-device (`single_device_function`
    says why that costs every epoch); the result here is an ordinary dataset graph: it
    serializes, checkpoints, and runs on tf.data service workers like any other."""
    import tensorflow as tf

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


def flat_map_dataset(ds: tf.data.Dataset, f: Any, structure: Any) -> tf.data.Dataset:
    """``ds.flat_map``, by the ``FlatMapDataset`` op, with the concrete function ``f``
    (`single_device_function`) that returns a dataset's variant (`dataset_variant`) whose
    elements make ``structure``; see `map_dataset` for why."""
    import tensorflow as tf

    variant = tf.raw_ops.FlatMapDataset(**_op_arguments(ds, f, structure))
    return tf.data.experimental.from_variant(variant, structure)


def interleave_dataset(
    ds: tf.data.Dataset,
    f: Any,
    structure: Any,
    cycle_length: int,
    block_length: int,
    num_parallel_calls: int | None,
) -> tf.data.Dataset:
    """``ds.interleave(..., deterministic=True)``, by the ``ParallelInterleaveDatasetV4`` op
    (the ``InterleaveDataset`` op for ``num_parallel_calls=None``), with the concrete function
    ``f`` as in `flat_map_dataset` (see `map_dataset` for why): it makes the dataset of every
    element, so a multi-device one would be optimized again at each iterator start."""
    import tensorflow as tf

    if num_parallel_calls is None:
        variant = tf.raw_ops.InterleaveDataset(
            cycle_length=tf.constant(cycle_length, tf.int64),
            block_length=tf.constant(block_length, tf.int64),
            **_op_arguments(ds, f, structure),
        )
        return tf.data.experimental.from_variant(variant, structure)
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


def unbatch_dataset(ds: tf.data.Dataset) -> tf.data.Dataset:
    """``ds.unbatch()`` of dense tensors, by the ``UnbatchDataset`` op alone: the public one
    first maps every element through a function that makes sparse and ragged parts dense, a
    multi-device one that tf.data optimizes again at every iterator start."""
    import tensorflow as tf

    structure = tf.nest.map_structure(
        lambda s: tf.TensorSpec(s.shape[1:], s.dtype), ds.element_spec
    )
    flat = tf.nest.flatten(structure)
    variant = tf.raw_ops.UnbatchDataset(
        input_dataset=dataset_variant(ds),
        output_types=[s.dtype for s in flat],
        output_shapes=[s.shape for s in flat],
    )
    return tf.data.experimental.from_variant(variant, structure)


def rebatch_dataset(ds: tf.data.Dataset, batch_size: int, drop_remainder: bool) -> tf.data.Dataset:
    """``ds.rebatch(batch_size, drop_remainder)`` of dense tensors, by the
    ``RebatchDatasetV2`` op alone (`unbatch_dataset` says why)."""
    import tensorflow as tf

    lead = batch_size if drop_remainder else None
    structure = tf.nest.map_structure(
        lambda s: tf.TensorSpec(tf.TensorShape([lead]).concatenate(s.shape[1:]), s.dtype),
        ds.element_spec,
    )
    flat = tf.nest.flatten(structure)
    variant = tf.raw_ops.RebatchDatasetV2(
        input_dataset=dataset_variant(ds),
        batch_sizes=tf.constant([batch_size], tf.int64),
        drop_remainder=tf.constant(drop_remainder),
        output_types=[s.dtype for s in flat],
        output_shapes=[s.shape for s in flat],
    )
    return tf.data.experimental.from_variant(variant, structure)


def scan_dataset(
    ds: tf.data.Dataset, initial: tf.Tensor, f: Any, structure: Any
) -> tf.data.Dataset:
    """``ds.scan(initial, ...)`` with one tensor of state, by the ``ScanDataset`` op, with the
    concrete function ``f`` (state, then the flat element -> new state, then the flat outputs
    of ``structure``); see `map_dataset` for why."""
    import tensorflow as tf

    variant = tf.raw_ops.ScanDataset(
        initial_state=[initial], preserve_cardinality=True, **_op_arguments(ds, f, structure)
    )
    return tf.data.experimental.from_variant(variant, structure)


def fixed_length_records(
    filenames: tf.Tensor,
    header_bytes: tf.Tensor,
    record_bytes: tf.Tensor,
    footer_bytes: tf.Tensor,
    buffer_size: tf.Tensor,
) -> tf.data.Dataset:
    """The records (scalar strings) of the file ``filenames`` (a scalar) between
    ``header_bytes`` and ``footer_bytes`` (int64 scalars), read with a buffer of
    ``buffer_size``: the ``FixedLengthRecordDatasetV2`` op itself, uncompressed.

    ``tf.data.FixedLengthRecordDataset`` wraps the op in a ``flat_map`` over its file names, a
    multi-device function that TensorFlow optimizes again for every dataset of it that runs
    (`single_device_function` says why): npyio makes one for every piece of rows it reads, and
    for a one-shard pack that cost more than reading its payload (bench/README.md,
    "Packing")."""
    import tensorflow as tf

    variant = tf.raw_ops.FixedLengthRecordDatasetV2(
        filenames=filenames,
        header_bytes=header_bytes,
        record_bytes=record_bytes,
        footer_bytes=footer_bytes,
        buffer_size=buffer_size,
        compression_type="",
    )
    return tf.data.experimental.from_variant(variant, tf.TensorSpec([], tf.string))


# --- options that are not public, or only experimental ---------------------------------------
def no_injected_prefetch(options: tf.data.Options) -> tf.data.Options:
    """``options``, with tf.data's ``inject_prefetch`` optimization turned off, and returned.

    tf.data injects a prefetch (on by default) when a pipeline ends in a synchronous step;
    only this experimental option keeps it from doing so (`npyio._pipeline.shuffle.IndexShuffle`
    says why its anchor must stay the last step)."""
    options.experimental_optimization.inject_prefetch = False
    return options


def ignore_external_state(options: tf.data.Options) -> tf.data.Options:
    """``options``, with ``experimental_external_state_policy`` IGNORE, and returned: a
    checkpoint then leaves out what the pipeline's stateful ops hold, where the default
    (FAIL) refuses any function that holds one. Only this experimental option says so
    (`npyio._sources.rows` uses it for ops that keep nothing across calls)."""
    import tensorflow as tf

    options.experimental_external_state_policy = tf.data.experimental.ExternalStatePolicy.IGNORE
    return options


def get_seed() -> tuple[Any, Any]:
    """The global seed and a new op seed, as tf.data derives an op's seed: ``(None, None)``
    unless ``tf.random.set_seed`` set one. TensorFlow 2 has no public API that reads the
    global seed back; ``tf.compat.v1.get_seed`` does. It counts its calls: each gives another
    op seed."""
    import tensorflow as tf

    return tf.compat.v1.get_seed(None)


# --- ops ------------------------------------------------------------------------------------
def random_index_shuffle(
    index: tf.Tensor, seed: tf.Tensor, max_index: int, rounds: int
) -> tf.Tensor:
    """The ``RandomIndexShuffle`` op: ``index`` (int64, any shape) through a keyed block cipher
    over ``[0, max_index]`` with key ``seed`` (int64 [3]) and ``rounds`` rounds.

    The public ``tf.random.experimental.index_shuffle`` uses 4 rounds and a 64-bit seed, whose
    orders fail a chi-square test of uniformity. (The kernel is not a permutation for every
    ``max_index``: `npyio._pipeline.shuffle.permute` says which and walks around them.)"""
    import tensorflow as tf

    return tf.raw_ops.RandomIndexShuffle(
        index=index, seed=seed, max_index=tf.constant(max_index, tf.int64), rounds=rounds
    )


def split_values(strings: tf.Tensor, sep: Any, maxsplit: int = -1) -> tf.Tensor:
    """The pieces of the 1-D ``strings`` split at ``sep`` (at most ``maxsplit`` times each,
    -1: every time), flat: the ``values`` of the ``StringSplitV2`` op.

    ``tf.strings.split`` makes a ragged tensor of them, which adds about 40 ops of ragged
    bookkeeping to a graph that tf.data reads at every iterator start (the header parser's:
    its node budget is in ``tests/graph/test_parser.py``)."""
    import tensorflow as tf

    return tf.raw_ops.StringSplitV2(input=strings, sep=sep, maxsplit=maxsplit).values


def lower_bound(sorted_values: tf.Tensor, values: tf.Tensor) -> tf.Tensor:
    """For each of ``values`` [N], the index (int64) of the first element of the ascending
    ``sorted_values`` [C] that is not less than it (C where none is): the ``LowerBound`` op.

    ``tf.searchsorted`` gives the same with reshapes around it, in a graph that tf.data reads
    at every iterator start (the ``.npz`` member's lookup)."""
    import tensorflow as tf

    return tf.raw_ops.LowerBound(
        sorted_inputs=tf.expand_dims(sorted_values, 0),
        values=tf.expand_dims(values, 0),
        out_type=tf.int64,
    )[0]


def print_to_stderr(text: tf.Tensor) -> tf.Operation:
    """Writes the scalar string ``text`` to stderr as it is, in one write: the ``PrintV2``
    op itself (no Python, serializable), whatever ``TF_CPP_MIN_LOG_LEVEL`` is.

    ``tf.print`` would quote and escape a string tensor."""
    import tensorflow as tf

    return tf.raw_ops.PrintV2(input=text, output_stream="stderr", end="")
