"""The supervisor: the one long-lived process inside the sealed namespace.

Started by `tests.gcs.sandbox.GcsSandbox` as ``python -m tests.gcs.supervisor`` under
``unshare --net --mount --pid --fork --kill-child``. It is process 1 of its PID namespace, so
when it dies the kernel kills every process it started. It:

1. brings the loopback interface up and refuses to go on unless ``lo`` is the only interface
   and its network namespace is not the launcher's (so no packet can leave);
2. bind-mounts the prepared hosts file over ``/etc/hosts`` (in its own mount namespace: the
   host is unaffected) and remounts ``/sys`` so that ``/sys/class/net`` shows this namespace;
3. serves the fake GCS (`tests.gcs.server.FakeGcs`) on 127.0.0.1:443 and checks that
   ``https://storage.googleapis.com/`` reaches it with the test CA;
4. listens on the control socket: server operations, and child processes run inside the
   namespace with a timeout;
5. prints ``ready`` on stdout, and serves until told to shut down, until its lifeline (a pipe
   whose other end only the launcher holds) closes because the launcher died, or a SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import itertools
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any

from tests.gcs.server import FakeGcs
from tests.gcs.tls import HOST_NAMES

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_MS_BIND = 4096


class Refused(RuntimeError):
    """The namespace is not sealed, or could not be set up: the supervisor will not serve."""


def loopback_up() -> None:
    """Set ``lo`` up (with the SIOCSIFFLAGS ioctl: no dependency on iproute2)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        ifreq = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, _SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def interfaces() -> set[str]:
    """This network namespace's interfaces, by two independent kernel views (the netlink-based
    index and /proc/self/net/dev; /sys/class/net shows the namespace sysfs was mounted in)."""
    names = {name for _index, name in socket.if_nameindex()}
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return names | {line.split(":")[0].strip() for line in lines}


def check_sealed(outer_netns: int) -> None:
    """Raise Refused unless this is a new network namespace whose only interface is ``lo``."""
    if os.stat("/proc/self/ns/net").st_ino == outer_netns:
        raise Refused("the supervisor runs in the launcher's network namespace")
    found = interfaces()
    if found != {"lo"}:
        raise Refused(f"interfaces other than lo exist in the namespace: {sorted(found)}")


def _mount(source: str, target: str, fstype: str | None, flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fs = fstype.encode() if fstype else None
    if libc.mount(source.encode(), target.encode(), fs, flags, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")


def mount_hosts(hosts_file: Path) -> None:
    """Bind-mount ``hosts_file`` over /etc/hosts and check the names resolve to 127.0.0.1."""
    _mount(str(hosts_file), "/etc/hosts", None, _MS_BIND)
    for name in HOST_NAMES:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, 443, socket.AF_INET)}
        if addresses != {"127.0.0.1"}:
            raise Refused(f"{name} resolves to {sorted(addresses)}, not 127.0.0.1 (nscd?)")


def remount_sys() -> None:
    """Mount a sysfs of this namespace on /sys; best effort (only its net view changes)."""
    try:
        _mount("sysfs", "/sys", "sysfs", 0)
    except OSError as exc:
        print(f"supervisor: /sys not remounted ({exc})", file=sys.stderr)


def check_https(ca: str) -> None:
    """Fetch the fake's health check as TensorFlow would reach it: by name, with the test CA."""
    context = ssl.create_default_context(cafile=ca)
    request = b"GET / HTTP/1.1\r\nHost: www.googleapis.com\r\nConnection: close\r\n\r\n"
    with (
        socket.create_connection(("storage.googleapis.com", 443), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="storage.googleapis.com") as tls,
    ):
        tls.sendall(request)
        reply = b""
        while chunk := tls.recv(65536):
            reply += chunk
    if not reply.startswith(b"HTTP/1.1 200"):
        raise Refused(f"the fake server's health check failed: {reply[:200]!r}")


