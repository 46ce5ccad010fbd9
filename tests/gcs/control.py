"""The control socket's client: drive the fake GCS server and the sandbox's child processes.

The supervisor (`tests.gcs.supervisor`) listens on a UNIX socket file, which works across
network namespaces, with `multiprocessing.connection` (length-framed pickles, HMAC
authentication with a random key). A message is ``(operation, keyword arguments)``; the answer
``("ok", result)`` or ``("error", message, traceback)``.

The sandbox uses `Control` from outside the namespace; a child process inside it can use
`connect` (the sandbox puts the address and key into its environment), e.g. to delete an object
at an exact point of an epoch.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from multiprocessing.connection import Client, Connection
from typing import Any

#: Environment variables the sandbox gives every child: the socket, its key (hex), the bucket.
ADDRESS_ENV = "NPYIO_GCS_CONTROL"
AUTHKEY_ENV = "NPYIO_GCS_AUTHKEY"
BUCKET_ENV = "NPYIO_GCS_BUCKET"


class ControlError(RuntimeError):
    """An operation failed in the supervisor; the message ends with its traceback."""


@dataclass(frozen=True)
class Completed:
    """A finished child process. ``returncode`` is negative for a signal (-9 after a timeout)."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool

    def check(self) -> Completed:
        """Return self if the child exited 0, else raise AssertionError quoting its output."""
        if self.returncode != 0:
            why = "timed out" if self.timed_out else f"exited {self.returncode}"
            raise AssertionError(
                f"{self.argv[:3]} {why} after {self.seconds:.1f} s\n"
                f"--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-8000:]}"
            )
        return self


