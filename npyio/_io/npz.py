"""An ``.npz`` member's header, read in Python (``zipfile`` over `npyio._io.files.open_read`);
the layout and the words are `npyio._format.npz`'s."""

from __future__ import annotations

import os
import zipfile
import zlib
from typing import BinaryIO, cast

from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE, member_name, one_path
from npyio._format.header import Limits
from npyio._format.npz import member_info
from npyio._io.files import open_read
from npyio.errors import NpyFormatError

__all__ = ["inspect_npz_prefix"]


def inspect_npz_prefix(
    path: str | os.PathLike[str], key: str, limits: Limits = Limits()
) -> tuple[npy.NpyHeader, bytes]:
    """The header of member ``key`` and its first ``data_offset`` bytes, read in Python through
    ``tf.io.gfile`` and ``zipfile`` (only the member's header is inflated), under ``limits``'
    ``max_header_size``, as the graph reader applies it.

    Raises:
        NpyFormatError: naming ``path[key]``, for a missing archive or member, an archive
            zipfile cannot read, an encrypted member, a compression method other than stored
            or deflated, compressed data that does not inflate, or a bad ``.npy`` header (one
            longer than ``max_header_size`` included).
    """
    path = one_path(path)
    where = member_name(path, key)
    try:
        with open_read(path) as f, zipfile.ZipFile(f) as zf:
            info = member_info(zf, key, where)
            with zf.open(info) as member:
                header = npy.read_header(
                    cast(BinaryIO, member), where, max_header_size=limits.max_header_size
                )
            with zf.open(info) as member:
                raw = member.read(header.data_offset)
    except FileNotFoundError as e:
        raise NpyFormatError(path, NO_SUCH_FILE) from e
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise NpyFormatError(where, f"not a readable zip archive -- {e}") from e
    except zlib.error as e:  # a deflated member whose data does not inflate
        raise NpyFormatError(where, f"its compressed data is corrupt -- {e}") from e
    return header, raw
