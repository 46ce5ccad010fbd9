"""Readers: how one part of an element (a file, or a member of an ``.npz`` archive) becomes
its tensor (`npyio._read.part`), by backend (`npyio._read.backends`), and the public readers
(`npyio._read.api`). This module imports no TensorFlow, so that TF-free planning can name the
backends, read what each can do (`CAPABILITIES`) and choose the one that reads a plan
(`choose_backend`) without building one."""

from __future__ import annotations

from dataclasses import dataclass

from npyio._format import npy
from npyio._format.files import is_local
from npyio._format.header import Hint
from npyio._format.spec import Spec

__all__ = [
    "BACKENDS",
    "CAPABILITIES",
    "DEFAULT_BACKEND",
    "Capabilities",
    "capabilities",
    "choose_backend",
    "reads",
    "serves",
]


@dataclass(frozen=True)
class Capabilities:
    """What a reader can do: the planner and the builders ask this, never a backend's name.

    Attributes:
        fetches: The reader's *fetch* reads the part's bytes, a step per element before any
            batch. Without it, fetch only names the path and the reader reads in *decode*: a
            batch of rows goes straight to decode, with no map per element before it.
        decodes_batches: *decode* takes a batch of fetched parts (batch-then-decode).
        batch_limit: Files larger than this many bytes are decoded one by one, not in a batch
            (None: any size). For the graph parser, whose batch decode copies each file's
            bytes once more, copies rather than per-op overhead are the cost of large files
            (bench/README.md has the measurements); a reader that reads into the batch
            itself has no such limit.
        python_free: No Python runs per element: the graph serializes (tf.data service, other
            processes, TPU hosts).
        members: Reads members of ``.npz`` archives (``key=``).
        one_get: Reads an object of known size with one GET on object storage, past
            TensorFlow's GCS read block (`npyio._read.objects.read_sized`, or the native op's
            one read per object, with no stat).
        remote: Reads paths of any TensorFlow file system (``gs://``, ``ram://``), not local
            files only.
        any_shape: Reads parts whose shape varies (``None`` dims), and files whose header
            differs from the first file's; without it, only parts of one static shape, whose
            first file's header (the spec's hint) is native-order and C-order.
        reports: Reads with ``ignore_errors`` (refused files skipped, each named).
        doubts: Reads a batch of parts and says which files it doubts, without deciding them
            (`npyio._read.part.Reader.read_doubting`): with ``ignore_errors``, batches are
            read so, and only the elements of doubted files go to the ``fallback``'s
            skip-and-report, one by one (`npyio._sources.dataset.build_skipping`).
        fallback: The backend that reads a plan this one does not serve (by the capabilities
            above), or None: the plan then reads through ``fallback``, decided when it is
            made (`choose_backend`).
        autotune: tf.data's autotuning serves its pipelines. Without it, the pipeline turns it
            off (its AUTOTUNE parallelism and prefetch then stay at their starting values):
            for the native reader that reads as fast, and an iterator's deletion, at each
            epoch's end, no longer waits for autotune's next tick (bench/README.md, "Short
            epochs").
        rows: Reads row ranges of files, for ``npyio.rows`` and packed directories
            (`npyio._read.backends.row_reader` gives its reader of them); False unless the
            backend says so.
        windows: Reads a crop's window of a local file (`npyio._format.window.Window`) and no
            other byte of its payload. Every reader crops: one without it cuts the window out
            of the whole array.
        headers: Parses each local file's own header, so it reads whole arrays of per-case
            shapes (``None`` dims, or an unknown rank) one file at a time, though it has no
            ``any_shape``.
    """

    fetches: bool
    decodes_batches: bool
    batch_limit: int | None
    python_free: bool
    members: bool
    one_get: bool
    remote: bool = True
    any_shape: bool = True
    reports: bool = True
    doubts: bool = False
    fallback: str | None = None
    autotune: bool = True
    rows: bool = False
    windows: bool = False
    headers: bool = False


