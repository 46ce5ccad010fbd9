"""The graph's crop (npyio._graph.window): the same starts as the Python reference, and each
window equal to numpy's slice, trimmed or padded."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from npyio._format.window import Window
from npyio._graph.window import cut, cut_batch, draws, foreground_centres, starts


def reference(array: np.ndarray, window: Window, draw=None) -> np.ndarray:
    """numpy's window: the array padded with the fill all around, then sliced."""
    start = window.starts(array.shape, draw)
    size = list(array.shape)
    for axis, s in zip(window.axes, window.size):
        size[axis] = s
    if window.policy == "trim":
        lo = [max(s, 0) for s in start]
        hi = [max(min(s + n, d), lo_) for s, n, d, lo_ in zip(start, size, array.shape, lo)]
        return array[tuple(slice(a, b) for a, b in zip(lo, hi))]
    margin = max([abs(s) for s in start] + [n for n in size] + [0])
    padded = np.pad(array, margin, constant_values=window.fill)
    return padded[tuple(slice(s + margin, s + margin + n) for s, n in zip(start, size))]


@pytest.mark.parametrize("policy", ["trim", "pad"])
@pytest.mark.parametrize("start", ["random", "center", (-3, 2), (1, 9)])
def test_cut_is_numpys_window(policy, start):
    rng = np.random.default_rng(0)
    array = rng.standard_normal((7, 12, 2)).astype(np.float32)
    for size in [(3, 4), (9, 5), (7, 14), (0, 2)]:
        window = Window(3, (0, 1), size, start, policy, -1.0)
        for _ in range(5):
            draw = tuple(rng.random(2)) if start == "random" else None
            d = None if draw is None else tf.constant(draw, tf.float64)
            got = cut(tf.constant(array), window, d, tf.constant("f.npy")).numpy()
            np.testing.assert_array_equal(got, reference(array, window, draw))


def test_error_policy_names_the_file_when_shapes_vary():
    window = Window(1, (0,), (5,), (2,))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return cut(x, window, None, tf.constant("dir/7.npy"))

    assert f(tf.zeros([7])).shape == (5,)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"dir/7.npy: crop window \[2:7\] is outside the array of shape \(6\)",
    ):
        f(tf.zeros([6]))


@pytest.mark.parametrize("centred", [False, True], ids=["uniform", "centred"])
def test_graph_starts_equal_the_python_reference(centred):
    rng = np.random.default_rng(1)
    for _ in range(50):
        dims = tuple(int(d) for d in rng.integers(1, 40, 3))
        size = tuple(int(s) for s in rng.integers(0, 45, 2))
        window = Window(3, (2, 0), size, "random", "pad")
        draw = rng.random((6, 2))
        if centred:  # a voxel on each cropped axis (anywhere in the array), or -1: uniform
            voxels = [[int(rng.integers(0, dims[a])) for a in window.axes] for _ in range(6)]
            voxels[0] = [-1, -1]
            draw = np.concatenate([draw, np.asarray(voxels, np.float64)], axis=1)
        got = starts(window, tf.constant(dims, tf.int64), tf.constant(draw)).numpy()
        want = [window.starts(dims, tuple(row)) for row in draw]
        np.testing.assert_array_equal(got, want)
        if centred:  # the voxel lies in its window, wherever it was moved to fit
            for row, start in zip(draw[1:], got[1:]):
                for i, (axis, s) in enumerate(zip(window.axes, window.size)):
                    assert start[axis] <= row[2 + i] < start[axis] + max(s, 1) or s == 0


def test_foreground_centres_pick_a_class_then_a_voxel_and_the_last_of_each_batch():
    # case 0: classes 1 (one voxel) and 2 (three); case 1: none; case 2: class 5 (one voxel)
    index = (
        np.array([0, 2, 2], np.int64),  # first range of each case
        np.array([2, 0, 1], np.int64),  # classes present
        np.array([0, 1, 4], np.int64),  # each range's first location
        np.array([1, 3, 1], np.int64),  # its locations
        np.array([[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4], [7, 8, 9]], np.int32),
    )
    units = np.arange(3 * 400)
    keys = tf.constant(np.stack([np.full_like(units, 11), units, units], axis=1), tf.int64)
    got = foreground_centres(keys, index, 3, (2, 0), 0.5, 4).numpy()
    case, at = units % 3, units % 4
    assert (got[at < 2] == -1).all()  # the first half of each batch: uniform
    assert (got[(at >= 2) & (case == 1)] == -1).all()  # a case without classes: uniform
    np.testing.assert_array_equal(got[(at >= 2) & (case == 2)], [[9, 7]] * 200)  # axes (2, 0)
    zero = got[(at >= 2) & (case == 0)]
    ones = (zero == [1, 1]).all(axis=1).mean()  # class 1's one voxel: half the class draws
    assert 0.4 < ones < 0.6, ones
    assert {tuple(v) for v in zero} == {(1, 1), (2, 2), (3, 3), (4, 4)}


