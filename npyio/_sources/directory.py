"""``npyio.dataset_from_directory``: a tree of ``.npy`` files, one folder per class, read as
Keras's ``keras.utils.image_dataset_from_directory`` reads a tree of images.

The listing (`index_directory`) follows Keras's ``keras.src.utils.dataset_utils.index_directory``
point by point, so that the same tree gives the same files, in the same order, with the same
labels; the split, shard, spec and graph are `npyio.dataset`'s (`plan_dataset`, `build`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from npyio._format.files import is_local, named, one_path, short
from npyio._io.files import exists, gfile
from npyio._pipeline.options import (
    AUTOTUNE,
    DatasetOptions,
    LoaderOptions,
    ReadOptions,
    SplitOptions,
    entry_point,
)
from npyio._pipeline.paths import PathSpec, isdir, refuse_text_order
from npyio._read import DEFAULT_BACKEND
from npyio._sources.dataset import build
from npyio._sources.pack_plan import is_packed
from npyio._sources.plan import DatasetPlan, plan_dataset

__all__ = ["LABEL_MODES", "Index", "dataset_from_directory", "index_directory"]

LABEL_MODES = ("int", "categorical", "binary", None)
SUFFIX = ".npy"


def _listed(names: Sequence[str]) -> str:
    """Names quoted and bracketed, the first ten shown: ``['a', 'b' and 3 more]``."""
    return f"[{named([repr(n) for n in names])}]"


@dataclass(frozen=True)
class Index:
    """What a directory holds: its ``.npy`` files, in Keras's order, and their labels.

    ``labels`` has one value per path (class indices, int32, for inferred labels; the given
    values otherwise), or is None; ``class_names`` is None without labels."""

    paths: list[str]
    labels: np.ndarray | None
    class_names: list[str] | None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks, as os.walk classifies entries
    except OSError:  # a broken or unreadable link: os.walk lists it as a file too
        return False


def _walk_local(top: str, follow_links: bool) -> list[tuple[str, list[str]]]:
    """(directory, its ``.npy`` paths sorted) for ``top`` and every directory below it, hidden
    files and directories (a leading ``.``) left out.

    The entries Keras's ``os.walk`` yields, listed with ``os.scandir`` once per directory:
    the path strings come from the scan itself (``DirEntry.path``), so each file costs one
    entry, one suffix test and its share of a sort. Symlinked directories are entered only
    with ``follow_links`` (``top`` itself always is, as ``os.walk`` does)."""
    found: list[tuple[str, list[str]]] = []
    stack = [top]
    while stack:
        root = stack.pop()
        files: list[str] = []
        real_root: str | None = None
        # Unlike os.walk (which Keras uses, and which skips a directory it cannot list without
        # a word), an unreadable directory raises: its files would otherwise vanish silently.
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name.startswith("."):  # hidden (macOS's ._0002.npy): as glob skips it
                    continue
                if _is_dir(entry):
                    if entry.is_symlink():
                        if not follow_links:
                            continue
                        # os.walk would follow a link to an ancestor until the OS refuses
                        # the path (listing the same files dozens of times): refuse it now.
                        target = os.path.realpath(entry.path)
                        real_root = real_root or os.path.realpath(root)
                        if real_root == target or real_root.startswith(target + os.sep):
                            raise ValueError(
                                f"follow_links: {entry.path!r} links to {target!r}, which "
                                f"contains it: following it would list the same files forever"
                            )
                    stack.append(entry.path)
                elif entry.name.lower().endswith(SUFFIX):  # case-insensitive, as Keras
                    files.append(entry.path)
        # one directory's paths share their prefix: sorting them sorts by file name
        files.sort()
        found.append((root, files))
    return found


def _walk_remote(top: str) -> list[tuple[str, list[str]]]:
    """`_walk_local` for a path of another file system (``gs://``, ...), by ``tf.io.gfile.walk``
    (no symlinks there)."""
    found = []
    for root, dirs, names in gfile(top).walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # hidden ones: as _walk_local
        files = sorted(
            os.path.join(root, n)
            for n in names
            if n.lower().endswith(SUFFIX) and not n.startswith(".")
        )
        found.append((root, files))
    return found


def _npy_files(top: str, follow_links: bool) -> list[str]:
    """Every ``.npy`` file under ``top``, in Keras's order: directories sorted by their path
    string (not depth first: ``a/b`` sorts after ``a-c``, as in Keras), then each directory's
    files by name."""
    found = _walk_local(top, follow_links) if is_local(top) else _walk_remote(top)
    found.sort(key=lambda item: item[0])
    return [path for _, files in found for path in files]


def _class_dirs(directory: str) -> list[str]:
    """The class subdirectories of ``directory`` in alphanumeric order, as Keras finds them:
    directories or links to directories, not hidden (no leading ``.``)."""
    if is_local(directory):
        with os.scandir(directory) as entries:
            return sorted(e.name for e in entries if not e.name.startswith(".") and _is_dir(e))
    fs = gfile(directory)
    names = (n.rstrip("/") for n in fs.listdir(directory))  # some list "name/" for a dir
    return sorted(
        n for n in names if not n.startswith(".") and fs.isdir(os.path.join(directory, n))
    )


#: How to pair a labels list with files whose text order is not their numeric order.
_REORDER = (
    "Reorder the labels to the alphanumeric order of the paths (Keras's order), or pass the "
    "files in the labels' order to npyio.dataset, which keeps a list's order: "
    "npyio.dataset(paths, labels); or zero-pad the names (f'{i:05d}.npy')."
)


def _by_path(path: str) -> tuple[str, str]:
    """The sort key of a walk's files (`_npy_files`): the directory, then the name."""
    return os.path.dirname(path), os.path.basename(path)


def index_directory(
    directory: str,
    labels: object = "inferred",
    class_names: Sequence[str] | None = None,
    follow_links: bool = False,
) -> Index:
    """The ``.npy`` files under ``directory`` and their labels, unshuffled: what Keras's
    ``index_directory(directory, labels, formats=(".npy",), class_names, shuffle=False,
    follow_links=follow_links)`` returns (``labels`` is checked by the caller).

    - ``labels="inferred"``: one class per subdirectory (``class_names``, or all of them in
      alphanumeric order); each class's files, found recursively, are labelled with its index.
      Files directly in ``directory`` are ignored.
    - ``labels`` values or None: every ``.npy`` file under ``directory``, class folders or not.

    Raises:
        ValueError: for ``class_names`` that name no subdirectory (or one twice), a class
            directory with no ``.npy`` files, no class subdirectories, no ``.npy`` files at all,
            or label values that are not one per file or that would pair in a text order that is
            not the numeric order of the names (`npyio._pipeline.paths.refuse_text_order`).
    """
    if not (isinstance(labels, str) and labels == "inferred"):  # (an array == str is an array)
        paths = _npy_files(directory, follow_links)
        if not paths:
            raise ValueError(
                f"directory {directory!r} has no {SUFFIX} files (searched recursively)"
            )
        if labels is None:
            return Index(paths, None, None)
        values = np.asarray(labels)
        if len(values) != len(paths):
            raise ValueError(
                f"labels: expected one label per {SUFFIX} file under {directory!r}, in the "
                f"alphanumeric order of their paths: got {len(values)} labels for "
                f"{len(paths)} files"
            )
        refuse_text_order(paths, f"directory {directory!r}", "labels", _REORDER, _by_path)
        # as Keras: the class names are the distinct labels, sorted
        return Index(paths, values, [str(v) for v in np.unique(values).tolist()])

    found = _class_dirs(directory)
    if class_names is None:
        names = found
    else:
        names = list(class_names)
        missing = [n for n in names if n not in set(found)]
        if missing:
            raise ValueError(
                f"class_names: {_listed(missing)} name no subdirectory of {directory!r} "
                f"(its class subdirectories: {_listed(found)})"
            )
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"class_names: {_listed(twice)} appear more than once")
    if not names:
        raise ValueError(
            f"directory {directory!r} has no class subdirectories: labels='inferred' reads one "
            f"class per subdirectory; for {SUFFIX} files not in class folders, pass labels=None "
            f"or a list of labels"
        )
    per_class = [_npy_files(os.path.join(directory, name), follow_links) for name in names]
    empty = [os.path.join(directory, n) for n, files in zip(names, per_class) if not files]
    if empty:
        raise ValueError(
            f"class director{'y' if len(empty) == 1 else 'ies'} {_listed(empty)} "
            f"{'has' if len(empty) == 1 else 'have'} no {SUFFIX} files (searched recursively): "
            f"every class needs at least one; leave a class out with class_names"
        )
    counts = [len(files) for files in per_class]
    # the labels without a Python int per file: each class index repeated over its files
    indices = np.repeat(np.arange(len(names), dtype=np.int32), counts)
    return Index([path for files in per_class for path in files], indices, names)


