"""TensorFlow's error text, read in one place.

A ``tf.errors.OpError`` carries its reason only as text, decorated by where it was raised, and
no public TensorFlow API gives the reason alone. npyio reads the forms below (each pattern says
why it is needed), so that its errors say ``"PATH: reason"`` from every entry point. The
patterns follow TensorFlow's wording: a TensorFlow that words them otherwise fails the tests
that pin each form (``tests/read/test_part.py``, ``tests/graph/test_zip.py``,
``tests/cli/test_verify.py``). Plain text, no TensorFlow: ``npyio verify`` reads it too.
"""

from __future__ import annotations

import codecs
import re

__all__ = [
    "ANNOTATION",
    "FUNCTION_NODE",
    "GRAPH_ASSERT",
    "OP_SUFFIX",
    "function_reason",
    "graph_assertion",
    "last_line",
    "undecorated",
]

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
