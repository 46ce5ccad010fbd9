"""The ``.npz`` (zip) layout as npyio reads it: its constants, the error wording, and the checks
of a member's directory entry (`member_info`, on a ``zipfile.ZipFile`` the caller opened). No
I/O here: `npyio._io.npz` reads a member's header in Python, and the graph reader in
`npyio._graph.zip` uses the same constants and words.
"""

from __future__ import annotations

import zipfile

from npyio.errors import NpyFormatError

__all__ = ["member_info"]

EOCD_SIG, EOCD_LEN = b"PK\x05\x06", 22
MAX_COMMENT = 0xFFFF
LOCATOR_SIG, LOCATOR_LEN = b"PK\x06\x07", 20
EOCD64_SIG, EOCD64_LEN = b"PK\x06\x06", 56
CENTRAL_SIG, CENTRAL_LEN = b"PK\x01\x02", 46
LOCAL_SIG, LOCAL_LEN = b"PK\x03\x04", 30
ZIP64_EXTRA = 0x0001
STORED, DEFLATED = 0, 8
#: Compression methods named in error messages (APPNOTE 4.4.5).
METHOD_NAMES = {
    1: "shrunk",
    6: "imploded",
    9: "deflate64",
    12: "bzip2",
    14: "lzma",
    93: "zstandard",
    95: "xz",
    98: "ppmd",
    99: "AE-x encrypted",
}
#: Member names listed in a missing-member error.
MAX_LISTED = 10
#: gzip member header: magic, CM=8 (deflate), no flags, mtime 0, XFL 0, OS 255 (unknown).
GZIP_HEADER = b"\x1f\x8b\x08\x00" + b"\x00" * 4 + b"\x00\xff"


# --- error wording, shared by the graph parser and the Python-side inspect_npz --------------
def not_a_zip() -> str:
    return (
        "not a zip archive -- expected an end of central directory record (50 4b 05 06) "
        "in its last 65557 bytes, got none"
    )


def bad_zip64_record(where: str, size: str) -> str:
    return (
        "corrupt zip64 end of central directory -- expected a record (50 4b 06 06) "
        f"at byte {where} of {size}, got none"
    )


def directory_past_end(end: str, limit: str) -> str:
    return (
        "central directory runs past its end record -- expected it to end by byte "
        f"{limit}, got {end}"
    )


def bad_entry(where: str) -> str:
    return (
        "corrupt central directory -- expected an entry (50 4b 01 02) that fits in the "
        f"directory at byte {where}, got none"
    )


def no_member(names: str, key: str) -> str:
    return f"no such member in the archive -- expected one of {names}, got {key}"


def encrypted() -> str:
    return "member is encrypted -- expected an unencrypted member, got flag bit 0 set"


def bad_method(got: str) -> str:
    return (
        "unsupported compression method -- expected 0 (stored) or 8 (deflated, as "
        f"np.savez_compressed writes), got {got}"
    )


def bad_zip64_extra(need: str, got: str) -> str:
    return f"zip64 extra field (0x0001) is missing or short -- expected {need} bytes, got {got}"


def bad_local(where: str) -> str:
    return f"corrupt local header -- expected a local file header (50 4b 03 04) at byte {where}"


def local_name(expected: str, got: str) -> str:
    return f"local header names another member -- expected {expected}, got {got}"


def data_past_end(end: str, size: str) -> str:
    return (
        f"member data runs past the end of the archive -- expected at most {size} bytes, got {end}"
    )


def stored_sizes(csize: str, usize: str) -> str:
    return (
        "stored member's sizes differ -- expected equal compressed and uncompressed sizes, "
        f"got {csize} and {usize}"
    )


def inflated_size(expected: str, got: str) -> str:
    return f"inflated member has the wrong size -- expected {expected} bytes, got {got}"


def method_text(method: int) -> str:
    name = METHOD_NAMES.get(method)
    return f"{method} ({name})" if name else str(method)


# --- graph parser -----------------------------------------------------------------------------
def member_info(zf: zipfile.ZipFile, key: str, where: str) -> zipfile.ZipInfo:
    names = zf.namelist()
    for candidate in (key, key + ".npy"):
        if candidate in names:
            info = zf.getinfo(candidate)
            break
    else:
        shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
        shown += ", ..." if len(names) > MAX_LISTED else ""
        raise NpyFormatError(where, no_member(shown or "nothing", repr(key)))
    if info.flag_bits & 1:
        raise NpyFormatError(where, encrypted())
    if info.compress_type not in (STORED, DEFLATED):
        raise NpyFormatError(where, bad_method(method_text(info.compress_type)))
    return info
