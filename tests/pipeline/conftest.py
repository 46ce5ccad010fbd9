"""The fixtures of ``tests/sources/conftest.py`` (a tree of pairs, its pack, ``row_backend``),
which the loader's tests read every source kind with."""

from tests.sources.conftest import packed, row_backend, tree

__all__ = ["packed", "row_backend", "tree"]
