"""Sources to paths: the one resolver and the one pairing rule of every entry point.

A *source* is what a user passes as ``inputs`` or ``labels`` (or a ``PATH`` on the command
line): a directory (its ``*.npy`` files), a glob pattern, one file, or a sequence of paths.
`resolve` turns it into a `Source`; `pair` pairs two of them. `npyio.dataset`, `npyio.rows`,
`npyio.inspect` and the ``inspect``/``verify`` commands all go through here, so they agree on
which files a source means and which files pair.

Rules:
- A directory stands for its ``*.npy`` files (``*.npz`` with ``key=``), not recursively; a glob
  for the files it matches. Both are sorted by file name (then by path). A sequence keeps its
  order. One file is taken whatever its name.
- Inputs and labels pair **by file name** when either side is a directory or a glob (the file
  names then carry the meaning), and **by position** otherwise (sequences, single files).
- Hidden files (names that begin with ``.``, such as macOS's ``._0002.npy``) are left out of a
  directory's listing, and a glob's wildcard does not match them, as Python's ``glob`` and
  Keras's directory loaders skip them, on every file system; a glob whose name part begins with
  ``.`` (``.*.npy``), a file named on its own or a sequence still reads them.
- A directory or glob that finds the shards of an interrupted ``npyio pack`` (no index: the
  marker or temporary files) stands for no file: its problem says the pack is incomplete.
- Label *values* (an array or list, one per file) pair with a directory's or glob's files by
  position in that sorted listing: text order. Where the names hold numbers that are not
  zero-padded (``2.npy``, ``10.npy``), text order is not the order the values were written in,
  and `refuse_text_order` refuses the pairing (a sequence of paths keeps its order, so passing
  one is how to choose an order). Its remedy globs only the names that share the listing's
  numbered pattern (`numbered`: ``sample_*.npy``, not ``*.npy``) and names the files it leaves
  out, the likely strays (``labels.npy``), as a count error of values does (`stray_note`).
- Local paths are listed with ``os.scandir`` and ``glob``; any other path (``gs://``,
  ``ram://``, ...) with ``tf.io.gfile``, imported only then: this module imports no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import glob as globlib
import itertools
import os
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from npyio._format.files import (
    MAX_SHOWN,
    NO_SUCH_FILE,
    UnknownSchemeError,
    as_array,
    describe,
    empty_path,
    is_local,
    named,
    parent,
    path_text,
    scalar_path_text,
    short,
)
from npyio._format.packed import INCOMPLETE_REASON, SHARD, IncompletePackError
from npyio._io.files import exists, gfile
from npyio._io.packed import state

__all__ = [
    "Numbered",
    "PathSpec",
    "Source",
    "by_name",
    "numbered",
    "pair",
    "parse_shard",
    "refuse_text_order",
    "resolve",
    "shard_list",
    "stray_note",
    "unpaired",
]

PathSpec = Any  # str | bytes | os.PathLike | a sequence, array or 1-D string tensor of those
GLOB_CHARS = frozenset("*?[")
NO_MATCH = "no file matches this pattern"
NOT_A_DIR = "not a directory"
EMPTY = "the sequence of paths is empty"
INCOMPLETE_PACK = "incomplete pack"


def no_files(suffix: str) -> str:
    return f"directory has no {suffix} files"


@dataclass
class Source:
    """One source and the files it stands for.

    ``kind`` is ``"dir"``, ``"glob"``, ``"file"``, ``"list"`` or ``"missing"``; ``problem``
    says why it stands for no file at all (a missing path, an empty directory, ...); ``suffix``
    is the suffix of the files a directory stands for.
    """

    arg: str
    kind: str
    paths: list[str] = field(default_factory=list)
    problem: str | None = None
    suffix: str | None = None

    @property
    def by_name(self) -> bool:
        """Whether the file names carry the meaning (a directory or a glob)."""
        return self.kind in ("dir", "glob")

    def error(self, what: str) -> ValueError:
        """The API's error for a source with a problem, naming it."""
        if self.problem is not None and self.problem.startswith(INCOMPLETE_PACK):
            return IncompletePackError(f"{what}: {self.arg}: {self.problem}")
        if self.kind == "list":
            return ValueError(f"{what}: {self.problem}")
        if self.problem == NO_SUCH_FILE:
            return ValueError(f"{what}: {self.arg!r} does not exist (no such file or directory)")
        if self.kind == "glob":
            # A misspelled directory is the usual reason: say so rather than leave it to guess.
            top = _fixed_dir(self.arg)
            why = f" (directory {top!r} does not exist)" if top and not exists(top) else ""
            return ValueError(f"{what}: glob {self.arg!r} matches no files{why}")
        if self.kind == "dir" and self.suffix is not None and self.problem == no_files(self.suffix):
            return ValueError(f"{what}: directory {self.arg!r} has no *{self.suffix} files")
        return ValueError(f"{what}: {self.arg!r}: {self.problem}")


