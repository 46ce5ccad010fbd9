"""npyio.Crop and its Window: what is refused when made, and the window arithmetic in Python
(the reference the graph's and the kernel's windows are held to)."""

from __future__ import annotations

import numpy as np
import pytest

import npyio
from npyio._format.window import Crop, Window, as_crop, outside, resolve
from npyio.errors import NpyFormatError


def test_a_tuple_is_a_random_window_of_the_leading_axes():
    assert as_crop((96, 96, 96)) == Crop((96, 96, 96))
    assert Crop((96, 96, 96)).random
    window = resolve(Crop((4, 5)), (10, 12, 3), "f.npy")
    assert window.axes == (0, 1) and window.size == (4, 5)
    assert window.sizes((10, 12, 3)) == (4, 5, 3)  # axes not named are whole
    assert npyio.Crop is Crop


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"shape": (4, -1)}, ValueError, "must not be negative"),
        ({"shape": (1.5,)}, ValueError, "fraction of the axis"),
        ({"shape": ("4",)}, TypeError, "ints or floats"),
        ({"shape": 4}, TypeError, "must be a tuple"),
        ({"start": "middle", "shape": (4,)}, ValueError, "'random', 'center'"),
        ({"start": "random"}, ValueError, "needs its shape"),
        ({"start": (1, 2)}, ValueError, "either shape or end"),
        ({"start": (1, 2), "shape": (3, 3), "end": (4, 5)}, ValueError, "either shape or end"),
        ({"start": (5, 2), "end": (4, 5)}, ValueError, "reversed on axis 0"),
        ({"start": (-1,), "shape": (4,)}, ValueError, "needs out_of_bounds='trim' or 'pad'"),
        ({"shape": (4, 4), "axes": (0,)}, ValueError, "as many axes"),
        ({"shape": (4,), "out_of_bounds": "clip"}, ValueError, "out_of_bounds must be one of"),
        ({"shape": (4,), "fill_value": "x"}, TypeError, "fill_value must be a number"),
        ({"shape": (4,), "axes": ("0",)}, TypeError, "axes must be a tuple of ints"),
        ({"shape": (1,) * 33}, ValueError, "at most 32 axes"),
    ],
)
def test_bad_crops_are_refused_when_made(kwargs, error, words):
    with pytest.raises(error, match=words):
        Crop(**kwargs)


def test_as_crop_refuses_other_types():
    with pytest.raises(TypeError, match="tuple of window sizes"):
        as_crop(96)


@pytest.mark.parametrize(
    ("crop", "shape", "words"),
    [
        (Crop((4, 4, 4)), (8, 8), r"names axes \[0, 1, 2\], but the array has 2 dims"),
        (Crop((4,), axes=(2,)), (8, 8), "names axes"),
        (Crop((4, 4), axes=(0, -2)), (8, 8), "names an axis twice"),
        (Crop((9,)), (8, 8), "of size 9 on axis 0 is outside the array of shape"),
        (Crop((4,), start=(6,)), (8, 8), r"\[6:10\] on axis 0 is outside"),
        (Crop((0.5,)), (None, 8), "fraction of an axis whose size varies"),
    ],
)
def test_windows_the_arrays_cannot_hold_are_refused_naming_the_file(crop, shape, words):
    with pytest.raises(NpyFormatError, match=words) as e:
        resolve(crop, shape, "dir/0.npy")
    assert e.value.path == "dir/0.npy"


def test_fractions_and_ends_become_sizes():
    window = resolve(Crop((0.5, 0.25), start="center"), (10, 12), "f")
    assert window.size == (5, 3) and window.start == "center"
    window = resolve(Crop(start=(0.1, 2), end=(0.6, 10)), (10, 12), "f")
    assert window.start == (1, 2) and window.size == (5, 8)
    window = resolve(Crop((4,), axes=(-1,)), (10, 12), "f")
    assert window.axes == (1,) and window.sizes((10, 12)) == (10, 4)


def test_trim_and_pad_accept_windows_past_the_edge():
    trim = resolve(Crop((6,), start=(-2,), out_of_bounds="trim"), (5,), "f")
    assert trim.sizes((5,)) == (4,)  # [-2:4] of 5 elements is [0:4]
    assert resolve(Crop((9,), out_of_bounds="trim"), (5,), "f").sizes((5,)) == (5,)
    assert resolve(Crop((9,), out_of_bounds="trim"), (None,), "f").sizes((None,)) == (None,)
    pad = resolve(Crop((9,), out_of_bounds="pad"), (5,), "f")
    assert pad.sizes((5,)) == (9,) and outside(pad, (5,)) is not None


def test_random_starts_cover_every_position_and_no_other():
    window = Window(1, (0,), (3,), "random")
    seen = {window.starts((7,), (u,))[0] for u in np.linspace(0, 1, 1000, endpoint=False)}
    assert seen == set(range(5))
    # larger than the array (padded): the array lies inside the window
    window = Window(1, (0,), (7,), "random", "pad")
    seen = {window.starts((5,), (u,))[0] for u in np.linspace(0, 1, 1000, endpoint=False)}
    assert seen == {-2, -1, 0}


def test_centre_and_fixed_starts():
    assert Window(2, (0, 1), (4, 3), "center").starts((10, 10)) == (3, 3)
    assert Window(3, (1,), (2,), (5,)).starts((9, 9, 9)) == (0, 5, 0)
