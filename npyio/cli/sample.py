"""Sample datasets of paired ``.npy`` files, for the demo and the benchmarks.

A `Profile` says what a dataset holds; `ensure` writes it once under a cache folder and `paths`
lists its files. TensorFlow (for ``tf.io.gfile``) is imported only when a dataset is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from npyio._io.cache import cache_root
from npyio.cli.progress import Progress

__all__ = ["DEMO", "PROFILES", "USER_SAMPLE", "Profile", "default_cache", "ensure", "paths"]

_DONE = ".complete"
_SIDES = ("inputs", "labels")


@dataclass(frozen=True)
class Profile:
    """The shape of one sample dataset: ``count`` pairs of inputs and labels, float32.

    Example:
        >>> p = Profile("small", (16, 16), count=8000)
        >>> p.dirname(), p.pair_bytes
        ('small-16x16-n8000', 1064)
    """

    name: str
    input_shape: tuple[int, ...]
    label_shape: tuple[int, ...] = (10,)
    count: int = 10_000

    @property
    def pair_bytes(self) -> int:
        """Payload bytes of one input plus one label."""
        return 4 * (int(np.prod(self.input_shape)) + int(np.prod(self.label_shape)))

    def dirname(self) -> str:
        """The dataset's folder under the cache: name, input shape and count."""
        dims = "x".join(map(str, self.input_shape))
        return f"{self.name}-{dims}-n{self.count}"

    def file_names(self) -> list[str]:
        """``0000.npy``, ``0001.npy``, ...: the names of the pairs, zero-padded to at least 4
        digits so that they sort in pair order.

        Example:
            >>> Profile("p", (1,), count=3).file_names()
            ['0000.npy', '0001.npy', '0002.npy']
        """
        width = max(4, len(str(self.count - 1)))
        return [f"{i:0{width}d}.npy" for i in range(self.count)]


DEMO = Profile("demo", (64, 64, 3))
#: The profiles ``npyio bench`` measures, by name.
PROFILES = {
    "small": Profile("small", (16, 16), count=8000),
    "medium": Profile("medium", (64, 64, 3), count=4000),
    "large": Profile("large", (256, 256, 16), count=400),
}

#: Samples ``npyio bench INPUTS [LABELS]`` takes of a user's files by default: enough for
#: steady rates, few enough for seconds on any dataset.
USER_SAMPLE = 512


def default_cache() -> str:
    """Where sample data goes: the cache directory (`npyio._io.cache.cache_root`)."""
    return str(cache_root())


def paths(profile: Profile, where: str) -> tuple[list[str], list[str]]:
    """The input and the label files of ``profile``'s dataset in ``where`` (as `ensure`
    returns it), in pair order.

    Example:
        >>> paths(Profile("p", (1,), count=1), "/data")
        (['/data/inputs/0000.npy'], ['/data/labels/0000.npy'])
    """
    names = profile.file_names()
    inputs, labels = (os.path.join(where, side) for side in _SIDES)
    return [os.path.join(inputs, n) for n in names], [os.path.join(labels, n) for n in names]


def ensure(profile: Profile, root: str | None = None, *, quiet: bool = False) -> str:
    """Creates ``profile``'s dataset under ``root`` unless a complete one is there already.

    Files are ``inputs/NNNN.npy`` and ``labels/NNNN.npy``, written by ``np.save``. Input ``i``
    holds ``i`` in its first element and label ``i`` is one-hot at ``i % size``, so pairing
    can be checked.

    Args:
        profile: what to write.
        root: the cache folder (default: `default_cache`); any TensorFlow filesystem path.
        quiet: no progress display.

    Returns:
        The dataset's directory, ``root/profile.dirname()``.
    """
    import tensorflow as tf

    where = os.path.join(root or default_cache(), profile.dirname())
    if tf.io.gfile.exists(os.path.join(where, _DONE)):
        return where
    for side in _SIDES:
        tf.io.gfile.makedirs(os.path.join(where, side))
    x = np.random.default_rng(0).random(profile.input_shape, dtype=np.float32)
    label = f"writing {profile.count:,} pairs to {where}"
    with Progress(profile.count, label, enabled=not quiet) as bar:
        for i, files in enumerate(zip(*paths(profile, where))):
            x.flat[0] = i
            y = np.zeros(profile.label_shape, np.float32)
            y.flat[i % y.size] = 1.0  # one-hot of i % size: pairs can be checked
            for path, value in zip(files, (x, y)):
                with tf.io.gfile.GFile(path, "wb") as f:
                    np.save(f, value)
            bar.update()
    with tf.io.gfile.GFile(os.path.join(where, _DONE), "w") as f:
        f.write("ok\n")
    return where
