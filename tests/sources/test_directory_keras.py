"""Keras trains on npyio.dataset_from_directory: with TensorFlow, and with the JAX backend (in a
subprocess: Keras picks its backend once, at import)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import npyio
from tests._npy_testing import child_json
from tests.conftest import TFIO_ENV

keras = pytest.importorskip("keras")

REPO = Path(__file__).resolve().parents[2]
LOSSES = {
    "int": ("sparse_categorical_crossentropy", 2, "softmax"),
    "categorical": ("categorical_crossentropy", 2, "softmax"),
    "binary": ("binary_crossentropy", 1, "sigmoid"),
}


def make_classes(root: Path, per_class: int = 16) -> None:
    """Two classes of (4,) float32 vectors that a linear model separates: ``neg`` around -1,
    ``pos`` around +1, some in nested folders."""
    rng = np.random.default_rng(0)
    for c, name in enumerate(("neg", "pos")):
        for i in range(per_class):
            folder = root / name / ("more" if i % 4 == 0 else "")
            folder.mkdir(parents=True, exist_ok=True)
            x = rng.normal(2.0 * c - 1.0, 0.5, size=(4,)).astype(np.float32)
            np.save(folder / f"{name}{i:02d}.npy", x)


# Keras warns on every Dataset passed with its default shuffle=True: not npyio's doing.
@pytest.mark.filterwarnings("ignore:`shuffle=True` was passed:UserWarning")
@pytest.mark.parametrize("label_mode", list(LOSSES))
def test_fit_with_validation_subset(tmp_path, label_mode):
    make_classes(tmp_path)
    train, val = npyio.dataset_from_directory(
        str(tmp_path),
        label_mode=label_mode,
        batch_size=8,
        validation_split=0.25,
        subset="both",
        seed=4,
        verbose=False,
    )
    assert len(train.file_paths) == 24 and len(val.file_paths) == 8
    loss, units, activation = LOSSES[label_mode]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units, activation=activation)])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss=loss, metrics=["accuracy"])
    history = model.fit(train, validation_data=val, epochs=4, verbose=0).history
    assert len(history["val_loss"]) == 4
    assert history["loss"][-1] < history["loss"][0]
    assert history["val_accuracy"][-1] == 1.0, history  # the classes are far apart


JAX_SCRIPT = """
import json, sys
import keras, jax
import npyio

assert keras.backend.backend() == "jax", keras.backend.backend()
train, val = npyio.dataset_from_directory(
    sys.argv[1], label_mode="binary", batch_size=8, validation_split=0.25, subset="both",
    seed=4, verbose=False,
)
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=keras.optimizers.Adam(0.1), loss="binary_crossentropy",
              metrics=["accuracy"])
history = model.fit(train, validation_data=val, epochs=4, verbose=0).history
print(json.dumps({
    "backend": keras.backend.backend(),
    "weights_are_jax_arrays": all(isinstance(w.value, jax.Array) for w in model.weights),
    "loss": history["loss"],
    "val_accuracy": history["val_accuracy"],
}))
"""


def _require_jax() -> None:
    """jax is in the ``test`` extra (for Python >= 3.11, as jax itself), so where that extra is
    installed the JAX test must run, never skip; the TF 2.16 venv (``NPYIO_TFIO=1``) installs
    pinned packages without it."""
    if os.environ.get(TFIO_ENV) == "1" or sys.version_info < (3, 11):
        pytest.importorskip(
            "jax", reason="jax is not installed in the TF 2.16 venv (nor for Python < 3.11)"
        )
    else:
        assert importlib.util.find_spec("jax") is not None, (
            "jax is part of the test extra: pip install -e '.[test]'"
        )


@pytest.mark.slow
def test_fit_with_jax_backend(tmp_path):
    _require_jax()
    make_classes(tmp_path)
    env = {
        **os.environ,
        "KERAS_BACKEND": "jax",
        "JAX_PLATFORMS": "cpu",  # no accelerator probing: the data pipeline is what is tested
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "PYTHONWARNINGS": "ignore",  # warnings go to stderr; only the result line is read
    }
    result, _ = child_json(["-c", JAX_SCRIPT, str(tmp_path)], env)
    assert result["backend"] == "jax"
    assert result["weights_are_jax_arrays"]
    assert result["loss"][-1] < result["loss"][0]
    assert result["val_accuracy"][-1] == 1.0, result
