"""Walk the ops of a traced function or a ``tf.data`` pipeline, nested functions included.

Used to prove that a pipeline runs no Python per element: ``PYTHON_OPS & op_types(x)`` is empty.
"""

from __future__ import annotations

import tensorflow as tf

#: Ops that call back into Python (tf.py_function, tf.numpy_function, Dataset.from_generator).
PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc", "GeneratorDataset"})


def graph_def(obj: object, *, external_state_policy=None) -> tf.compat.v1.GraphDef:
    """The GraphDef of a dataset, a concrete function, a tf.function with an input_signature,
    a ``tf.Graph`` or a GraphDef.

    A dataset is serialized with ``tf.raw_ops.DatasetToGraphV2`` (``_as_serialized_graph``);
    ``external_state_policy`` (a ``tf.data.experimental.ExternalStatePolicy``) is passed on.
    """
    if isinstance(obj, tf.compat.v1.GraphDef):
        return obj
    if isinstance(obj, tf.data.Dataset):
        kwargs = (
            {}
            if external_state_policy is None
            else {"external_state_policy": external_state_policy}
        )
        serialized = obj._as_serialized_graph(**kwargs)
        return tf.compat.v1.GraphDef.FromString(serialized.numpy())
    if isinstance(obj, tf.Graph):
        return obj.as_graph_def()
    if hasattr(obj, "get_concrete_function"):  # a tf.function with an input_signature
        obj = obj.get_concrete_function()
    if hasattr(obj, "graph"):  # a ConcreteFunction
        return obj.graph.as_graph_def()
    raise TypeError(f"cannot get a graph from {obj!r}")


def op_types(obj: object) -> set[str]:
    """Every op type in ``obj``'s graph and in every function of its library (cond branches,
    loop bodies, ``Dataset.map`` functions, functions called from functions)."""
    gd = graph_def(obj)
    types = {node.op for node in gd.node}
    for function in gd.library.function:
        types.update(node.op for node in function.node_def)
    return types


def python_ops(obj: object) -> set[str]:
    """The ops in ``obj`` that call back into Python."""
    return op_types(obj) & PYTHON_OPS