class Control:
    """A connection per thread to the supervisor, and the operations it offers.

    Object names are relative to ``bucket``, or ``gs://bucket/name`` URLs; every method that
    takes a name also takes a ``bucket=`` override. Fault methods return a rule id for `hits`
    and `release`; their match criteria are `tests.gcs.server.Rule`'s: ``method``, ``kind``
    (`tests.gcs.server.KINDS`), ``name`` (fnmatch on the object name), ``path`` (regex on the
    request target) and ``times`` (requests it takes; None: all)."""

    def __init__(self, address: str, authkey: bytes, bucket: str) -> None:
        self.address = address
        self.bucket = bucket
        self._authkey = authkey
        self._local = threading.local()
        self._all: list[Connection] = []
        self._lock = threading.Lock()

    def _connection(self) -> Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = Client(self.address, family="AF_UNIX", authkey=self._authkey)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def call(self, op: str, **kwargs: Any) -> Any:
        """Run one operation in the supervisor and return its result."""
        conn = self._connection()
        conn.send((op, kwargs))
        reply = conn.recv()
        if reply[0] != "ok":
            raise ControlError(f"{op}: {reply[1]}\n{reply[2]}")
        return reply[1]

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    # -- objects ---------------------------------------------------------------------------
    def url(self, name: str = "", bucket: str | None = None) -> str:
        """``gs://bucket/name``."""
        return f"gs://{bucket or self.bucket}/{name}"

    def _locate(self, name: str, bucket: str | None) -> tuple[str, str]:
        """(bucket, name) of a name or a ``gs://bucket/name`` URL (which wins over ``bucket``)."""
        if name.startswith("gs://"):
            bucket, _, name = name[len("gs://") :].partition("/")
        return bucket or self.bucket, name

    def put(self, name: str, data: bytes, bucket: str | None = None) -> None:
        """Store an object directly in the server (no HTTP, no TensorFlow)."""
        bucket, name = self._locate(name, bucket)
        self.call("put", bucket=bucket, name=name, data=bytes(data))

    def put_tree(
        self, local_dir: str | os.PathLike[str], prefix: str = "", bucket: str | None = None
    ) -> list[str]:
        """Store every file under ``local_dir`` (read by the supervisor, on the same filesystem)
        as ``prefix/relative/path`` (``prefix`` may be a ``gs://bucket/prefix`` URL); return the
        object names, sorted."""
        bucket, prefix = self._locate(prefix, bucket)
        local = os.path.abspath(local_dir)
        return self.call("put_tree", bucket=bucket, local_dir=local, prefix=prefix)

    def get(self, name: str, bucket: str | None = None) -> bytes:
        """An object's bytes (ControlError naming a KeyError if there is none)."""
        bucket, name = self._locate(name, bucket)
        return self.call("get", bucket=bucket, name=name)

    def size(self, name: str, bucket: str | None = None) -> int:
        """An object's size in bytes."""
        bucket, name = self._locate(name, bucket)
        return self.call("size", bucket=bucket, name=name)

    def list_objects(self, prefix: str = "", bucket: str | None = None) -> list[str]:
        """Names of the objects under ``prefix`` (a name or ``gs://`` URL prefix), sorted."""
        bucket, prefix = self._locate(prefix, bucket)
        return self.call("list_objects", bucket=bucket, prefix=prefix)

    def delete(self, name: str, bucket: str | None = None) -> None:
        """Delete an object now: later reads get 404."""
        bucket, name = self._locate(name, bucket)
        self.call("delete", bucket=bucket, name=name)

    def delete_prefix(self, prefix: str = "", bucket: str | None = None) -> int:
        """Delete every object under ``prefix``; return how many."""
        bucket, prefix = self._locate(prefix, bucket)
        return self.call("delete_prefix", bucket=bucket, prefix=prefix)

    def create_bucket(self, bucket: str) -> None:
        """Create another bucket."""
        self.call("create_bucket", bucket=bucket)

    # -- latency, faults, counters ---------------------------------------------------------
    def set_latency(self, seconds: float, kinds: list[str] | None = None) -> None:
        """Sleep ``seconds`` before each answer (to requests of ``kinds``; None: all)."""
        self.call("set_latency", seconds=seconds, kinds=kinds)

    def fail(self, status: int = 503, times: int | None = 1, **match: Any) -> int:
        """Answer ``status`` (a JSON error body) to the next ``times`` matching requests."""
        return self.call("add_rule", action="status", status=status, times=times, **match)

    def truncate(self, keep: int = 0, times: int | None = 1, **match: Any) -> int:
        """Answer matching requests with their full Content-Length but only ``keep`` body
        bytes, then close the connection."""
        return self.call("add_rule", action="truncate", keep=keep, times=times, **match)

    def stall(self, seconds: float | None = None, times: int | None = 1, **match: Any) -> int:
        """Hold matching requests: ``seconds`` then answer normally, or (None) until the rule is
        released or cleared, then close the connection unanswered."""
        return self.call("add_rule", action="stall", delay=seconds, times=times, **match)

    def drop(self, times: int | None = 1, **match: Any) -> int:
        """Close the connection of matching requests without answering."""
        return self.call("add_rule", action="drop", times=times, **match)

    def hits(self, rule_id: int) -> list[float]:
        """Arrival times (`time.time`) of the requests a rule took."""
        return self.call("hits", rule_id=rule_id)

    def release(self, rule_id: int) -> None:
        """Retire a rule and end the requests it stalls."""
        self.call("release", rule_id=rule_id)

    def rules(self) -> list[dict[str, Any]]:
        """Every rule, as plain data."""
        return self.call("rules")

    def clear_rules(self) -> None:
        """Remove every rule (stalled requests end)."""
        self.call("clear_rules")

    def stats(self) -> dict[str, Any]:
        """Counters: ``total``, ``connections`` (TLS connections accepted), ``by_kind``,
        ``by_status``, ``in_flight``, ``max_in_flight`` (by kind, and ``"all"``) and ``ranges``
        ((object name, Range header) per request)."""
        return self.call("stats")

    def requests(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The request log: ``t``, ``method``, ``kind``, ``name``, ``range``, ``status``,
        ``seconds`` per request, oldest first."""
        return self.call("requests", kind=kind)

    def reset_stats(self) -> None:
        """Counters from zero."""
        self.call("reset_stats")

    def errors(self) -> list[str]:
        """Exceptions the emulator raised while answering (each answered 500)."""
        return self.call("errors")

    def reset(self) -> None:
        """No latency, no fault rules, counters and errors from zero; objects stay."""
        self.call("reset")


def connect() -> Control:
    """The control client of the sandbox this process runs in (from its environment)."""
    try:
        address, key = os.environ[ADDRESS_ENV], os.environ[AUTHKEY_ENV]
    except KeyError as missing:
        raise RuntimeError(f"not inside a GCS sandbox: {missing} is not set") from None
    return Control(address, bytes.fromhex(key), os.environ.get(BUCKET_ENV, ""))
