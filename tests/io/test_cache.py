"""`npyio._io.cache`: where the cache is, and the lock that one builder holds while others wait
(the native library's and the foreground index's)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from npyio._io.cache import cache_root, locked

_HOLD = (
    "import fcntl, sys, time\n"
    "f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX)\n"
    "print('held', flush=True); sys.stdin.read()"
)


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({"NPYIO_CACHE": "/c", "XDG_CACHE_HOME": "/x"}, "/c"),
        ({"XDG_CACHE_HOME": "/x"}, "/x/npyio"),
        ({"HOME": "/home/u"}, "/home/u/.cache/npyio"),
    ],
    ids=["NPYIO_CACHE", "XDG_CACHE_HOME", "home"],
)
def test_the_cache_root_follows_the_environment(monkeypatch, env, want):
    for name in ("NPYIO_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert str(cache_root()) == want


def test_a_held_lock_times_out_naming_it_and_is_free_once_its_holder_ends(tmp_path):
    path = tmp_path / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        held = rf"another process held {path} for over 0.3 s"
        with pytest.raises(TimeoutError, match=held), locked(path, 0.3):
            pass
    finally:
        holder.communicate("", timeout=60)  # ends it: the kernel drops its lock
    entered = False
    with locked(path, 5.0):
        entered = True
    assert entered
