"""Runs a bench script's variants each in a fresh process, interleaved over rounds: a variant's
figures then share the machine's state (load, page cache) with the others', but not their
process (TensorFlow's thread pools, autotune, the allocator). Used by ``bench/epochs.py`` and
``bench/backends.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


def interleaved(
    script: str, variants: Sequence[Sequence[str]], rounds: int, args: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """``python script --child *variant *args`` for every variant, once per round, the order
    rotated by one each round; each child prints one JSON object as its last line of stdout.

    Returns: the children's objects, in the order they ran.

    Raises:
        SystemExit: a child failed (with the variant and the end of its stderr).
    """
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    runs = []
    for r in range(rounds):
        shift = r % len(variants)
        for variant in [*variants[shift:], *variants[:shift]]:
            command = [sys.executable, script, "--child", *variant, *args]
            out = subprocess.run(command, env=env, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"{' '.join(variant)} failed:\n{out.stderr[-3000:]}")
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {' '.join(variant)}: done", file=sys.stderr, flush=True)
    return runs
