"""The fake GCS server: gcp-storage-emulator's handlers, in memory, behind a TLS HTTP/1.1 server
on 127.0.0.1, with per-request latency, fault rules and counters that can change while it runs.

It runs inside the sealed namespace (`tests.gcs.supervisor`), where the host names of
`tests.gcs.tls.HOST_NAMES` resolve to 127.0.0.1, so TensorFlow's own GCS client talks to it.

Fixes over the emulator, each for a request TensorFlow makes:

- an upload ``PUT`` with both ``Transfer-Encoding: chunked`` and ``Content-Length``: the body is
  read as chunked (the length is the chunked stream's, not the object's);
- an empty ``uploadType=media`` body (``makedirs``) is an empty object, not a crash;
- the resumable session URL (``Location``) is https, as the client connected;
- reads past the end of an object answer 416, as GCS does;
- listings come in pages of at most 1,000 entries (``maxResults``, ``pageToken``,
  ``nextPageToken``), as GCS pages them, where the emulator answers everything at once;
- ``TCP_NODELAY`` (else each response's second write waits ~40 ms for a delayed ACK), the TLS
  handshake in the connection's thread (a stalled client never blocks ``accept``), a deep listen
  backlog, keep-alive, one write per response and no per-request logging.
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import http.server
import io
import json
import os
import re
import socket
import ssl
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import google_crc32c
from gcp_storage_emulator import server as emulator
from gcp_storage_emulator.handlers import buckets as emulator_buckets
from gcp_storage_emulator.storage import Storage

#: What a request is, by its method and path (`classify`); counters and rules use these names.
KINDS = ("read", "stat", "list", "bucket", "upload_start", "upload", "rewrite", "delete", "other")
#: Fault actions: answer a status; send fewer body bytes than Content-Length, then close; wait
#: (``delay`` seconds, then answer; or until released, then close unanswered); close unanswered.
ACTIONS = ("status", "truncate", "stall", "drop")
#: Entries kept in the request log (the oldest go first).
LOG_MAX = 100_000
#: The most entries (objects and prefixes together) a listing answers in one page: GCS's own
#: limit, whatever ``maxResults`` asks for.
PAGE_MAX = 1000


def classify(method: str, host: str, target: str) -> tuple[str, str | None]:
    """The kind of a request (one of `KINDS`) and the object name it is about, if any.

    ``host`` is the Host header: TensorFlow reads objects from ``storage.googleapis.com/B/O``
    and does everything else at ``www.googleapis.com`` (the JSON API)."""
    split = urlsplit(target)
    path, query = split.path, parse_qs(split.query)
    if host.split(":")[0] == "storage.googleapis.com":
        _bucket, _, xml_name = path.lstrip("/").partition("/")
        return ("read" if method == "GET" else "other"), unquote(xml_name) or None
    if path.startswith("/upload/storage/v1/b/"):
        start = method == "POST" and query.get("uploadType") == ["resumable"]
        return ("upload_start" if start else "upload"), query.get("name", [None])[0]
    if path.startswith("/download/storage/v1/b/"):
        return "read", unquote(path.split("/o/", 1)[-1])
    match = re.fullmatch(r"/storage/v1/b/[^/]+(/o(?:/(.*))?)?", path)
    if match is None:
        return "other", None
    objects, name = match.groups()
    if objects is None:
        return "bucket", None
    if name is None:
        return "list", query.get("prefix", [""])[0]
    if "/rewriteTo/" in name or "/copyTo/" in name:
        return "rewrite", unquote(re.split("/(?:rewriteTo|copyTo)/", name)[0])
    if method == "DELETE":
        return "delete", unquote(name)
    if method == "GET":
        return ("read" if query.get("alt") == ["media"] else "stat"), unquote(name)
    return "other", unquote(name)


@dataclass
class Rule:
    """A fault: the requests it matches (every given criterion must hold) and what they get.

    ``name`` is an `fnmatch` pattern on the object name, ``path`` a regular expression searched
    in the request target (path and query, as sent). ``times`` is how many more requests it takes
    (None: all). ``hits`` holds each taken request's arrival time (`time.time`)."""

    id: int
    action: str
    method: str | None = None
    kind: str | None = None
    name: str | None = None
    path: str | None = None
    times: int | None = 1
    status: int = 503
    keep: int = 0
    delay: float | None = None
    hits: list[float] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event, repr=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}, not {self.action!r}")
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {self.kind!r}")

    def matches(self, method: str, kind: str, name: str | None, target: str) -> bool:
        """Whether this rule takes a request, ignoring ``times``."""
        return (
            (self.method is None or self.method == method)
            and (self.kind is None or self.kind == kind)
            and (self.name is None or (name is not None and fnmatch.fnmatchcase(name, self.name)))
            and (self.path is None or re.search(self.path, target) is not None)
        )

    def public(self) -> dict[str, Any]:
        """The rule as plain data (what the control socket sends back)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "released"}


class Stats:
    """Request counters: by kind and status, in flight (now and at most), Range headers, a log,
    and TLS connections accepted (fewer than requests where a client keeps connections alive).

    `reset` zeroes everything but the requests in flight now, which are still running; the
    maximum restarts from them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight: Counter[str] = Counter()
        self.reset()

    def reset(self) -> None:
        """Start counting afresh."""
        with self._lock:
            self.connections = 0
            self.by_kind: Counter[str] = Counter()
            self.by_status: Counter[int] = Counter()
            self.max_in_flight: Counter[str] = +self.in_flight  # + drops the zeros
            self.ranges: list[tuple[str | None, str]] = []
            self.log: deque[dict[str, Any]] = deque(maxlen=LOG_MAX)

    def connected(self) -> None:
        """Count one accepted TLS connection."""
        with self._lock:
            self.connections += 1

    @contextlib.contextmanager
    def track(self, kind: str, entry: dict[str, Any]) -> Iterator[None]:
        """Count one request of ``kind`` in flight while the block runs, then log ``entry``
        (which the block completes with its ``status``)."""
        with self._lock:
            self.by_kind[kind] += 1
            if entry["range"] is not None:
                self.ranges.append((entry["name"], entry["range"]))
            for key in (kind, "all"):
                self.in_flight[key] += 1
                self.max_in_flight[key] = max(self.max_in_flight[key], self.in_flight[key])
        try:
            yield
        finally:
            entry["seconds"] = time.time() - entry["t"]
            with self._lock:
                for key in (kind, "all"):
                    self.in_flight[key] -= 1
                self.by_status[entry.get("status", 0)] += 1
                self.log.append(entry)

    def snapshot(self) -> dict[str, Any]:
        """All counters as plain data. ``status`` 0 means no answer was sent."""
        with self._lock:
            return {
                "total": sum(self.by_kind.values()),
                "connections": self.connections,
                "by_kind": dict(self.by_kind),
                "by_status": dict(self.by_status),
                "in_flight": {k: v for k, v in self.in_flight.items() if v},
                "max_in_flight": dict(self.max_in_flight),
                "ranges": list(self.ranges),
            }

    def requests(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The logged requests (time, method, kind, name, range, status, seconds), oldest first."""
        with self._lock:
            return [dict(e) for e in self.log if kind is None or e["kind"] == kind]


class MemoryStorage(Storage):
    """The emulator's in-memory storage without its metadata journal, which re-serialises every
    object's metadata to JSON on each write (quadratic when uploading many objects)."""

    def __init__(self) -> None:
        super().__init__(use_memory_fs=True, data_dir="/")

    def _write_config_to_file(self) -> None:
        pass


def object_resource(bucket: str, name: str, data: bytes, content_type: str) -> dict[str, Any]:
    """A GCS object resource for ``data``, as the JSON API returns it."""
    generation = str(time.time_ns())
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    crc = base64.b64encode(google_crc32c.Checksum(data).digest()).decode()
    return {
        "kind": "storage#object",
        "id": f"{bucket}/{name}/{generation}",
        "selfLink": f"/storage/v1/b/{bucket}/o/{name}",
        "name": name,
        "bucket": bucket,
        "generation": generation,
        "metageneration": "1",
        "contentType": content_type,
        "timeCreated": now,
        "updated": now,
        "storageClass": "STANDARD",
        "size": str(len(data)),
        "md5Hash": md5,
        "crc32c": crc,
        "etag": md5,
        "acl": [],
    }


class _Request(emulator.Request):
    """The emulator's request, but an empty body reads as ``b""`` where one is expected."""

    def __init__(self, handler: http.server.BaseHTTPRequestHandler, empty_is_bytes: bool):
        super().__init__(handler, handler.command)
        self._empty_is_bytes = empty_is_bytes

    @property
    def data(self) -> Any:
        data = super().data
        return b"" if data is None and self._empty_is_bytes else data


class _Response(emulator.Response):
    """Collects what an emulator handler answers; `FakeGcs` sends it."""

    def __init__(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        super().__init__(handler)
        self.headers: dict[str, str] = {}
        self.body = b""
        self.obj: Any = None  # what `json` answers, dumped by `FakeGcs._route`

    def __setitem__(self, key: str, value: str) -> None:
        self.headers[key] = value

    def __getitem__(self, key: str) -> str:
        return self.headers[key]

    def write(self, content: str | bytes) -> None:
        self.body += content.encode() if isinstance(content, str) else content

    def write_file(self, content: Any, content_type: str | None = "application/octet-stream"):
        if content_type is not None:
            self["Content-Type"] = content_type
        self.body = content.encode() if isinstance(content, str) else bytes(content)

    def json(self, obj: Any) -> None:
        self["Content-Type"] = "application/json"
        self.obj = obj  # a listing is cut to a page before it is dumped (`_page`)


def _read_body(handler: http.server.BaseHTTPRequestHandler) -> bytes:
    """Read the whole request body (chunked wins over Content-Length: TensorFlow's upload PUT
    sends both) and rewrite the headers to describe it as a plain Content-Length body."""
    headers = handler.headers
    if headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = bytearray()
        while size := int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16):
            body += handler.rfile.read(size)
            handler.rfile.readline()
        while handler.rfile.readline().strip():  # trailers, up to the blank line
            pass
        del headers["Transfer-Encoding"]
    else:
        body = bytearray(handler.rfile.read(int(headers.get("Content-Length") or 0)))
    del headers["Content-Length"]
    headers["Content-Length"] = str(len(body))
    return bytes(body)


def _page(listing: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
    """One page of a listing the emulator answered whole: the entries (objects and prefixes, in
    name order, counted together as GCS counts them) after the ``pageToken``'s, at most
    ``maxResults`` and `PAGE_MAX` of them, with a ``nextPageToken`` when more follow. The token
    is opaque to the client, as GCS's is: here, the last entry given, base64-encoded."""
    entries = sorted(
        [(item["name"], "items", item) for item in listing.get("items") or []]
        + [(prefix, "prefixes", prefix) for prefix in listing.get("prefixes") or []],
        key=lambda entry: entry[:2],
    )
    if token := query.get("pageToken", [""])[0]:
        after = tuple(json.loads(base64.urlsafe_b64decode(token.encode())))
        entries = [entry for entry in entries if entry[:2] > after]
    size = max(1, min(int(query.get("maxResults", [PAGE_MAX])[0]), PAGE_MAX))
    page: dict[str, Any] = {"kind": listing.get("kind", "storage#objects")}
    page["prefixes"] = [value for _, key, value in entries[:size] if key == "prefixes"]
    page["items"] = [value for _, key, value in entries[:size] if key == "items"]
    if len(entries) > size:
        last = json.dumps(entries[size - 1][:2]).encode()
        page["nextPageToken"] = base64.urlsafe_b64encode(last).decode()
    return page


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"code": status, "message": message, "errors": [{"message": message}]}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


class FakeGcs:
    """The server's state and behaviour: storage, latency, fault rules and counters.

    Every public method is safe to call from any thread while requests are served."""

    def __init__(self) -> None:
        self.storage = MemoryStorage()
        self.stats = Stats()
        self._lock = threading.Lock()  # the emulator's storage is not thread safe
        self._rules: list[Rule] = []
        self._rule_ids = iter(range(1, 1 << 62))
        self._latency: dict[str, float] = {}
        self._server: _TlsServer | None = None
        self._errors: list[str] = []

    # -- serving ---------------------------------------------------------------------------
    def start(self, certfile: str, keyfile: str, port: int = 443) -> None:
        """Serve HTTPS on 127.0.0.1:``port`` in a background thread."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self._server = _TlsServer(("127.0.0.1", port), self, context)
        threading.Thread(target=self._server.serve_forever, name="fake-gcs", daemon=True).start()

    def stop(self) -> None:
        """Stop accepting, release stalled requests and close the listening socket."""
        self.clear_rules()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def serve(self, handler: _Handler) -> None:
        """Answer one request: count it, sleep the latency, apply the first matching rule."""
        body = _read_body(handler)
        method, target = handler.command, handler.path
        kind, name = classify(method, handler.headers.get("Host", ""), target)
        rule = self._take_rule(method, kind, name, target)
        entry = {"t": time.time(), "method": method, "kind": kind, "name": name, "target": target}
        entry["range"] = handler.headers.get("Range")
        with self.stats.track(kind, entry):
            delay = self._latency.get(kind, self._latency.get("all", 0.0))
            if delay:
                time.sleep(delay)
            entry["status"] = self._respond(handler, body, kind, rule)

    def _respond(self, handler: _Handler, body: bytes, kind: str, rule: Rule | None) -> int:
        """Send the answer a rule (or none) calls for; return its status (0: none sent)."""
        action = rule.action if rule is not None else None
        if rule is not None and action == "stall":
            released = rule.released.wait(rule.delay)
            action = "drop" if rule.delay is None or released else None
        if action == "drop":
            handler.close_connection = True
            return 0
        if rule is not None and action == "status":
            answer = _error(rule.status, f"injected fault: rule {rule.id}")
        else:
            answer = self._route(handler, body, kind)
        keep = rule.keep if action == "truncate" and rule is not None else None
        _send(handler, *answer, keep=keep)
        return answer[0]

    def _route(self, handler: _Handler, body: bytes, kind: str) -> tuple[int, dict, bytes]:
        """Run the emulator's handler for a request whose body was read already."""
        path = urlsplit(handler.path).path
        routes = ((re.fullmatch(pattern, path), methods) for pattern, methods in emulator.HANDLERS)
        no_route: tuple[None, dict[str, Any]] = (None, {})
        match, methods = next(((m, f) for m, f in routes if m), no_route)
        function = methods.get(handler.command)
        if match is None or function is None:
            return _error(501, f"not implemented: {handler.command} {path}")
        if kind == "read" and (too_far := self._past_end(handler, match)):
            return too_far
        request = _Request(handler, empty_is_bytes=kind == "upload")
        request.set_match(match)
        response = _Response(handler)
        rfile, handler.rfile = handler.rfile, io.BytesIO(body)
        try:
            with self._lock:
                function(request, response, self.storage)
        except Exception as exc:  # an emulator bug: answer it, and keep it for `errors`
            self._errors.append(f"{handler.command} {handler.path}: {exc!r}")
            return _error(500, f"fake server error: {exc!r}")
        finally:
            handler.rfile = rfile
        location = response.headers.get("Location", "")
        if location.startswith("http://"):
            response.headers["Location"] = "https://" + location[len("http://") :]
        body = response.body
        if response.obj is not None:
            obj = response.obj
            if kind == "list" and int(response.status) == 200:
                obj = _page(obj, parse_qs(urlsplit(handler.path).query))
            body = json.dumps(obj).encode()
        return int(response.status), response.headers, body

    def _past_end(self, handler: _Handler, match: re.Match[str]) -> tuple[int, dict, bytes] | None:
        """A 416 answer for a Range that starts at or past the end of a non-empty object."""
        start = re.fullmatch(r"\s*bytes=(\d+)-\d*\s*", handler.headers.get("Range", ""))
        params = match.groupdict()
        if start is None or "object_id" not in params:
            return None
        bucket, name = unquote(params["bucket_name"]), unquote(params["object_id"])
        with self._lock:
            obj = self.storage.objects.get(bucket, {}).get(name)
        size = int(obj["size"]) if obj else 0
        if 0 < size <= int(start.group(1)):
            return _error(416, "The requested range cannot be satisfied.")
        return None

    def errors(self) -> list[str]:
        """The exceptions emulator handlers raised (each answered 500), oldest first."""
        return list(self._errors)

    # -- latency and faults ----------------------------------------------------------------
    def set_latency(self, seconds: float, kinds: list[str] | None = None) -> None:
        """Sleep ``seconds`` before answering each request (of ``kinds``; None: all kinds).
        Per-kind values override the all-kinds one; 0 for all kinds clears everything."""
        if kinds is None:
            self._latency = {"all": seconds} if seconds else {}
            return
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {sorted(unknown)}; kinds are {KINDS}")
        self._latency = {**self._latency, **dict.fromkeys(kinds, seconds)}

    def latency(self) -> dict[str, float]:
        """The latency settings: seconds by kind (``"all"``: the default)."""
        return dict(self._latency)

    def add_rule(self, action: str, **criteria: Any) -> int:
        """Add a fault rule (`Rule`'s fields but ``id``/``hits``); return its id. Rules are tried
        in the order they were added; a request takes the first that matches."""
        rule = Rule(id=next(self._rule_ids), action=action, **criteria)
        with self._lock:
            self._rules.append(rule)
        return rule.id

    def _take_rule(self, method: str, kind: str, name: str | None, target: str) -> Rule | None:
        with self._lock:
            for rule in self._rules:
                if (rule.times is None or rule.times > 0) and rule.matches(
                    method, kind, name, target
                ):
                    if rule.times is not None:
                        rule.times -= 1
                    rule.hits.append(time.time())
                    return rule
        return None

    def rules(self) -> list[dict[str, Any]]:
        """Every rule, as plain data, with its hits and the matches it has left."""
        with self._lock:
            return [rule.public() | {"hits": list(rule.hits)} for rule in self._rules]

    def hits(self, rule_id: int) -> list[float]:
        """Arrival times (`time.time`) of the requests a rule took."""
        with self._lock:
            return next(list(rule.hits) for rule in self._rules if rule.id == rule_id)

    def release(self, rule_id: int) -> None:
        """Stop a rule: it takes no more requests, and the requests it stalls end now."""
        with self._lock:
            for rule in self._rules:
                if rule.id == rule_id:
                    rule.times = 0
                    rule.released.set()

    def clear_rules(self) -> None:
        """Remove every rule, releasing the requests they stall."""
        with self._lock:
            rules, self._rules = self._rules, []
        for rule in rules:
            rule.released.set()

    def reset(self) -> None:
        """No latency, no rules, counters and errors from zero (objects and buckets stay)."""
        self.set_latency(0.0)
        self.clear_rules()
        self.stats.reset()
        self._errors.clear()

    # -- objects ---------------------------------------------------------------------------
    def create_bucket(self, bucket: str) -> None:
        """Create ``bucket`` (no soft delete: a deleted object is gone at once)."""
        with self._lock:
            if bucket not in self.storage.buckets:
                emulator_buckets.create_bucket(bucket, self.storage)
            self.storage.buckets[bucket]["softDeletePolicy"] = {"retentionDurationSeconds": "0"}

    def put(
        self, bucket: str, name: str, data: bytes, content_type: str = "application/octet-stream"
    ) -> None:
        """Store an object directly (no HTTP), replacing any object of that name."""
        resource = object_resource(bucket, name, bytes(data), content_type)
        with self._lock:
            self.storage.create_file(bucket, name, bytes(data), resource)

    def put_tree(self, bucket: str, local_dir: str, prefix: str = "") -> list[str]:
        """Store every file under ``local_dir`` as ``prefix`` + its relative path (``/``
        separated); return the object names, sorted."""
        root = Path(local_dir)
        if not root.is_dir():
            raise NotADirectoryError(local_dir)
        prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        names = []
        for dirpath, _dirs, files in os.walk(root):
            for file in files:
                path = Path(dirpath, file)
                name = prefix + path.relative_to(root).as_posix()
                self.put(bucket, name, path.read_bytes())
                names.append(name)
        return sorted(names)

    def get(self, bucket: str, name: str) -> bytes:
        """An object's bytes; KeyError if there is none."""
        with self._lock:
            if name not in self.storage.objects.get(bucket, {}):
                raise KeyError(f"gs://{bucket}/{name}")
            return self.storage.get_file(bucket, name)

    def list_objects(self, bucket: str, prefix: str = "") -> list[str]:
        """Names of the objects that start with ``prefix``, sorted."""
        with self._lock:
            return sorted(n for n in self.storage.objects.get(bucket, {}) if n.startswith(prefix))

    def size(self, bucket: str, name: str) -> int:
        """An object's size in bytes; KeyError if there is none."""
        with self._lock:
            return int(self.storage.objects[bucket][name]["size"])

    def delete(self, bucket: str, name: str) -> None:
        """Delete an object now (later reads get 404); KeyError if there is none."""
        with self._lock:
            if name not in self.storage.objects.get(bucket, {}):
                raise KeyError(f"gs://{bucket}/{name}")
            self.storage.delete_file(bucket, name)

    def delete_prefix(self, bucket: str, prefix: str = "") -> int:
        """Delete every object whose name starts with ``prefix``; return how many."""
        names = self.list_objects(bucket, prefix)
        for name in names:
            self.delete(bucket, name)
        return len(names)


def _send(
    handler: _Handler, status: int, headers: dict[str, str], body: bytes, keep: int | None
) -> None:
    """Write the status line, headers and body in one write. With ``keep``, send only that many
    body bytes (Content-Length still says all of them) and close the connection."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Resume Incomplete" if status == 308 else "Unknown"
    lines = [f"HTTP/1.1 {status} {phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "content-length"]
    lines.append(f"Content-Length: {len(body)}")
    if keep is not None:
        lines.append("Connection: close")
        body = body[:keep]
        handler.close_connection = True
    handler.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


class _Handler(http.server.BaseHTTPRequestHandler):
    """One connection's requests, answered by `FakeGcs.serve`."""

    protocol_version = "HTTP/1.1"  # keep-alive, for clients that reuse connections
    server: _TlsServer

    def _serve(self) -> None:
        self.server.fake.serve(self)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a line per request on stderr would cost more than the request


class _TlsServer(http.server.ThreadingHTTPServer):
    """A thread per connection; TCP_NODELAY; the TLS handshake in that thread."""

    daemon_threads = True
    request_queue_size = 1024  # tf.data opens dozens of connections at once
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], fake: FakeGcs, context: ssl.SSLContext):
        self.fake = fake
        self.context = context
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return  # a client that gave up, or a port probe
        self.fake.stats.connected()
        try:
            _Handler(tls, client_address, self)
        except (OSError, ssl.SSLError):
            pass  # the client closed the connection mid-request: nothing to answer
        finally:
            with contextlib.suppress(OSError):
                tls.shutdown(socket.SHUT_RDWR)
            tls.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # errors inside a request are answered 500 by the handler or are client hang-ups
