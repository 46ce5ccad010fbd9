"""The native room's public names: what the readers integrate against."""

from __future__ import annotations

import npyio._native as native


def test_the_room_exports_what_the_readers_use():
    assert set(native.__all__) == {
        "NativeStatus",
        "batch_dataset",
        "build",
        "ops",
        "preload",
        "read_file",
        "read_files",
        "read_ranges",
        "read_rows",
        "read_windows",
        "status",
    }
    for name in native.__all__:
        assert callable(getattr(native, name))
