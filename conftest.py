"""Shared pytest set-up: quiet TensorFlow, deterministic Hypothesis."""

import os

# Level 1 hides TensorFlow's INFO lines but keeps its warnings, which ignore_errors=True uses.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
