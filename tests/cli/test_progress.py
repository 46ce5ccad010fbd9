"""``npyio.cli.progress``: a bar on a terminal, a line every 10% elsewhere, nothing when off."""

from __future__ import annotations

import io

import pytest

from npyio.cli.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_every_tenth():
    out = io.StringIO()
    with Progress(20, "checking", out) as bar:
        for _ in range(20):
            bar.update()
    assert out.getvalue().splitlines() == [f"checking: {n}/20" for n in range(2, 21, 2)]


def test_plain_lines_with_large_steps_and_a_small_total():
    out = io.StringIO()
    with Progress(3, "x", out) as bar:
        bar.update(2)  # past several tenths at once: one line
        bar.update()
    assert out.getvalue().splitlines() == ["x: 2/3", "x: 3/3"]


def test_zero_total_counts_as_one():
    out = io.StringIO()
    bar = Progress(0, "x", out)
    assert bar.total == 1
    bar.update()
    assert out.getvalue() == "x: 1/1\n"


def test_disabled_counts_but_writes_nothing():
    for stream in (io.StringIO(), Terminal()):
        with Progress(5, "x", stream, enabled=False) as bar:
            bar.update(5)
        assert bar.done == 5
        assert stream.getvalue() == ""


def test_terminal_bar_is_redrawn_in_place_and_ends_the_line(monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr("npyio.cli.progress.time.perf_counter", lambda: next(clock))
    out = Terminal()
    with Progress(4, "decoding", out) as bar:
        bar.update(2)
        bar.update(2)
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    draws = text.rstrip("\n").split("\r")[1:]
    assert draws[0].startswith("decoding [" + "#" * 15 + "-" * 15 + "] 2/4 (")
    assert draws[-1].startswith("decoding [" + "#" * 30 + "] 4/4 (")
    assert draws[-1].endswith("/s)")


def test_terminal_bar_does_not_redraw_faster_than_ten_times_a_second(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("npyio.cli.progress.time.perf_counter", lambda: now[0])
    out = Terminal()
    bar = Progress(100, "x", out)
    now[0] = 1.0
    for _ in range(10):  # all within the same instant: drawn once
        bar.update()
    assert out.getvalue().count("\r") == 1
    now[0] = 1.05
    bar.update()
    assert out.getvalue().count("\r") == 1
    now[0] = 1.2
    bar.update()
    assert out.getvalue().count("\r") == 2


def test_stderr_by_default(capsys):
    with Progress(1, "x") as bar:
        bar.update()
    assert capsys.readouterr().err == "x: 1/1\n"


@pytest.mark.parametrize(
    ("stream", "text"),
    [(io.StringIO(), ""), (Terminal(), "\rx [" + "-" * 30 + "] 0/3 (0/s)\n")],
    ids=["plain", "terminal"],
)
def test_close_after_nothing_done(stream, text):
    Progress(3, "x", stream).close()
    assert stream.getvalue() == text
