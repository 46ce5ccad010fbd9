"""npyio's cache directory, and the lock under which one process builds what many may want at
once: the native reader (`npyio._native.library`) and the foreground index of segmentation masks
(`npyio._sources.foreground`). What is built goes to a temporary file and is moved into place, so
that a reader of a finished entry takes no lock. TF-free.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["cache_root", "locked"]

#: How often a waiter tries the lock again.
POLL_S = 0.1


def cache_root() -> Path:
    """``$NPYIO_CACHE``, else ``$XDG_CACHE_HOME/npyio``, else ``~/.cache/npyio``: where the
    libraries go (in ``native/KEY/``), the foreground indexes (``foreground/``) and the
    command line's sample data."""
    if os.environ.get("NPYIO_CACHE"):
        return Path(os.environ["NPYIO_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "npyio"


@contextlib.contextmanager
def locked(path: Path, timeout_s: float) -> Iterator[None]:
    """Holds an exclusive ``flock`` on ``path``, polled until ``timeout_s``. The kernel drops
    it when its holder dies, however it dies: no lock outlives a killed builder.

    Raises:
        TimeoutError: when another process held it for ``timeout_s``.
    """
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"another process held {path} for over {timeout_s:g} s (still building?)"
                    ) from None
                time.sleep(POLL_S)
        yield
    finally:
        os.close(fd)  # releases the lock
