"""The GCS sandbox, as seen from a test: a sealed network namespace with a fake GCS server, in
which child processes run TensorFlow's own GCS client against ``gs://`` paths.

`GcsSandbox` starts one supervisor process (`tests.gcs.supervisor`) under ``unshare``, talks to
it over a UNIX socket (`tests.gcs.control.Control`, whose methods it has: objects, latency,
faults, counters) and runs children inside the namespace. Nothing outside the namespace changes:
the hosts file is bind-mounted in the namespace's own mount table, the CA is trusted only
through the children's ``CURL_CA_BUNDLE``, and every process ends when the sandbox closes (or
when the test process dies: the supervisor watches a pipe only the test process holds).

Without root, it runs in a new user namespace too (``--map-root-user``), where the kernel
allows unprivileged user namespaces.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Mapping
from multiprocessing.connection import Client, Connection
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.gcs.control import ADDRESS_ENV, AUTHKEY_ENV, BUCKET_ENV, Completed, Control
from tests.gcs.tls import HOST_NAMES, make_certs

ROOT = Path(__file__).resolve().parents[2]
#: Variables a child never inherits from the test process: proxies (curl would send GCS
#: requests to them) and GCS settings (tests measure TensorFlow's and npyio's defaults; pass
#: ``env=`` to set them).
STRIPPED_PREFIXES = ("GCS_",)
STRIPPED = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "STORAGE_EMULATOR_HOST"}
    | {"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "CURL_CA_BUNDLE"}
)


class SandboxUnavailable(RuntimeError):
    """The sealed namespace or the fake server could not be made here; the message says why."""


def _inherited_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k.upper() not in STRIPPED and not k.upper().startswith(STRIPPED_PREFIXES)
    }


class Child:
    """A child process running inside the sandbox (see `GcsSandbox.spawn`)."""

    def __init__(self, sandbox: GcsSandbox, child_id: int, argv: list[str]) -> None:
        self._sandbox = sandbox
        self.id = child_id
        self.argv = argv
        self.result: Completed | None = None

    def wait(self, timeout: float | None = None) -> Completed | None:
        """Wait up to ``timeout`` seconds (None: until it exits or its deadline kills it);
        return its `Completed`, or None if it still runs."""
        if self.result is None:
            reply = self._sandbox.call("wait", child_id=self.id, timeout=timeout)
            self.result = Completed(**reply) if reply is not None else None
        return self.result

    def kill(self) -> Completed:
        """Kill its process group now (if it still runs) and return its `Completed`."""
        if self.result is None:
            self.result = Completed(**self._sandbox.call("kill", child_id=self.id))
        return self.result


class WorkerError(Exception):
    """Code run in a `Worker` raised; ``type_name`` is the exception's class name (e.g.
    ``NotFoundError``), ``remote_traceback`` its traceback in the worker."""

    def __init__(self, type_name: str, message: str, remote_traceback: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message
        self.remote_traceback = remote_traceback


class Worker:
    """A long-lived Python child inside the sandbox that runs code sent to it (see
    `tests.gcs.worker` for its namespace), so TensorFlow is imported once for many checks."""

    def __init__(self, child: Child, conn: Connection) -> None:
        self.child = child
        self._conn = conn

    def exec(self, source: str, timeout: float = 60.0) -> Any:
        """Run statements; return the variable ``result`` (None if unset). Raises WorkerError
        if they raise, TimeoutError (after killing the worker) if no answer comes in time."""
        return self._ask("exec", textwrap.dedent(source), timeout)

    def eval(self, source: str, timeout: float = 60.0) -> Any:
        """Evaluate an expression in the worker's namespace and return its value."""
        return self._ask("eval", source, timeout)

    def _ask(self, mode: str, source: str, timeout: float) -> Any:
        self._conn.send((mode, source))
        if not self._conn.poll(timeout):
            self.kill()
            raise TimeoutError(f"the worker gave no answer in {timeout} s and was killed")
        reply = self._conn.recv()
        if reply[0] != "ok":
            raise WorkerError(*reply[1:])
        return reply[1]

    def close(self) -> Completed:
        """Ask the worker to exit, kill it if it has not within 1 s (TensorFlow's exit can take
        longer, and nothing in a worker needs it); return its result."""
        with contextlib.suppress(OSError, EOFError):
            self._conn.send(("quit", ""))
        self._conn.close()
        return self.child.wait(1.0) or self.child.kill()

    def kill(self) -> Completed:
        """Kill the worker now; return its result."""
        self._conn.close()
        return self.child.kill()