def keras_labels(labels: object) -> np.ndarray:
    """A ``labels`` list/tuple/array as a 1-D array, with the dtype Keras's
    ``tf.data.Dataset.from_tensor_slices(labels)`` gives a list: int32 (int64 if the values do
    not fit), float32, or bool."""
    values = np.asarray(labels)
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise ValueError(
            f"labels: expected a list of numbers, one per {SUFFIX} file, got "
            f"{values.ndim}-D {values.dtype} values {short(labels)}"
        )
    if values.dtype.kind in "iu" and len(values):
        info = np.iinfo(np.int32)
        fits = info.min <= values.min() and values.max() <= info.max
        return values.astype(np.int32 if fits else np.int64)
    return values.astype(np.float32) if values.dtype.kind == "f" else values


def _encode_labels(ds: tf.data.Dataset, label_mode: str, num_classes: int) -> tf.data.Dataset:
    """Labels as Keras encodes them, computed in the graph from the class index (a one-hot
    matrix of a million files by a thousand classes would not fit in memory): ``categorical``
    is a float32 one-hot vector, ``binary`` a float32 vector of one 0 or 1."""
    if label_mode == "categorical":

        def encode(y: tf.Tensor) -> tf.Tensor:
            return tf.one_hot(y, num_classes)  # float32, as Keras

    elif label_mode == "binary":

        def encode(y: tf.Tensor) -> tf.Tensor:
            return tf.expand_dims(tf.cast(y, tf.float32), -1)

    else:
        return ds
    # after the batch: one op per batch, not per file; in order, so batches keep theirs
    return ds.map(
        lambda x, y, *rest: (x, encode(y), *rest),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )


