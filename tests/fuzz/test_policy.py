"""The fuzzers' policy predicate (``tests/fuzz/oracle.py``) against the documented policy.

Each clause that lets npyio refuse a file ``np.load`` reads must be documented: its phrase must
be in the docstring it names (the policy list at the top of ``npyio/_format/npy.py``). Clauses the
fuzzers found undocumented are strict expected failures here until the docs name them.
"""

from __future__ import annotations

import numpy as np
import pytest

from npyio._format import npy
from tests._npy_testing import npy_bytes, with_header
from tests.fuzz import oracle, regressions


def _clause_param(clause: oracle.Clause) -> object:
    marks = []
    if clause.pending:
        marks.append(
            pytest.mark.xfail(
                strict=True,
                reason=f"undocumented refusal: npyio/_format/npy.py's policy list should name "
                f"{clause.phrase!r}",
            )
        )
    return pytest.param(clause, id=clause.name, marks=marks)


@pytest.mark.parametrize("clause", [_clause_param(c) for c in oracle.CLAUSES])
def test_clause_is_documented(clause):
    assert clause.documented(), f"{clause.phrase!r} is not in {clause.source.__name__}'s docs"


def test_clause_names_are_unique():
    names = [c.name for c in oracle.CLAUSES]
    assert len(set(names)) == len(names)


def _policy(data: bytes, dtype: str = "float32", reason: str | None = None) -> list[str]:
    view = oracle.numpy_view(data)
    assert view.array is not None, view.error
    return [
        c.name for c in oracle.policy(oracle.Case(data, dtype), view, reason or npy.not_a_dict())
    ]


GOOD = npy_bytes(np.arange(6, dtype="<f4").reshape(2, 3))
PAYLOAD = bytes(24)


def _text(descr: str = "'<f4'", fortran: str = "False", shape: str = "(2, 3)") -> str:
    return f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}"


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        (_text() + "  # a comment\n", "comments"),
        (_text().replace(", 'shape'", ", \\\n'shape'"), "line-continuations"),
        ("\n" + _text(), "around-the-dict"),
        (_text() + "\n  ", None),  # numpy's Python 2 filter reads it in 1.0: so does npyio
        ("\f " + _text(), "around-the-dict"),  # the filter reads it too; no writer makes it
        (_text() + "\r\f", "around-the-dict"),
        (_text(shape="(+2, 3)"), "unary-plus"),
        (_text(shape="(0_0, 3)"), "underscores"),
        (_text(shape="(00, 3)"), "leading-zeros"),
        (_text(), None),
        (_text().replace("'descr'", "u'descr'"), "string-forms"),
        (_text(descr="'<' 'f4'"), "string-forms"),
        (_text(shape="((2), 3)"), "redundant-parentheses"),
        (_text(fortran="(False)"), "redundant-parentheses"),
        (_text(shape="(2L, 3L)"), None),  # read since issue 12.6, as numpy reads it
        (_text(shape="(0x2L, 3)"), "non-decimal-ints"),
        (_text(shape="(00L, 3)"), "leading-zeros"),
        (_text(shape="(0x2, 3)"), "non-decimal-ints"),
        (_text(descr="'float32'"), "descr-aliases"),
        (_text(descr="('<f4', ())"), "descr-aliases"),
        ("{'descr': '<i8', " + _text()[1:], "duplicate-keys"),
        (_text(shape="(- 0, 3)"), "minus-spacing"),
    ],
    ids=[
        "comment",
        "continuation",
        "lead-newline",
        "indented-last-line",
        "formfeed-indent-lead",
        "cr-formfeed-trail",
        "plus",
        "underscore",
        "leading-zeros",
        "plain",
        "u-prefix",
        "concatenation",
        "paren-dim",
        "paren-value",
        "python2",
        "python2-hex",
        "python2-leading-zeros",
        "hex",
        "alias",
        "alias-tuple",
        "duplicate",
        "minus-space",
    ],
)
def test_policy_names_the_clause(text, clause):
    got = _policy(with_header(text, PAYLOAD))  # numpy ignores what an empty array leaves over
    if clause is None:
        assert got == []
    else:
        assert clause in got


@pytest.mark.parametrize(
    ("version", "clauses"),
    [((1, 0), []), ((2, 0), []), ((3, 0), ["around-the-dict"])],
    ids=["v1", "v2", "v3"],
)
def test_around_the_dict_follows_the_version(version, clauses):
    """A form-feed last line: numpy reads it in every version, npyio in 1.0 and 2.0 only
    (``npy.TRAIL``; ``npy.TRAIL_V3`` keeps what every Python version takes)."""
    data = with_header(_text() + "\n\f", PAYLOAD, version)
    view = oracle.numpy_view(data)
    assert view.array is not None, view.error
    got = oracle.policy(oracle.Case(data, "float32"), view, npy.not_a_dict())
    assert [c.name for c in got] == clauses


def test_undocumented_refusal_is_caught():
    """A refusal with no clause behind it is what the fuzzers fail on."""
    assert _policy(GOOD, reason=npy.bad_shape("(2, 3)")) == []
    assert _policy(GOOD, reason=npy.payload_trailing("24", "25")) == []
    assert _policy(GOOD + b"\0", reason=npy.payload_trailing("24", "25")) == ["trailing-bytes"]
    assert _policy(GOOD, "int32", npy.dtype_mismatch("int32", "float32")) == ["declared-dtype"]


def test_unknown_reasons_are_refused():
    with pytest.raises(AssertionError, match="unknown reason"):
        oracle.reason_kind("something went wrong")
    assert oracle.reason_kind(npy.payload_short("8", "4")) == "payload_short"


def test_known_bugs_have_expected_failures():
    """Each bug the fuzzers skip over is an expected failure in tests/fuzz/regressions/."""
    xfails = {c.id for c in regressions.load_all() if c.xfail}
    for name in oracle.KNOWN_BUGS:
        assert any(i == f"bug-{name}" or i.startswith(f"bug-{name}-") for i in xfails), name


def test_pending_clauses_have_regression_cases():
    """Each undocumented refusal has a regression case that shows it."""
    ids = {c.id for c in regressions.load_all()}
    for clause in oracle.CLAUSES:
        if clause.pending:
            assert any(
                i.startswith("undocumented-") and clause.name.split("-")[0] in i for i in ids
            ), clause.name