def _fixed_dir(pattern: str) -> str:
    """The directory a glob pattern starts in: its leading components without glob chars."""
    parts = pattern.replace("\\", "/").split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if GLOB_CHARS & set(part):
            break
        fixed.append(part)
    return "/".join(fixed)


def basename(path: str) -> str:
    return posixpath.basename(path.replace("\\", "/"))


def _name_key(path: str) -> tuple[str, str]:
    return basename(path), path


def _items(spec: object, what: str) -> list[object] | None:
    """The items of a sequence-like source (sequence, 1-D numpy array, 1-D eager tensor).

    Raises:
        TypeError: for an array or tensor that is not 1-D, or a symbolic tensor.
    """
    array = as_array(spec, what)
    if array is not None:
        if array.ndim != 1:
            raise TypeError(
                f"{what}: expected a 1-D array of paths, got {array.ndim}-D {describe(spec)}"
            )
        return list(array.tolist())  # numpy str/bytes items become str/bytes
    if isinstance(spec, Sequence) and not isinstance(spec, (str, bytes, bytearray)):
        return list(spec)
    return None


def _list_dir(path: str, suffix: str) -> list[str]:
    """The directory's ``*{suffix}`` files, sorted by name. Raises OSError if unlistable."""
    if is_local(path):
        # os.listdir and one string concatenation per file: os.scandir's entry objects and an
        # os.path.join per name cost more, at a million files (bench/README.md, "Start-up").
        names = [n for n in os.listdir(path) if n.endswith(suffix) and n[:1] != "."]
        names.sort()
        prefix = os.path.join(path, "")
        return [prefix + n for n in names]
    import tensorflow as tf

    try:
        found = gfile(path).glob(posixpath.join(path, "*" + suffix))
    except tf.errors.OpError as e:
        raise OSError(e.message) from e
    return sorted((p for p in found if not basename(p).startswith(".")), key=_name_key)


def isdir(path: str) -> bool:
    return os.path.isdir(path) if is_local(path) else bool(gfile(path).isdir(path))


def _glob(pattern: str) -> list[str]:
    if is_local(pattern):  # Python's glob leaves hidden names to patterns that begin with "."
        return sorted(globlib.glob(pattern), key=_name_key)
    return sorted(_visible(pattern, gfile(pattern).glob(pattern)), key=_name_key)


def _visible(pattern: str, found: list[str]) -> list[str]:
    """``found`` without the hidden names a wildcard matched, as Python's glob: a component of
    ``pattern`` with a wildcard that does not begin with ``.`` matches no name that does
    (``tf.io.gfile.glob`` matches them).

    Example:
        >>> _visible("ram://d/*.npy", ["ram://d/._0.npy", "ram://d/0.npy"])
        ['ram://d/0.npy']
        >>> _visible("ram://d/.*.npy", ["ram://d/._0.npy"])
        ['ram://d/._0.npy']
    """
    parts = pattern.split("/")
    wild = [i for i, part in enumerate(parts) if GLOB_CHARS & set(part) and part[:1] != "."]
    out = []
    for path in found:
        names = path.split("/")
        if len(names) != len(parts):  # a name of other depth: its last component decides
            hidden = basename(path).startswith(".") and parts[-1][:1] != "."
        else:
            hidden = any(names[i].startswith(".") for i in wild)
        if not hidden:
            out.append(path)
    return out