@entry_point
def dataset_from_directory(
    directory: PathSpec,
    labels: object = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    *,
    batch_size: int | None = 32,
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    follow_links: bool = False,
    dtype: object = None,
    shape: object = None,
    crop: object = None,
    num_parallel_calls: int | None = AUTOTUNE,
    deterministic: bool | None = None,
    prefetch: int | None = AUTOTUNE,
    drop_remainder: bool = False,
    ignore_errors: bool = False,
    shard: object = None,
    backend: str = DEFAULT_BACKEND,
    with_paths: bool = False,
    padding_value: object = None,
    verbose: bool = True,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """A ``tf.data.Dataset`` of the ``.npy`` files in a directory, one subdirectory per class:
    ``keras.utils.image_dataset_from_directory`` for ``.npy`` files, decoded in graph mode.

    With this layout::

        main_directory/
            class_a/
                a_1.npy
                more/a_2.npy
            class_b/
                b_1.npy

    ``dataset_from_directory("main_directory")`` yields batches of ``(x, y)``: the arrays,
    and labels 0 for ``class_a`` and 1 for ``class_b``. The files are listed as Keras lists
    them (same files, order and labels), then read by `npyio.dataset`'s pipeline: no Python
    runs per element, and elements have the files' dtype and shape (they are not resized).

    Args:
        directory: The directory (a local path or any TensorFlow file system path: ``gs://``,
            ...). With ``labels="inferred"`` its subdirectories are the classes (hidden ones,
            starting with ``.``, are skipped); otherwise the folder structure is ignored.
        labels: ``"inferred"`` (from the class subdirectories), ``None`` (no labels), or a
            list/tuple (or 1-D array) of numbers, one per ``.npy`` file under ``directory``,
            in the alphanumeric order of the file paths (Keras's: directories sorted by path,
            each one's files by name; all files, recursively, class folders or not).
        label_mode: ``"int"``: the class index, int32, shape ``(batch,)``; ``"categorical"``:
            a float32 one-hot vector, shape ``(batch, num_classes)``; ``"binary"``: float32 0.
            or 1., shape ``(batch, 1)`` (exactly two classes); ``None``: inputs only (then
            ``labels`` is ignored, and every ``.npy`` file under ``directory`` is read, as in
            Keras).
        class_names: With ``labels="inferred"``, the class subdirectories to read, in the order
            that gives their indices (default: all of them, in alphanumeric order).
        batch_size: Batches of this size (32 by default); ``None`` yields single elements.
        shuffle: Shuffle the files, every epoch (a full uniform shuffle of the file list).
        seed: The shuffle and split seed (a split needs one).
        validation_split: A fraction in (0, 1) of the files to hold out, with ``subset`` and
            ``seed``: ``int(validation_split * n)`` files, drawn with ``seed``. With class
            folders the split is stratified: each class gives its share, in proportion to its
            size. Which files are held out depends only on the files, ``validation_split`` and
            ``seed``, never on ``shuffle`` or another option, so a training call and a
            validation call with the same seed always get disjoint subsets that cover every
            file (Keras's split moves with ``shuffle``: see docs/shuffling.md).
        subset: ``"training"``, ``"validation"`` or ``"both"`` (a tuple of the two datasets;
            the validation one is not shuffled, as in Keras).
        follow_links: Enter subdirectories that are symbolic links (as Keras).
        dtype: The inputs' dtype; with ``shape`` also given, no file is read when the dataset
            is built. By default both come from the first file's header.
        shape: The inputs' shape; ``None`` dims allow variable sizes (batches are then padded).
        num_parallel_calls, deterministic, prefetch, drop_remainder, ignore_errors, shard,
        backend, with_paths, padding_value: As for `npyio.dataset`. ``shard`` cuts each
            subset after the split. With ``with_paths``, drop the paths before Keras's
            ``fit``: ``ds.map(lambda x, y, path: (x, y))``.
        crop: Read a window of each array (a tuple of sizes: a random window of the leading
            axes drawn from ``seed``, anew each epoch; or an `npyio.Crop`), as
            `npyio.dataset`'s ``crop``.
        verbose: Print how many files and classes were found (and the split), as Keras does.

    Returns:
        A dataset of ``(x, y)`` (``x`` alone when ``label_mode`` or ``labels`` is None; then
        the input's path with ``with_paths``), or a tuple (training, validation) for
        ``subset="both"``. Each has Keras's attributes ``class_names`` (None without labels)
        and ``file_paths`` (its files: after the split and shard, in alphanumeric order).

    Raises:
        ValueError: For a ``directory`` that does not exist, is no directory or is a pack
            (`npyio.dataset` reads a pack), a ``labels``
            or ``label_mode`` that is none of those above, ``class_names`` with labels not
            inferred or that name no subdirectory, a class directory with no ``.npy`` files,
            no files at all, a ``labels`` list whose length is not the number of files,
            ``label_mode="binary"`` without exactly two classes, and the split errors of
            `npyio.dataset` (a ``validation_split`` outside (0, 1), a ``subset`` without it,
            a split without a ``seed``, an empty subset); plus
            `npyio.dataset`'s errors for the files.

    Differences from Keras, each on purpose:

    - Files are read as they are: ``dtype``/``shape`` declare (or are read from the first
      header) what every file holds, instead of Keras's image resizing and color modes.
    - The shuffle is a full uniform shuffle of the file list every epoch, not a buffer of
      ``8 * batch_size`` over a list shuffled once. ``file_paths`` is in alphanumeric order
      (Keras's is that list shuffled once, an order the dataset does not follow either).
    - The split needs a ``seed``, whatever ``shuffle`` is, and does not move with
      ``shuffle``: Keras holds out the last files of the list, shuffled with the seed only
      when ``shuffle=True``, so a training call with ``shuffle=True`` and a validation call
      with ``shuffle=False`` share files, and an unshuffled validation subset holds only the
      last classes. Here the subsets are stratified by class and disjoint across calls.
    - A class directory with no ``.npy`` files, a subset left empty, ``validation_split=0``,
      duplicate ``class_names``, a symlink loop with ``follow_links``, and a directory that
      cannot be listed are errors (Keras skips, returns an empty dataset or loops).
    - ``"categorical"``/``"binary"`` with a ``labels`` list need the labels to be 0 .. C-1,
      where C is the number of distinct labels (Keras's class count): otherwise Keras would
      silently yield all-zero one-hot vectors, or labels other than 0 and 1.
    - ``labels`` may also be a 1-D numpy array (Keras takes a list or tuple only).
    - ``subset="both"`` returns a tuple (Keras: a list).

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> for i, cls in enumerate(["cat", "cat", "dog"]):
        ...     tf.io.gfile.makedirs(f"ram://doc/fromdir/{cls}")
        ...     with tf.io.gfile.GFile(f"ram://doc/fromdir/{cls}/{i}.npy", "wb") as f:
        ...         np.save(f, np.full((2,), i, "float32"))
        >>> ds = npyio.dataset_from_directory("ram://doc/fromdir", batch_size=2, shuffle=False)
        Found 3 files belonging to 2 classes.
        >>> ds.class_names
        ['cat', 'dog']
        >>> x_spec, y_spec = ds.element_spec
        >>> x_spec
        TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)
        >>> y_spec
        TensorSpec(shape=(None,), dtype=tf.int32, name=None)
        >>> [y.numpy().tolist() for _, y in ds]
        [[0, 0], [1]]
        >>> train, val = npyio.dataset_from_directory(
        ...     "ram://doc/fromdir", label_mode="categorical", batch_size=2,
        ...     validation_split=0.34, subset="both", seed=1)
        Found 3 files belonging to 2 classes.
        Using 2 files for training.
        Using 1 files for validation.
        >>> len(train.file_paths), len(val.file_paths)
        (2, 1)
        >>> val.element_spec[1]
        TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)
    """
    # the arguments first, before the (possibly long) walk, as Keras
    labels, values = _label_arguments(labels, label_mode, class_names)
    read = ReadOptions(
        dtype=dtype,
        shape=shape,
        crop=crop,  # type: ignore[arg-type]  # its check makes a Crop of it
        backend=backend,
        ignore_errors=ignore_errors,
    )
    loader = LoaderOptions(
        batch_size=batch_size,
        drop_remainder=drop_remainder,
        shuffle=shuffle,
        seed=seed,
        shard=shard,
        num_parallel_calls=num_parallel_calls,
        deterministic=deterministic,
        prefetch=prefetch,
        with_paths=with_paths,
        padding_value=padding_value,
    )
    split = SplitOptions(validation_split=validation_split, subset=subset)
    options = DatasetOptions(read, loader, split)
    directory = _existing_directory(directory)
    wanted = None if labels is None else ("inferred" if values is None else values)
    index = index_directory(directory, wanted, class_names, follow_links)
    _check_label_mode(index, values, label_mode)
    if verbose:
        _print_found(index, options.split)
    # class folders: the split is stratified, every class in its proportion in each subset
    strata = index.labels if isinstance(wanted, str) else None
    plans = plan_dataset(index.paths, index.labels, options, strata)
    return _build_subsets(plans, label_mode, index.class_names)


def _build_subsets(
    plans: DatasetPlan | tuple[DatasetPlan, DatasetPlan],
    label_mode: str | None,
    names: list[str] | None,
) -> tf.data.Dataset | tuple[tf.data.Dataset, tf.data.Dataset]:
    """The dataset of each plan (the training and validation subsets of ``subset="both"``)."""
    if isinstance(plans, tuple):
        # as Keras: the validation subset of "both" is not shuffled
        loader = dataclasses.replace(plans[1].loader, shuffle=False)
        plans = (plans[0], dataclasses.replace(plans[1], loader=loader))
        return tuple(_build(p, label_mode, names) for p in plans)
    return _build(plans, label_mode, names)


def _label_arguments(
    labels: object, label_mode: str | None, class_names: Sequence[str] | None
) -> tuple[object, np.ndarray | None]:
    """``labels``, checked with ``label_mode`` and ``class_names`` (None when ``label_mode`` is
    None, as Keras), and the label values when they are given as a list.

    Raises:
        ValueError: for an unknown ``label_mode``, ``labels`` of another kind, or
            ``class_names`` without inferred labels, or that are not a list of names.
    """
    if label_mode not in LABEL_MODES:
        raise ValueError(
            "label_mode must be 'int', 'categorical', 'binary' or None, "
            f"got label_mode={label_mode!r}"
        )
    explicit = labels is not None and not (isinstance(labels, str) and labels == "inferred")
    if explicit and (
        isinstance(labels, (str, bytes)) or not isinstance(labels, (list, tuple, np.ndarray))
    ):
        raise ValueError(
            "labels must be 'inferred' (from the class subdirectories), None (no labels), or "
            f"a list of numbers, one per {SUFFIX} file, got labels={short(labels)}"
        )
    if class_names is not None:
        if labels is None or explicit or label_mode is None:
            raise ValueError(
                "class_names needs labels='inferred' and a label_mode (it selects and orders "
                f"the class subdirectories), got labels={short(labels)}, "
                f"label_mode={label_mode!r}"
            )
        if isinstance(class_names, (str, bytes)) or not all(
            isinstance(n, str) for n in class_names
        ):
            raise ValueError(
                f"class_names must be a list of subdirectory names, got {class_names!r:.200}"
            )
    if label_mode is None:  # as Keras: no labels, whatever ``labels`` says
        return None, None
    return labels, keras_labels(labels) if explicit and labels is not None else None


def _existing_directory(directory: PathSpec) -> str:
    """``directory`` as a path, checked to be a directory of loose files.

    Raises:
        ValueError: naming it, when it does not exist, is not a directory, or is a pack (its
            shards would be read as files, a whole shard per element).
    """
    path = one_path(directory, "directory")
    if not isdir(path):
        why = "is not a directory" if exists(path) else "does not exist"
        raise ValueError(f"directory: {path!r} {why}")
    if is_packed(path):
        raise ValueError(
            f"directory: {path!r} is a pack (npyio.pack's output): read it with "
            f"npyio.dataset({path!r}), which takes batch_size, shuffle, validation_split "
            "and subset too"
        )
    return path


def _check_label_mode(index: Index, values: np.ndarray | None, label_mode: str | None) -> None:
    """What ``"binary"`` and ``"categorical"`` need of the classes and of given label values.

    Raises:
        ValueError: for ``"binary"`` without exactly two classes, or given labels that are
            not 0 .. C-1 (Keras would silently yield all-zero one-hot vectors).
    """
    names = index.class_names
    if label_mode == "binary" and names is not None and len(names) != 2:
        raise ValueError(
            f"label_mode='binary' needs exactly 2 classes, got {len(names)}: {_listed(names)}"
        )
    if values is not None and label_mode in ("categorical", "binary"):
        distinct = np.unique(values)
        if not np.array_equal(distinct, np.arange(len(distinct))):
            raise ValueError(
                f"labels: label_mode={label_mode!r} needs the labels to be 0 .. C-1, where C "
                f"is the number of distinct labels ({len(distinct)}), got distinct labels "
                f"{_listed([str(v) for v in distinct.tolist()])}"
            )


def _print_found(index: Index, split: SplitOptions) -> None:
    """What was found, and the split, in Keras's words."""
    n = len(index.paths)
    if index.labels is None:
        print(f"Found {n} files.")
    else:
        print(f"Found {n} files belonging to {len(index.class_names or ())} classes.")
    if split.validation_split is not None:
        n_val = int(split.validation_split * n)
        if split.subset in ("training", "both"):
            print(f"Using {n - n_val} files for training.")
        if split.subset in ("validation", "both"):
            print(f"Using {n_val} files for validation.")


def _build(
    plan: DatasetPlan, label_mode: str | None, class_names: list[str] | None
) -> tf.data.Dataset:
    def encode(ds: tf.data.Dataset) -> tf.data.Dataset:
        return _encode_labels(ds, str(label_mode), len(class_names or ()))

    encoded = label_mode is not None and class_names is not None
    ds = build(plan, encode if encoded else None)
    # Keras's attributes: a plain tf.data.Dataset that also says what it holds
    ds.class_names = class_names
    ds.file_paths = list(plan.file_paths)
    return ds