class GcsSandbox(Control):
    """The sandbox: start it (or use it as a context manager), then drive it.

    ``bucket`` is created at start and is the default bucket of every object method. ``env``
    is added to every child's environment (after the sandbox's own variables: the CA bundle,
    ``GOOGLE_AUTH_TOKEN_FOR_TESTING``, ``PYTHONPATH`` with the repository first, and the control
    socket's address). ``python`` runs `python`, `module` and `script` children::

        with GcsSandbox() as gcs:
            gcs.put("data/a.npy", payload)
            gcs.set_latency(0.02)
            gcs.python("import tensorflow as tf; print(tf.io.gfile.listdir('gs://npyio-test/data'))")
    """

    def __init__(
        self,
        bucket: str = "npyio-test",
        *,
        env: Mapping[str, str] | None = None,
        python: str = sys.executable,
        start_timeout: float = 60.0,
    ) -> None:
        self.bucket = bucket
        self.env = dict(env or {})
        self.python_executable = python
        self.start_timeout = start_timeout
        self.workdir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lifeline: int | None = None

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> GcsSandbox:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> GcsSandbox:
        """Make the CA and hosts file, start the supervisor and wait until it serves.

        Raises SandboxUnavailable (after cleaning up) if this machine cannot make the namespace,
        lacks ``unshare``/``openssl``/gcp-storage-emulator, or the supervisor refuses."""
        self._check_tools()
        self.workdir = Path(tempfile.mkdtemp(prefix="npyio-gcs-"))
        try:
            self._prepare(self.workdir)
            self._launch(self.workdir)
            self._await_ready(self.workdir)
        except BaseException:
            self.close()
            raise
        return self

    def _check_tools(self) -> None:
        if not sys.platform.startswith("linux"):
            raise SandboxUnavailable(f"needs Linux namespaces; this is {sys.platform}")
        for tool in ("unshare", "openssl"):
            if shutil.which(tool) is None:
                raise SandboxUnavailable(f"the {tool} command is not installed")
        if importlib.util.find_spec("gcp_storage_emulator") is None:
            raise SandboxUnavailable("gcp-storage-emulator is not installed (pip install it)")

    def _prepare(self, workdir: Path) -> None:
        try:
            make_certs(workdir)
        except RuntimeError as exc:
            raise SandboxUnavailable(str(exc)) from exc
        (workdir / "hosts").write_text(
            f"127.0.0.1 {' '.join(HOST_NAMES)} metadata\n::1 localhost ip6-localhost\n"
        )
        self._authkey = secrets.token_bytes(32)
        Control.__init__(self, str(workdir / "control.sock"), self._authkey, self.bucket)

    def child_env(self) -> dict[str, str]:
        """The environment every child starts from (before a call's own ``env``)."""
        assert self.workdir is not None, "start the sandbox first"
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        return {
            **_inherited_env(),
            "CURL_CA_BUNDLE": str(self.workdir / "ca.pem"),
            "GOOGLE_AUTH_TOKEN_FOR_TESTING": "x",
            "PYTHONPATH": path,
            "PYTHONUNBUFFERED": "1",
            ADDRESS_ENV: self.address,
            AUTHKEY_ENV: self._authkey.hex(),
            BUCKET_ENV: self.bucket,
            **self.env,
        }

    def _launch(self, workdir: Path) -> None:
        namespaces = ["--net", "--mount", "--pid", "--fork", "--kill-child=SIGKILL", "--mount-proc"]
        if os.geteuid() != 0:
            namespaces = ["--user", "--map-root-user", *namespaces]
        read_end, self._lifeline = os.pipe()
        argv = [
            "unshare", *namespaces, self.python_executable, "-m", "tests.gcs.supervisor",
            "--workdir", str(workdir), "--bucket", self.bucket, "--lifeline-fd", str(read_end),
            "--outer-netns", str(os.stat("/proc/self/ns/net").st_ino),
        ]  # fmt: skip
        with (workdir / "supervisor.log").open("wb") as log:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.child_env(),
                cwd=ROOT,
                pass_fds=(read_end,),
                start_new_session=True,  # its own process group, killed as one
            )
        os.close(read_end)

    def _await_ready(self, workdir: Path) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        deadline = time.monotonic() + self.start_timeout
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([self._proc.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(self._proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                line += chunk
        with contextlib.suppress(ValueError):
            if json.loads(line).get("ready"):
                return
        log = (workdir / "supervisor.log").read_text(errors="replace").strip()
        code = self._proc.poll()
        status = f"exited {code}" if code is not None else "did not get ready in time"
        raise SandboxUnavailable(f"the GCS sandbox's supervisor {status}: {log[-2000:]}")

    def close(self) -> None:
        """Stop every child and the supervisor, kill their process group if they linger, and
        delete the working directory. Safe to call more than once."""
        if self._proc is not None:
            control = self.workdir / "control.sock" if self.workdir else None
            with contextlib.suppress(Exception):
                if self._proc.poll() is None and control is not None and control.exists():
                    self.call("shutdown")
            with contextlib.suppress(Exception):
                Control.close(self)
            if self._lifeline is not None:
                os.close(self._lifeline)
                self._lifeline = None
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def call(self, op: str, **kwargs: Any) -> Any:
        """Run one operation in the supervisor (see `Control.call`)."""
        if self._proc is None:
            raise RuntimeError("the GCS sandbox is not running: start it first")
        return super().call(op, **kwargs)

    @property
    def running(self) -> bool:
        """Whether the supervisor is alive."""
        return self._proc is not None and self._proc.poll() is None

    # -- children --------------------------------------------------------------------------
    def spawn(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str | None] | None = None,
        timeout: float = 120.0,
        cwd: str | os.PathLike[str] | None = None,
        input: bytes | None = None,
    ) -> Child:
        """Start ``argv`` inside the namespace and return at once. ``env`` updates the child's
        environment (None removes a variable); it is killed (SIGKILL to its process group)
        ``timeout`` seconds from now; ``cwd`` defaults to the repository root."""
        child_id = self.call(
            "spawn",
            argv=[str(a) for a in argv],
            env=env,
            cwd=str(cwd or ROOT),
            timeout=timeout,
            input=input,
        )
        return Child(self, child_id, [str(a) for a in argv])

    def run(self, argv: list[str], **kwargs: Any) -> Completed:
        """Run ``argv`` inside the namespace to its end (see `spawn` for the keywords)."""
        result = self.spawn(argv, **kwargs).wait()
        assert result is not None
        return result

    def python(self, code: str, *args: str, **kwargs: Any) -> Completed:
        """Run ``python -c code args...`` inside the namespace."""
        return self.run([self.python_executable, "-c", code, *args], **kwargs)

    def module(self, name: str, *args: str, **kwargs: Any) -> Completed:
        """Run ``python -m name args...`` inside the namespace (e.g. ``module("npyio", ...)``)."""
        return self.run([self.python_executable, "-m", name, *args], **kwargs)

    def script(self, path: str | os.PathLike[str], *args: str, **kwargs: Any) -> Completed:
        """Run ``python path args...`` inside the namespace."""
        return self.run([self.python_executable, str(path), *args], **kwargs)

    def worker(
        self, *, env: Mapping[str, str | None] | None = None, timeout: float = 120.0
    ) -> Worker:
        """Start a `Worker` (TensorFlow imported) with ``env`` added to its environment; wait
        up to ``timeout`` seconds for it to serve. It lives until closed or the sandbox closes."""
        return self.workers(env, timeout=timeout)[0]

    def workers(
        self, *envs: Mapping[str, str | None] | None, timeout: float = 120.0
    ) -> list[Worker]:
        """Start one `Worker` per environment in ``envs`` at once (their imports overlap), and
        wait up to ``timeout`` seconds for all of them to serve."""
        assert self.workdir is not None, "start the sandbox first"
        started = []
        for env in envs:
            address = self.workdir / f"worker-{secrets.token_hex(4)}.sock"
            argv = [self.python_executable, "-m", "tests.gcs.worker", str(address)]
            started.append((self.spawn(argv, env=env, timeout=24 * 3600.0), address))
        deadline = time.monotonic() + timeout
        try:
            return [self._connect_worker(child, address, deadline) for child, address in started]
        except BaseException:
            for child, _address in started:
                child.kill()
            raise

    def _connect_worker(self, child: Child, address: Path, deadline: float) -> Worker:
        while not address.exists():
            result = child.wait(0.2)
            if result is not None or time.monotonic() > deadline:
                result = result or child.kill()
                raise RuntimeError(f"the worker did not start: {result.stderr[-4000:]}")
        return Worker(child, Client(str(address), family="AF_UNIX", authkey=self._authkey))
