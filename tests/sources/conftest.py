"""Fixtures of ``tests/sources/test_pack_write.py`` (what a pack yields) and ``test_pack_plan.py``
(how a pack is planned): a tree of pairs, and its pack; and ``row_backend``, each reader of row
ranges that rows and packs read local files through."""

from __future__ import annotations

from pathlib import Path

import pytest

import npyio
from tests.sources.test_pack_write import make_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("tree"))


@pytest.fixture(scope="module")
def packed(tree) -> str:
    """x, y packed into shards of 5 rows (8 shards, the last short)."""
    out = str(tree / "packed")
    npyio.pack(str(tree / "x"), str(tree / "y"), out=out, shard_size=5 * 48)
    return out


@pytest.fixture(params=["graph", "native"])
def row_backend(request, monkeypatch) -> str:
    """Rows and packs of local files read through this backend's reader of row ranges, in this
    process and in the child processes `tests.pipeline.test_shuffle._python` starts."""
    from npyio._sources import rows
    from tests.pipeline.test_shuffle import ROW_BACKEND_ENV

    monkeypatch.setattr(rows, "_BACKEND", request.param)
    monkeypatch.setenv(ROW_BACKEND_ENV, request.param)
    return request.param
