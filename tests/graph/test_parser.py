"""npyio._graph.parser: the header parser's graph (its size, its shared literals) and its table
of checks."""

from __future__ import annotations

import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from npyio._graph import parser
from npyio._graph.ops import reason_words
from tests._graph_util import graph_def
from tests._npy_testing import header_text, reference, tf_message, with_header


def test_parser_graph_stays_small():
    """A node budget: tf.data reads every node of every function a map refers to at each
    iterator start (``Dataset.reduce`` even rewrites them all), so the fallback parser's size
    is paid every epoch, used or not (bench/README.md, "Where the time goes"). Growth past the
    budget is a decision, made by raising it here."""
    gd = graph_def(parser.parser())
    nodes = len(gd.node) + sum(len(f.node_def) for f in gd.library.function)
    # 375: +13 for naming where a dataset's spec came from after a mismatch (issue 50)
    assert nodes <= 375, f"the parser has grown to {nodes} nodes"
    consts = [
        n.attr["value"].SerializeToString(deterministic=True) + n.attr["dtype"].SerializeToString()
        for n in gd.node
        if n.op == "Const"
    ]
    assert len(consts) == len(set(consts)), "a literal is repeated in the parser's graph"


def test_parser_is_one_shared_function():
    assert parser.parser() is parser.parser()


def test_parser_takes_named_groups():
    """``parse_headers(files, spec)``: two named groups, the spec's built from a `Spec` alone
    (`spec_tensors`), not ten positional tensors kept in step by hand."""
    import numpy as np

    from npyio._format.header import Limits
    from npyio._format.spec import Spec
    from tests._npy_testing import npy_bytes

    assert [spec.__class__ for spec in parser.PARSE_SIGNATURE] == [
        parser.Files,
        parser.SpecTensors,
    ]
    files = parser.Files(tf.constant([npy_bytes(np.eye(2, dtype=">f4"))]), tf.constant(["a"]))
    declared = parser.spec_tensors(Spec.whole(np.dtype("float32"), (2, None)))
    raw, dims, ok, message = parser.parser()(files, declared)
    assert bool(ok) and message.numpy() == b"" and dims.numpy().tolist() == [2, 2]
    assert raw.numpy().tobytes() == np.eye(2, dtype="float32").tobytes()  # native order
    assert declared.text.numpy() == b"(2, None)" and declared.rank.numpy() == 2
    wrong = parser.spec_tensors(Spec.whole(np.dtype("int8"), None, limits=Limits(10**6, 10)))
    _, _, ok, message = parser.parser()(files, wrong)
    assert not bool(ok) and message.numpy().startswith(b"a: ")


# --- the table of checks -------------------------------------------------------------------------
def test_check_args_and_grammar_args_name_fields_of_words():
    named = {arg for check in parser.CHECKS for arg in check.args}
    named |= {arg for _, _, args in parser.GRAMMAR for arg in args}
    assert named <= set(parser.Words._fields)
    with pytest.raises(ValueError, match=r"\['nope'\] are not fields of Words"):
        parser.Check("broken", lambda v, k: v.everyone, npy.bad_magic, ("nope",))


def test_every_words_field_is_named_by_some_wording():
    named = {arg for check in parser.CHECKS for arg in check.args}
    named |= {arg for _, _, args in parser.GRAMMAR for arg in args}
    assert set(parser.Words._fields) == named


def test_check_names_are_unique_and_one_is_the_grammar():
    names = [check.name for check in parser.CHECKS]
    assert len(names) == len(set(names))
    assert [c.name for c in parser.CHECKS if c.reason is None] == ["grammar"]


SHAPE23 = header_text("<f4", False, (2, 3))
PAYLOAD23 = bytes(24)


def _prefix(version: tuple[int, int] = (1, 0)) -> bytes:
    return npy.MAGIC_PREFIX + bytes(version)


