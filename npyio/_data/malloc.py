"""An opt-in setting of glibc's allocator for large arrays: `tune_malloc`.

TensorFlow's CPU tensors come from ``malloc``. glibc serves a block of at least its *mmap
threshold* with a fresh ``mmap`` and unmaps it when freed, and gives freed memory at the top of
a heap above its *trim threshold* back to the kernel; either way the next block of that size is
fresh memory, zero-filled by the kernel page by page as it is first touched (a page fault per
4 KiB). A batch of large arrays (8 x 4 MiB is 32 MiB, past the most glibc's own threshold
adapts to) then costs a fault per page of every buffer of its path: the file's bytes, the
decoded tensor, the batch. Raising the thresholds keeps freed blocks in the process to be
reused (bench/README.md, "Where the time goes", has the measurements).

It is not on by default, because the memory is not free: freed blocks stay in the process, up
to ``trim_threshold`` per malloc arena beyond ``top_pad``, instead of returning to the system.
TF-free.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["MMAP_THRESHOLD", "TOP_PAD", "TRIM_THRESHOLD", "tune_malloc"]

# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

#: `tune_malloc`'s defaults: those of issue 34's ``MALLOC_*_`` environment variables.
MMAP_THRESHOLD = 256 << 20
TRIM_THRESHOLD = 1 << 30
TOP_PAD = 256 << 20


def tune_malloc(
    mmap_threshold: int = MMAP_THRESHOLD,
    trim_threshold: int = TRIM_THRESHOLD,
    top_pad: int = TOP_PAD,
) -> None:
    """Makes glibc's allocator keep freed blocks for reuse: faster reading of large arrays,
    for more memory held. Opt-in, for the whole process, from the call on (whatever was
    imported before); the same as setting ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``
    and ``MALLOC_TOP_PAD_`` before Python starts.

    Its cost: up to ``trim_threshold`` bytes of freed memory per malloc arena (glibc makes up
    to 8 per core) stay in the process instead of going back to the system, and every heap
    grows by ``top_pad`` at a time. Measure before keeping it: on small arrays it gains nothing.

    Args:
        mmap_threshold: blocks at least this large get an ``mmap`` of their own (and are
            unmapped when freed); smaller ones come from the heap and are reused.
        trim_threshold: free memory at a heap's top beyond this goes back to the system.
        top_pad: extra bytes each time a heap grows.

    Raises:
        ValueError: a value that is not a non-negative C int.
        OSError: the C library has no ``mallopt`` (not glibc: musl, macOS), or refused a value
            (glibc caps the mmap threshold).

    Example:
        >>> import npyio
        >>> npyio.tune_malloc()  # doctest: +SKIP
    """
    values = {
        "mmap_threshold": mmap_threshold,
        "trim_threshold": trim_threshold,
        "top_pad": top_pad,
    }
    for name, value in values.items():
        if not isinstance(value, int) or not 0 <= value < 2**31:
            raise ValueError(f"tune_malloc: {name} -- expected an int in [0, 2**31), got {value!r}")
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        raise OSError("tune_malloc: the C library has no mallopt -- expected glibc")
    params = {"mmap_threshold": _M_MMAP_THRESHOLD, "trim_threshold": _M_TRIM_THRESHOLD,
              "top_pad": _M_TOP_PAD}  # fmt: skip
    for name, value in values.items():
        if mallopt(ctypes.c_int(params[name]), ctypes.c_int(value)) != 1:
            raise OSError(f"tune_malloc: glibc refused {name} -- got {value!r}")
