"""A long-lived Python process inside the sandbox that runs code sent to it, so that a test
module imports TensorFlow (seconds) once instead of once per test.

Run by `tests.gcs.sandbox.GcsSandbox.worker` as ``python -m tests.gcs.worker SOCKET``: it
listens on the UNIX socket ``SOCKET`` (authenticated with the sandbox's key), accepts one
connection and answers messages ``(mode, source)``: ``"exec"`` runs statements and answers the
variable ``result`` (None if unset), ``"eval"`` answers an expression's value. All code shares one
namespace, which starts with ``tf`` (TensorFlow, imported at start), ``np``, ``time`` and
``gcs`` (the sandbox's `tests.gcs.control.Control`). An exception is answered as
``("error", type name, message, traceback)``, and so is a result that cannot be pickled; the
worker keeps serving.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from multiprocessing.connection import Listener
from typing import Any

from tests.gcs.control import AUTHKEY_ENV, connect


def _namespace() -> dict[str, Any]:
    import numpy as np
    import tensorflow as tf

    return {"tf": tf, "np": np, "time": time, "gcs": connect(), "__name__": "__worker__"}


def _answer(mode: str, source: str, namespace: dict[str, Any]) -> tuple[Any, ...]:
    try:
        if mode == "eval":
            return ("ok", eval(source, namespace))
        namespace.pop("result", None)
        exec(source, namespace)
        return ("ok", namespace.get("result"))
    except BaseException as exc:
        return ("error", type(exc).__name__, str(exc), traceback.format_exc())


def main(address: str) -> int:
    """Serve one connection on ``address`` until it closes or sends ``("quit", "")``."""
    namespace = _namespace()
    authkey = bytes.fromhex(os.environ[AUTHKEY_ENV])
    with Listener(address, family="AF_UNIX", authkey=authkey) as listener:
        print("worker ready", flush=True)
        with listener.accept() as conn:
            while True:
                try:
                    mode, source = conn.recv()
                except (EOFError, OSError):
                    return 0
                if mode == "quit":
                    return 0
                reply = _answer(mode, source, namespace)
                try:
                    conn.send(reply)
                except Exception as exc:  # a result that does not pickle
                    conn.send(("error", type(exc).__name__, str(exc), traceback.format_exc()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