#: For each check, in table order: a file (or a batch) that fails it and no check before it,
#: the declared dtype and shape, extra arguments, and the message's reason.
FAILURES = {
    "file_size": (
        with_header(SHAPE23, PAYLOAD23),
        ("float32", (2, 3), {"max_file_size": 10}),
        npy.file_too_large("10", str(len(with_header(SHAPE23, PAYLOAD23)))),
    ),
    "magic": (b"\x93NUMPX\x01\x00", ("float32", None, {}), npy.bad_magic("93 4e 55 4d 50 58")),
    "magic_length": (_prefix()[:7], ("float32", None, {}), npy.too_short("8", "7")),
    "version": (_prefix((4, 0)) + bytes(4), ("float32", None, {}), npy.bad_version("4.0")),
    "length_field": (_prefix() + b"\x10", ("float32", None, {}), npy.too_short("10", "9")),
    "header_size": (
        with_header(SHAPE23, PAYLOAD23, hlen=5000),
        ("float32", None, {"max_header_size": 4096}),
        npy.header_too_large("4096", "5000"),
    ),
    "header_end": (
        with_header(SHAPE23, hlen=len(SHAPE23) + 1),
        ("float32", None, {}),
        npy.header_past_end(str(10 + len(SHAPE23) + 1), str(10 + len(SHAPE23))),
    ),
    "grammar": (with_header("[1, 2]\n", PAYLOAD23), ("float32", None, {}), npy.not_a_dict()),
    "v3_trail": (
        with_header(SHAPE23 + "\n \n  ", PAYLOAD23, (3, 0)),
        ("float32", None, {}),
        npy.not_a_dict(),
    ),
    "v3_long": (
        with_header(SHAPE23.replace("(2, 3)", "(2L, 3L)"), PAYLOAD23, (3, 0)),
        ("float32", None, {}),
        npy.bad_shape("(2L, 3L)"),
    ),
    "same_shape": (
        [with_header(SHAPE23, PAYLOAD23), with_header(header_text("<f4", False, (6,)), PAYLOAD23)],
        ("float32", None, {}),
        npy.shape_mismatch("(2, 3)", "(6,)"),
    ),
    "nonnegative": (
        with_header(header_text("<f4", False, (-2, 3))),
        ("float32", None, {}),
        npy.negative_dim("(-2, 3)"),
    ),
    "small": (
        with_header(header_text("<f4", False, (2**31, 2**31))),
        ("float32", None, {}),
        npy.too_large(f"({2**31}, {2**31})"),
    ),
    "dtype": (
        with_header(SHAPE23, PAYLOAD23),
        ("int32", None, {}),
        npy.dtype_mismatch("int32", "float32"),
    ),
    "shape": (
        with_header(SHAPE23, PAYLOAD23),
        ("float32", (3, 2), {}),
        npy.shape_mismatch("(3, 2)", "(2, 3)") + npy.vary_hint("(None, None)"),
    ),
    "payload_short": (
        with_header(SHAPE23, PAYLOAD23[:-1]),
        ("float32", None, {}),
        npy.payload_short("24", "23"),
    ),
    "payload_trailing": (
        with_header(SHAPE23, PAYLOAD23 + b"\0"),
        ("float32", None, {}),
        npy.payload_trailing("24", "25"),
    ),
}


def test_every_check_has_a_failing_case():
    assert list(FAILURES) == [check.name for check in parser.CHECKS]


@pytest.mark.parametrize("name", list(FAILURES))
def test_each_check_fails_with_its_own_words(name):
    data, (dtype, shape, limits), reason = FAILURES[name]
    batch = isinstance(data, list)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npy(data, dtype, shape, **limits)
    where = "<bytes>[1]" if batch else "<bytes>"
    assert tf_message(e.value) == f"{where}: {reason}"
    check = next(c for c in parser.CHECKS if c.name == name)
    if check.reason is not None:  # the reason is the check's own
        words = reason_words(check.reason, len(check.args))
        assert reason.startswith(words[0]) and reason.endswith(words[len(check.args)])
    if not batch and name != "file_size":  # the reference parser (no file-size limit) agrees
        max_header_size = limits.get("max_header_size", npy.MAX_HEADER_SIZE)
        with pytest.raises(npyio.NpyFormatError) as ref:
            reference(data, dtype, shape, max_header_size=max_header_size)
        assert ref.value.reason == reason


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{'descr': '<f4', 'shape': (2, 3), }", npy.bad_keys()),
        ("{'descr': 'xyz', 'fortran_order': False, 'shape': (2, 3), }", npy.bad_descr("'xyz'")),
        (
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }",
            npy.bad_fortran("0"),
        ),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", npy.bad_shape("[2]")),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", npy.bad_keys()),
    ],
    ids=["missing-key", "descr", "fortran", "shape", "extra-key"],
)
def test_grammar_check_is_worded_by_its_first_failing_layer(text, reason):
    data = with_header(text + "\n", PAYLOAD23)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npy(data, "float32")
    assert tf_message(e.value) == f"<bytes>: {reason}"
    with pytest.raises(npyio.NpyFormatError) as ref:
        reference(data, "float32")
    assert ref.value.reason == reason


def test_the_first_bad_file_and_its_first_failing_check_are_named():
    """Files before checks: a later file failing an earlier check is not the one named."""
    good = with_header(SHAPE23, PAYLOAD23)
    short = with_header(SHAPE23, PAYLOAD23[:-1])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npy([good, short, b"junk-and-more"], "float32")
    assert tf_message(e.value) == f"<bytes>[1]: {npy.payload_short('24', '23')}"
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        npyio.decode_npy([good, short, short], "float32", (3, 2))  # [0] fails the shape
    hint = npy.vary_hint("(None, None)")
    assert tf_message(e.value) == f"<bytes>[0]: {npy.shape_mismatch('(3, 2)', '(2, 3)')}{hint}"