def _incomplete_pack(source: Source) -> Source:
    """``source`` with its problem set when it finds the shards of an interrupted pack (or, a
    directory, nothing but what an interrupted pack left): a smaller dataset otherwise."""
    if source.paths:
        where = sorted({parent(p) for p in source.paths if SHARD.search(p)})
    else:
        where = [source.arg] if source.kind == "dir" else []
    for directory in where:
        try:
            found = state(directory or ".")
        except OSError:  # unlistable: the source's own problem says so
            found = None
        if found == "incomplete":
            place = "" if directory.rstrip("/") == source.arg.rstrip("/") else f" in {directory}"
            problem = f"{INCOMPLETE_PACK}{place} -- {INCOMPLETE_REASON}"
            return dataclasses.replace(source, paths=[], problem=problem)
    return source


def resolve(
    spec: PathSpec, what: str = "inputs", suffix: str = ".npy", *, strict: bool = True
) -> Source:
    """The files ``spec`` stands for (see the module docstring).

    With ``strict`` (the API), a source that stands for no file raises; without (the command
    line, which reports every problem), it comes back with its ``problem`` set.

    Raises:
        ValueError: with ``strict``: a path that does not exist (named), a directory with no
            ``*{suffix}`` files, a glob that matches nothing, an empty sequence.
        TypeError: for a source of another type; at most a few of its items are shown.
    """
    text = path_text(spec)
    if text is None:
        text = scalar_path_text(spec, what)  # a 0-d array or tensor holds one path, of any kind
    if text is not None:
        try:
            source = _resolve_text(text, suffix)
        except UnknownSchemeError as e:
            if strict:
                raise ValueError(f"{what}: {e}") from None
            source = Source(text, "missing", [], e.reason)
    elif isinstance(spec, (str, bytes, os.PathLike)):
        raise empty_path(what)
    else:
        items = _items(spec, what)
        if items is None:
            raise TypeError(
                f"{what}: expected a directory, a glob pattern or a sequence of paths, "
                f"got {describe(spec)}"
            )
        paths: list[str] = []
        bad: list[str] = []
        for i, item in enumerate(items):
            path = path_text(item)
            if path is not None:
                paths.append(path)
            elif len(bad) < MAX_SHOWN:  # keep only what the message shows
                bad.append(f"[{i}] {short(item)}")
        if len(paths) != len(items):
            n = len(items) - len(paths)
            more = f", ... ({n} in all)" if n > len(bad) else ""
            raise TypeError(
                f"{what}: expected paths (non-empty str, bytes or os.PathLike), got {n} other "
                f"item{'s' * (n != 1)} in {describe(spec)}: {', '.join(bad)}{more}"
            )
        source = Source(f"<{len(paths)} paths>", "list", paths, None if paths else EMPTY)
    if strict and source.problem is not None:
        raise source.error(what)
    return source


def _resolve_text(text: str, suffix: str) -> Source:
    source = _find(text, suffix)
    return _incomplete_pack(source) if source.by_name else source


def _find(text: str, suffix: str) -> Source:
    if not is_local(text) and not GLOB_CHARS & set(text):
        # On object storage a directory is a prefix: listing its files answers whether it is
        # one, where asking first (isdir) costs a listing of its own.
        try:
            paths = _list_dir(text, suffix)
        except OSError:
            paths = []
        if paths:
            return Source(text, "dir", paths, None, suffix)
    if isdir(text):
        try:
            paths = _list_dir(text, suffix)
        except OSError as e:  # no permission to list it, ...
            return Source(text, "dir", [], e.strerror.lower() if e.strerror else str(e), suffix)
        return Source(text, "dir", paths, None if paths else no_files(suffix), suffix)
    if exists(text):
        return Source(text, "file", [text])
    if GLOB_CHARS & set(text):
        paths = _glob(text)
        return Source(text, "glob", paths, None if paths else NO_MATCH)
    return Source(text, "missing", [], NO_SUCH_FILE)


def by_name(inputs: Source, labels: Source) -> bool:
    """The pairing rule: by file name when either side is a directory or a glob."""
    return inputs.by_name or labels.by_name