class Children:
    """Child processes inside the namespace, each in its own session (process group), its
    output in files; killed with their group at their deadline or at shutdown."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self._ids = itertools.count(1)
        self._procs: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def spawn(
        self,
        argv: list[str],
        env: Mapping[str, str | None] | None = None,
        cwd: str | None = None,
        timeout: float = 60.0,
        input: bytes | None = None,
    ) -> int:
        """Start ``argv`` with this process's environment updated by ``env`` (None values
        remove a variable); return its id. It is killed ``timeout`` seconds from now."""
        child_id = next(self._ids)
        full_env = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        files = {s: self._workdir / f"child-{child_id}.{s}" for s in ("in", "out", "err")}
        files["in"].write_bytes(input or b"")
        with (
            files["in"].open("rb") as i,
            files["out"].open("wb") as o,
            files["err"].open("wb") as e,
        ):
            proc = subprocess.Popen(
                argv, env=full_env, cwd=cwd, stdin=i, stdout=o, stderr=e, start_new_session=True
            )
        entry: dict[str, Any] = {"proc": proc, "argv": argv, "files": files}
        entry["start"] = time.monotonic()
        entry["deadline"] = entry["start"] + timeout
        with self._lock:
            self._procs[child_id] = entry
        return child_id

    def wait(self, child_id: int, timeout: float | None = None) -> dict[str, Any] | None:
        """Wait up to ``timeout`` seconds (None: until its deadline) for a child to exit; then
        return its result and forget it, or None if it still runs. A child past its deadline
        is killed (``timed_out``)."""
        with self._lock:
            entry = self._procs[child_id]
        proc, deadline = entry["proc"], entry["deadline"]
        left = deadline - time.monotonic()
        try:
            proc.wait(max(0.0, left if timeout is None else min(timeout, left)))
        except subprocess.TimeoutExpired:
            if time.monotonic() < deadline:
                return None
            self._kill(proc)
            entry["timed_out"] = True
        return self._result(child_id)

    def _result(self, child_id: int) -> dict[str, Any]:
        with self._lock:
            entry = self._procs.pop(child_id)
        files = entry["files"]
        result = {
            "argv": entry["argv"],
            "returncode": entry["proc"].returncode,
            "stdout": files["out"].read_text(errors="replace"),
            "stderr": files["err"].read_text(errors="replace"),
            "seconds": time.monotonic() - entry["start"],
            "timed_out": entry.get("timed_out", False),
        }
        for path in files.values():
            path.unlink(missing_ok=True)
        return result

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def kill(self, child_id: int) -> dict[str, Any]:
        """Kill a child's process group now; return its result."""
        with self._lock:
            proc = self._procs[child_id]["proc"]
        self._kill(proc)
        return self._result(child_id)

    def reap_overdue(self, done: threading.Event) -> None:
        """Until ``done``: kill each child past its deadline, even if nobody waits for it."""
        while not done.wait(0.25):
            now = time.monotonic()
            with self._lock:
                overdue = [e for e in self._procs.values() if e["deadline"] < now]
            for entry in overdue:
                if entry["proc"].poll() is None:
                    entry["timed_out"] = True
                    self._kill(entry["proc"])

    def kill_all(self) -> None:
        """Kill every child's process group."""
        with self._lock:
            procs = [entry["proc"] for entry in self._procs.values()]
        for proc in procs:
            self._kill(proc)


class Supervisor:
    """The control socket's server: a thread per connection, the operations in `ops`."""

    def __init__(self, workdir: Path, fake: FakeGcs) -> None:
        self.fake = fake
        self.children = Children(workdir)
        self.done = threading.Event()
        self.done_by_request = False
        self.ops: dict[str, Callable[..., Any]] = {
            "ping": lambda: "pong",
            "shutdown": self._shutdown,
            "spawn": self.children.spawn,
            "wait": self.children.wait,
            "kill": self.children.kill,
            "reset_stats": fake.stats.reset,
            "stats": fake.stats.snapshot,
            "requests": fake.stats.requests,
        }
        for name in (
            "put", "put_tree", "get", "size", "list_objects", "delete", "delete_prefix",
            "create_bucket", "set_latency", "latency", "add_rule", "hits", "release", "rules",
            "clear_rules", "errors", "reset",
        ):  # fmt: skip
            self.ops[name] = getattr(fake, name)

    def _shutdown(self) -> None:
        self.done_by_request = True
        self.done.set()

    def serve(self, listener: Listener) -> None:
        """Accept control connections until shutdown."""
        while not self.done.is_set():
            try:
                conn = listener.accept()
            except (OSError, EOFError):
                continue  # a client that failed authentication, or the listener closing
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: Connection) -> None:
        with conn:
            while True:
                try:
                    op, kwargs = conn.recv()
                except (EOFError, OSError):
                    return
                try:
                    reply: tuple[Any, ...] = ("ok", self.ops[op](**kwargs))
                except Exception as exc:
                    reply = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
                try:
                    conn.send(reply)
                except (OSError, EOFError):
                    return


def _watch_lifeline(fd: int, done: threading.Event, orphaned: threading.Event) -> None:
    """Shut down when the launcher's end of the pipe closes (the launcher exited or died)."""
    while os.read(fd, 1):
        pass
    orphaned.set()
    done.set()


def main(argv: list[str] | None = None) -> int:
    """Set up the namespace, serve, shut down; exit 2 (with the reason on stderr) if refused."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--outer-netns", type=int, required=True)
    parser.add_argument("--lifeline-fd", type=int, required=True)
    parser.add_argument("--bucket", required=True)
    args = parser.parse_args(argv)
    workdir: Path = args.workdir
    try:
        loopback_up()
        check_sealed(args.outer_netns)
        mount_hosts(workdir / "hosts")
        remount_sys()
        check_sealed(args.outer_netns)
        fake = FakeGcs()
        fake.create_bucket(args.bucket)
        fake.start(str(workdir / "server.pem"), str(workdir / "server.key"))
        check_https(str(workdir / "ca.pem"))
        fake.reset()  # the health check is no test's request
    except (Refused, OSError) as exc:
        print(f"supervisor refused: {exc}", file=sys.stderr)
        return 2
    supervisor = Supervisor(Path(tempfile.mkdtemp(dir=workdir)), fake)
    signal.signal(signal.SIGTERM, lambda *_: supervisor.done.set())
    orphaned = threading.Event()
    watch = (args.lifeline_fd, supervisor.done, orphaned)
    threading.Thread(target=_watch_lifeline, args=watch, daemon=True).start()
    authkey = bytes.fromhex(os.environ["NPYIO_GCS_AUTHKEY"])
    listener = Listener(str(workdir / "control.sock"), family="AF_UNIX", authkey=authkey)
    threading.Thread(target=supervisor.serve, args=(listener,), daemon=True).start()
    reaper = supervisor.children.reap_overdue
    threading.Thread(target=reaper, args=(supervisor.done,), daemon=True).start()
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    supervisor.done.wait()
    supervisor.children.kill_all()
    fake.stop()
    listener.close()
    if orphaned.is_set() and not supervisor.done_by_request:
        # the launcher died without cleaning up: nobody else will delete its directory
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