#: Each backend's capabilities, by name (`npyio._read.backends.reader` builds its reader).
CAPABILITIES = {
    "native": Capabilities(
        fetches=False,
        decodes_batches=True,
        batch_limit=None,
        python_free=True,
        members=False,
        one_get=True,
        any_shape=False,
        doubts=True,
        fallback="graph",
        autotune=False,
        rows=True,
        windows=True,
        headers=True,
    ),
    "graph": Capabilities(
        fetches=True,
        decodes_batches=True,
        batch_limit=512 * 1024,
        python_free=True,
        members=True,
        one_get=True,
        rows=True,
    ),
    # np.load in a py_function: one file at a time, in decode
    "py_function": Capabilities(
        fetches=False,
        decodes_batches=False,
        batch_limit=None,
        python_free=False,
        members=False,
        one_get=False,
    ),
}
#: The backends, by name.
BACKENDS = tuple(CAPABILITIES)
#: The largest file a reader without ``any_shape`` is sent (256 TiB): a larger spec can only
#: come from a header that lies, which the graph parser refuses naming the file.
MAX_STATIC_FILE = 2**48
#: The backend of `npyio.dataset` and `npyio.read_npy` when none is named.
DEFAULT_BACKEND = "native"


def capabilities(backend: str) -> Capabilities:
    """What ``backend`` can do.

    Raises:
        ValueError: for an unknown backend name.
    """
    found = CAPABILITIES.get(backend)
    if found is None:
        raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
    return found


def reads(backend: str, capability: str) -> bool:
    """Whether ``backend`` has ``capability`` (a `Capabilities` flag: ``"members"``, ...), or
    the backend it falls back to for the plans it does not serve."""
    can = capabilities(backend)
    if getattr(can, capability):
        return True
    return can.fallback is not None and reads(can.fallback, capability)


def _native_order(hint: Hint) -> bool:
    """Whether files with ``hint``'s header hold their payload as the output's bytes: native
    byte order and C order (nothing to swap or transpose)."""
    return hint.little_endian == (npy.NATIVE_ORDER == "<") and not hint.fortran_order


def serves(
    can: Capabilities, specs: tuple[Spec, ...], firsts: tuple[str, ...], ignore_errors: bool
) -> bool:
    """Whether a reader that ``can`` reads the parts ``specs``, whose first files are
    ``firsts`` (their paths say the file system), with ``ignore_errors`` or not."""
    remote = not all(is_local(path) for path in firsts)  # ram://, file://, gs://
    if not can.remote and remote:
        return False
    if not can.members and any(spec.member is not None for spec in specs):
        return False
    if not can.reports and ignore_errors:
        return False
    if can.any_shape:
        return True
    cropped = [spec.file.static for spec in specs if spec.crop is not None]
    if not all(cropped) and any(cropped):  # windows placed by a static shape and by a file's
        return False
    return all(_serves_part(can, spec, remote, ignore_errors) for spec in specs)


def _serves_part(can: Capabilities, spec: Spec, remote: bool, ignore_errors: bool) -> bool:
    """Whether a reader without ``any_shape`` that ``can`` reads one part: of one static
    shape with a native-order C-order hint, whole or windowed; or of per-case shapes from
    local files, each header parsed by the kernel: whole, or windows of a static size (not of
    bools, see `_reads_window`); not with ``ignore_errors``, whose skipping reads batches of
    one shape."""
    if not spec.file.static:
        if not can.headers or remote or ignore_errors:
            return False
        return spec.crop is None or (_reads_window(can, spec) and spec.output.static)
    hint = spec.usable_hint()
    return (
        hint is not None
        and _native_order(hint)
        and hint.size <= MAX_STATIC_FILE
        and (spec.output == spec.file or (_reads_window(can, spec) and not remote))
    )


def _reads_window(can: Capabilities, spec: Spec) -> bool:
    """Whether a reader that ``can`` reads ``spec``'s window itself, from local files. Not of
    bools: the graph path checks every byte of a bool file, which a read of the window alone
    cannot. (An object in a store is read in one request whole: a window would be many.)"""
    return can.windows and spec.crop is not None and spec.file.dtype.kind != "b"


def choose_backend(
    backend: str, specs: tuple[Spec, ...], firsts: tuple[str, ...], ignore_errors: bool
) -> str:
    """The backend that reads the plan: ``backend`` when it serves it (`serves`), else its
    ``fallback`` (the native reader's is the graph parser: ``None`` dims, ``.npz`` members,
    byte-swapped or Fortran-order files)."""
    can = capabilities(backend)
    if can.fallback is None or serves(can, specs, firsts, ignore_errors):
        return backend
    return choose_backend(can.fallback, specs, firsts, ignore_errors)
