"""npyio._graph.parser: the header parser's graph (its size, its shared literals) and its table
of checks."""

from __future__ import annotations

from npyio._graph import parser
from tests._graph_util import graph_def


def test_parser_graph_stays_small():
    """A node budget: tf.data reads every node of every function a map refers to at each
    iterator start (``Dataset.reduce`` even rewrites them all), so the fallback parser's size
    is paid every epoch, used or not (bench/README.md, "Where the time goes"). Growth past the
    budget is a decision, made by raising it here."""
    gd = graph_def(parser.parser())
    nodes = len(gd.node) + sum(len(f.node_def) for f in gd.library.function)
    assert nodes <= 360, f"the parser has grown to {nodes} nodes"
    consts = [
        n.attr["value"].SerializeToString(deterministic=True) + n.attr["dtype"].SerializeToString()
        for n in gd.node
        if n.op == "Const"
    ]
    assert len(consts) == len(set(consts)), "a literal is repeated in the parser's graph"
