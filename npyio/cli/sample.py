"""Sample datasets of paired ``.npy`` files, for the demo and the benchmarks."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from npyio.cli.progress import Progress

_DONE = ".complete"


@dataclass(frozen=True)
class Profile:
    """The shape of one sample dataset: ``count`` pairs of inputs and labels, float32."""

    name: str
    input_shape: tuple[int, ...]
    label_shape: tuple[int, ...] = (10,)
    count: int = 10_000

    @property
    def pair_bytes(self) -> int:
        """Payload bytes of one input plus one label."""
        return 4 * (int(np.prod(self.input_shape)) + int(np.prod(self.label_shape)))

    def dirname(self) -> str:
        dims = "x".join(map(str, self.input_shape))
        return f"{self.name}-{dims}-n{self.count}"


DEMO = Profile("demo", (64, 64, 3))


def default_cache() -> str:
    """Where sample data goes: ``$NPYIO_CACHE``, else ``$XDG_CACHE_HOME/npyio``, else
    ``~/.cache/npyio``."""
    if os.environ.get("NPYIO_CACHE"):
        return os.environ["NPYIO_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "npyio")


def ensure(profile: Profile, root: str | None = None, *, quiet: bool = False) -> str:
    """Creates ``profile``'s dataset under ``root`` unless a complete one is there already.

    Files are ``inputs/NNNN.npy`` and ``labels/NNNN.npy``, written by ``np.save``. Input ``i``
    holds ``i`` in its first element and label ``i`` is one-hot at ``i % size``, so pairing
    can be checked. Returns the dataset's directory.
    """
    where = os.path.join(root or default_cache(), profile.dirname())
    if tf.io.gfile.exists(os.path.join(where, _DONE)):
        return where
    for side in ("inputs", "labels"):
        tf.io.gfile.makedirs(os.path.join(where, side))
    rng = np.random.default_rng(0)
    width = max(4, len(str(profile.count - 1)))
    x = rng.random(profile.input_shape, dtype=np.float32)
    label = f"writing {profile.count:,} pairs to {where}"
    with Progress(profile.count, label, enabled=not quiet) as bar:
        for i in range(profile.count):
            x.flat[0] = i
            y = np.zeros(profile.label_shape, np.float32)
            y.flat[i % y.size] = 1.0  # one-hot of i % size: pairs can be checked
            name = f"{i:0{width}d}.npy"
            for side, value in (("inputs", x), ("labels", y)):
                with tf.io.gfile.GFile(os.path.join(where, side, name), "wb") as f:
                    np.save(f, value)
            bar.update()
    with tf.io.gfile.GFile(os.path.join(where, _DONE), "w") as f:
        f.write("ok\n")
    return where