def test_draws_are_the_keys_and_the_group_alone():
    window = Window(2, (0, 1), (2, 2), "random")
    keys = tf.constant([[5, 0], [5, 1], [5, 0]], tf.int64)
    u = draws(keys, window).numpy()
    assert u.shape == (3, 2) and ((u >= 0) & (u < 1)).all()
    np.testing.assert_array_equal(u[0], u[2])
    assert not np.array_equal(u[0], u[1])
    np.testing.assert_array_equal(draws(keys[1], window).numpy(), u[1])
    other = Window(2, (0, 1), (2, 2), "random", group=1)
    assert not np.array_equal(draws(keys, other).numpy(), u)


def test_cut_batch_cuts_each_with_its_draw_and_name():
    arrays = tf.reshape(tf.range(2 * 6 * 5, dtype=tf.int32), [2, 6, 5])
    window = Window(2, (0, 1), (2, 3), "random")
    draw = tf.constant([[0.0, 0.0], [0.999, 0.999]], tf.float64)
    out = cut_batch(arrays, window, draw, tf.constant(["a", "b"])).numpy()
    np.testing.assert_array_equal(out[0], arrays.numpy()[0, 0:2, 0:3])
    np.testing.assert_array_equal(out[1], arrays.numpy()[1, 4:6, 2:5])


def test_uniforms_are_each_keys_own_whatever_the_batch():
    """A unit's numbers depend on its key and the salt alone (a gather of 50 units, one unit,
    or a batch draw the same), lie in [0, 1), differ by salt, and are drawn by whole-tensor ops
    (no loop step per element, which cost 13-17 us of CPU a window)."""
    from npyio._graph.window import uniforms

    keys = tf.stack(
        [tf.fill([50], tf.constant(-(2**40) + 7, tf.int64)), tf.range(50, dtype=tf.int64)], 1
    )
    many = uniforms(keys, 3, 4).numpy()
    assert many.shape == (50, 4) and many.min() >= 0 and many.max() < 1
    for i in (0, 17, 49):
        np.testing.assert_array_equal(uniforms(keys[i], 3, 4).numpy(), many[i])
        np.testing.assert_array_equal(uniforms(keys[i : i + 1], 3, 4).numpy()[0], many[i])
    assert not np.array_equal(uniforms(keys, 4, 4).numpy(), many)
    assert len(np.unique(many)) == many.size
    graph = (
        tf.function(lambda k: uniforms(k, 3, 4))
        .get_concrete_function(tf.TensorSpec([None, 2], tf.int64))
        .graph
    )
    assert not {op.type for op in graph.get_operations()} & {"While", "StatelessWhile"}


def _splitmix_uniforms(key: tuple[int, int], salt: int, k: int) -> list[float]:
    """`uniforms` of one key in Python's integers: the numbers every TF version must draw."""
    golden, salted, m = 0x9E3779B97F4A7C15, 0x632BE59BD9B4E019, 2**64

    def mix(z: int) -> int:
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % m
        return z ^ (z >> 31)

    a, b = (w % m for w in key)
    h = mix(mix(mix(a * golden % m) ^ b) ^ ((salt * golden + salted) % m))
    return [(mix((h + (j + 1) * golden) % m) >> 11) * 2.0**-53 for j in range(k)]


def test_uniforms_are_the_same_numbers_eager_in_a_graph_and_on_every_tf():
    """The draws are SplitMix64's, in eager and in a graph alike: TF 2.21 converted a list of
    uint64 constants in a graph through float64, so windows drawn from one seed differed
    between TF 2.16 and 2.21 (and a checkpoint restored across them went on with others)."""
    from npyio._graph.window import uniforms

    keys = [(-(2**40) + 7, 0), (2**62 + 3, 17), (-1, 2**63 - 1)]
    want = np.array([_splitmix_uniforms(key, 5, 6) for key in keys])
    tensor = tf.constant(keys, tf.int64)
    np.testing.assert_array_equal(uniforms(tensor, 5, 6).numpy(), want)
    np.testing.assert_array_equal(tf.function(lambda t: uniforms(t, 5, 6))(tensor).numpy(), want)