def _index(paths: list[str], names: list[str], side: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for p, name in zip(paths, names):
        if name in out:
            raise ValueError(
                f"{side}: two files share the name {name!r} ({out[name]} and {p}); "
                "pairing by name needs unique names"
            )
        out[name] = p
    return out


def unpaired(inputs: Source, labels: Source) -> tuple[list[str], list[str]]:
    """Under the pairing rule, the inputs with no label and the labels with no input."""
    if not by_name(inputs, labels):
        n = min(len(inputs.paths), len(labels.paths))
        return inputs.paths[n:], labels.paths[n:]
    xs = {basename(p) for p in inputs.paths}
    ys = {basename(p) for p in labels.paths}
    return (
        [p for p in inputs.paths if basename(p) not in ys],
        [p for p in labels.paths if basename(p) not in xs],
    )


def names_of(source: Source) -> list[str]:
    """The file names of a source's paths (for a local directory, without recomputing them)."""
    if source.kind == "dir" and is_local(source.arg):
        cut = len(os.path.join(source.arg, ""))
        return [p[cut:] for p in source.paths]
    return [basename(p) for p in source.paths]


def pair_parts(sources: Sequence[Source], what: Sequence[str]) -> list[list[str]]:
    """Pairs the files of several parts (inputs and labels, or the parts of nested sources)
    under the pairing rule: by file name when any part is a directory or a glob, else by
    position. Returns one list of paths per part, aligned; by name, sorted by name.

    Raises:
        ValueError: for names missing from some part (the first ten are named), duplicate
            names, or sequences of unequal length.
    """
    if not any(source.by_name for source in sources):
        lengths = [len(source.paths) for source in sources]
        if len(set(lengths)) > 1:
            counts = ", ".join(f"{n} {w}" for n, w in zip(lengths, what))
            raise ValueError(
                f"{_joined(what)} pair by position but have different lengths: {counts}"
            )
        return [list(source.paths) for source in sources]
    names = [names_of(source) for source in sources]
    # The common case, fast (a million files): every part lists the same names in the same
    # (sorted) order, each once.
    first = names[0]
    if all(n == first for n in names[1:]) and all(a < b for a, b in itertools.pairwise(first)):
        return [list(source.paths) for source in sources]
    index = [_index(source.paths, n, w) for source, n, w in zip(sources, names, what)]
    everyone = set().union(*index)
    if any(len(ix) != len(everyone) for ix in index):
        problems = []
        if len(sources) == 2:  # "found only in inputs" reads better than "missing from labels"
            pairs = (
                (what[0], index[0].keys() - index[1].keys()),
                (what[1], index[1].keys() - index[0].keys()),
            )
            problems = [_listed(sorted(n), f"found only in {w}") for w, n in pairs if n]
        else:
            problems = [
                _listed(sorted(everyone - ix.keys()), f"missing from {w}")
                for w, ix in zip(what, index)
                if len(ix) != len(everyone)
            ]
        raise ValueError(f"{_joined(what)} do not pair up by file name: " + "; ".join(problems))
    order = sorted(everyone)
    return [[ix[n] for n in order] for ix in index]


_NUMBER = re.compile(r"(\d+)")


def _numbers(text: str) -> tuple[object, ...]:
    """``text`` with each run of digits read as a number: ``2.npy`` before ``10.npy``."""
    return tuple(int(t) if i % 2 else t for i, t in enumerate(_NUMBER.split(text)))


def text_order_clash(
    paths: Sequence[str], key: Callable[[str], tuple[str, ...]] = _name_key
) -> tuple[str, str] | None:
    """The first two neighbours of ``paths``, listed in the text order of ``key`` (a listing's
    sort key: `_name_key`, or a walk's ``(path,)``), that reading the numbers in ``key``'s
    texts would order the other way (``10.npy`` before ``2.npy``); None when both agree."""
    texts = [key(p) for p in paths]
    numbers = [tuple(_numbers(t) for t in k) for k in texts]
    for i in range(len(paths) - 1):
        if texts[i] <= texts[i + 1] and numbers[i] > numbers[i + 1]:
            return paths[i], paths[i + 1]
    return None


def refuse_text_order(
    paths: Sequence[str],
    where: str,
    what: str,
    remedy: str,
    key: Callable[[str], tuple[str, ...]] = _name_key,
) -> None:
    """Refuses label values matched by position to ``paths``, listed in text order, when their
    names hold numbers that are not zero-padded, so that text and numeric order differ.

    Args:
        paths: The files the values pair with, in the order they pair.
        where: The source they were listed from, as the message names it.
        what: The values, as the message names them (``labels``).
        remedy: How to pass an explicit order, and how to accept text order knowingly.
        key: The sort key ``paths`` were listed by (see `text_order_clash`).

    Raises:
        ValueError: naming two files that the two orders put the other way round.
    """
    clash = text_order_clash(paths, key)
    if clash is None:
        return
    a, b = clash
    raise ValueError(
        f"{what}: the values pair with the files of {where} in the text order of their names, "
        f"where {basename(a)!r} comes before {basename(b)!r} ({a}, {b}): the names hold "
        f"numbers that are not zero-padded, so text order is not numeric order, and the "
        f"values were most likely written in numeric order. {remedy}"
    )


def order_remedy(paths: Sequence[str], where: str) -> str:
    """How to pass ``paths`` (from ``where``) in an explicit order, for `refuse_text_order`:
    numeric order, or text order knowingly. Where most names share a numbered pattern
    (`numbered`), the globs it gives match only those, and it names the files they leave out."""
    found = numbered(paths)
    pattern = where if GLOB_CHARS & set(where) else posixpath.join(where, "*" + _suffix(paths))
    if found is not None and (found.strays or not GLOB_CHARS & set(where)):
        # A directory's or a too-wide glob's folder, with only the numbered names in it.
        folder = where if not GLOB_CHARS & set(where) else _glob_folder(where)
        pattern = posixpath.join(folder, found.glob) if folder else found.glob
    # The key must read every name the glob matches: the numbered ones and any stray it keeps.
    strays = set() if found is None else set(found.strays) - set(found.matched)
    kept = [p for p in paths if p not in strays]
    stems = [basename(p).rsplit(".", 1)[0] for p in kept]
    if all(s.isdigit() for s in stems):
        key = "lambda p: int(os.path.basename(p).split('.')[0])"
    else:
        key = r"lambda p: [int(t) if t.isdigit() else t for t in re.split(r'(\d+)', p)]"
    return (
        f"Pass the files as a list in the values' order (a list keeps its order): "
        f"sorted(glob.glob({pattern!r}), key={key}) for numeric order, or "
        f"sorted(glob.glob({pattern!r})) to take text order knowingly; or zero-pad the names "
        f"(f'{{i:05d}}.npy')." + ("" if found is None else found.note())
    )


def _glob_folder(pattern: str) -> str:
    """The folder part of a glob pattern (``data`` of ``data/*.npy``), with either separator."""
    cut = max(pattern.rfind("/"), pattern.rfind("\\"))
    return pattern[:cut] if cut > 0 else pattern[: cut + 1]


@dataclass(frozen=True)
class Numbered:
    """The numbered pattern most of a listing's names share (``sample_0.npy`` ...), and the
    files whose names do not follow it: the likely strays (``labels.npy``).

    ``template`` is the names' text around their numbers (``("sample_", ".npy")``); ``glob``
    a name pattern that matches the numbered names and, where it can, none of the strays
    (``sample_*.npy``, or ``[0-9]*.npy`` beside ``labels.npy``); ``matched`` the strays that
    ``glob`` still matches.
    """

    template: tuple[str, ...]
    glob: str
    strays: list[str]
    matched: list[str]

    @property
    def shown(self) -> str:
        """The pattern as a message shows it: ``sample_<n>.npy``."""
        return "<n>".join(self.template)

    def note(self) -> str:
        """What a message says of the strays: which they are, and that ``glob`` leaves them out
        (or which it still matches); empty without strays."""
        if not self.strays:
            return ""
        n = len(self.strays)
        matched = set(self.matched)
        left = [p for p in self.strays if p not in matched]
        note = (
            f" {n} file{'s' * (n != 1)} {'do' if n != 1 else 'does'} not follow the numbered "
            f"names the others share ({self.shown!r}): {named(self.strays)}"
        )
        if not self.matched:
            return note + f"; {self.glob!r} leaves {'them' if n != 1 else 'it'} out."
        out = f"leaves out {named(left)} but " if left else ""
        them = "them" if len(self.matched) != 1 else "it"
        return (
            note + f"; {self.glob!r} {out}still matches {named(self.matched)}: leave {them} "
            "out of the list."
        )


def numbered(paths: Sequence[str]) -> Numbered | None:
    """The numbered pattern that more than half of ``paths``' names share (the text around
    their runs of digits), and the paths that do not follow it; None when there is none.

    Example:
        >>> found = numbered(["d/labels.npy", "d/sample_0.npy", "d/sample_1.npy"])
        >>> found.glob, found.strays
        ('sample_*.npy', ['d/labels.npy'])
    """
    templates = [tuple(_NUMBER.split(basename(p))[0::2]) for p in paths]
    counts = Counter(t for t in templates if len(t) > 1)
    if not counts:
        return None
    template, count = counts.most_common(1)[0]
    if 2 * count <= len(paths):
        return None
    strays = [p for p, t in zip(paths, templates) if t != template]
    texts = [globlib.escape(t) for t in template]
    matched: list[str] = []
    for wildcard in ("*", "[0-9]*"):  # the plainer glob, unless it matches a stray
        name_glob = wildcard.join(texts)
        matched = [p for p in strays if fnmatch.fnmatchcase(basename(p), name_glob)]
        if not matched:
            break
    return Numbered(template, name_glob, strays, matched)


def stray_note(paths: Sequence[str]) -> str:
    """For a count error: the files of ``paths`` whose names do not follow the numbered
    pattern the others share (`numbered`), the likely strays, or that none is apparent."""
    found = numbered(paths)
    if found is None or not found.strays:
        shared = "" if found is None else f" (all follow {found.shown!r})"
        return f"; no stray file is apparent from the names{shared}"
    n = len(found.strays)
    return (
        f"; {n} file{'s' * (n != 1)} {'do' if n != 1 else 'does'} not follow the numbered names "
        f"the others share ({found.shown!r}), likely {'strays' if n != 1 else 'a stray'}: "
        f"{named(found.strays)}"
    )


def _suffix(paths: Sequence[str]) -> str:
    name = basename(paths[0]) if paths else ""
    return "." + name.rsplit(".", 1)[1] if "." in name else ""


def pair(inputs: Source, labels: Source) -> tuple[list[str], list[str]]:
    """`pair_parts` of inputs and labels."""
    xs, ys = pair_parts([inputs, labels], ["inputs", "labels"])
    return xs, ys


def _joined(what: Sequence[str]) -> str:
    return ", ".join(what[:-1]) + " and " + what[-1] if len(what) > 1 else what[0]


def _listed(names: list[str], where: str) -> str:
    return f"{len(names)} {where}: {named(names)}"


def shard_list(paths: list[str], num_shards: int, index: int) -> list[str]:
    """Every ``num_shards``-th path starting at ``index``: each path goes to exactly one shard."""
    return paths[index::num_shards]


def parse_shard(shard: object) -> tuple[int, int] | None:
    """``None``, ``(num_shards, index)`` or a ``tf.distribute.InputContext`` -> (n, i) or None."""
    if shard is None:
        return None
    if hasattr(shard, "num_input_pipelines") and hasattr(shard, "input_pipeline_id"):
        n, i = shard.num_input_pipelines, shard.input_pipeline_id  # a tf.distribute.InputContext
    else:
        try:
            n, i = shard  # type: ignore[misc]
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"shard must be (num_shards, index) or a tf.distribute.InputContext, got {shard!r}"
            ) from e
    if not (isinstance(n, int) and isinstance(i, int) and n >= 1 and 0 <= i < n):
        raise ValueError(
            f"shard must satisfy num_shards >= 1 and 0 <= index < num_shards, got {shard!r}"
        )
    return n, i
