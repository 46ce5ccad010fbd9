"""TensorFlow's start-up log, kept off the command line's stderr.

TensorFlow's C++ libraries log as they load: ``cudart_stub.cc ... Could not find cuda drivers``
and ``cuInit`` errors on a machine without a GPU, oneDNN notes. ``TF_CPP_MIN_LOG_LEVEL=3`` hides
what is logged once absl's log is set up, but not the lines written before (absl prints them
whatever the level, after ``WARNING: All log messages before absl::InitializeLog() is called are
written to STDERR``). So, unless the user set ``TF_CPP_MIN_LOG_LEVEL`` (then nothing here
applies), `quiet_tensorflow` sets it to 3 and makes the first ``import tensorflow`` run with
file descriptor 2 pointed at a temporary file; lines in TensorFlow's log format are dropped and
anything else (a Python warning, an error) is written back to stderr. npyio's own messages are
never touched: they come after the import, or from Python before it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["LEVEL", "drop_log_lines", "quiet_tensorflow"]

#: The level set when the user set none: errors hidden too (``cuInit`` failures are errors).
LEVEL = "3"
#: A line of TensorFlow's C++ log (``I0000 00:00:1796310073.862253    6045 port.cc:153] ...``,
#: or ``W1203 15:04:05.123456 ...``),
#: absl's note before its first lines, and the second line of the CPU feature note.
_LOG_LINE = re.compile(
    r"[IWEF]\d{4} [\d:.]+\s+\d+ [^\s:]+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called"
    r"|To enable the following instructions: .*rebuild TensorFlow"
)


def drop_log_lines(text: str) -> str:
    """``text`` without TensorFlow's log lines.

    Example:
        >>> drop_log_lines(
        ...     "I0000 00:00:1.5    61 cudart_stub.cc:31] Could not find cuda drivers\\n"
        ...     "UserWarning: kept\\n"
        ... )
        'UserWarning: kept\\n'
    """
    return "".join(line for line in text.splitlines(True) if not _LOG_LINE.match(line))


class _QuietLoader(importlib.abc.Loader):
    """The loader of ``tensorflow``, run with file descriptor 2 captured."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # everything else is the real loader's
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile(mode="w+b") as captured:
            os.dup2(captured.fileno(), 2)
            try:
                self._loader.exec_module(module)
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                # the module is the real loader's from now on (importlib.reload, resources)
                module.__loader__ = self._loader
                if module.__spec__ is not None:
                    module.__spec__.loader = self._loader
                captured.seek(0)
                sys.stderr.write(drop_log_lines(captured.read().decode("utf-8", "replace")))


class _QuietImport(importlib.abc.MetaPathFinder):
    """Finds ``tensorflow`` once, as the other finders do, with `_QuietLoader` around its
    loader; then leaves ``sys.meta_path``."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _QuietLoader(spec.loader)
        return spec


def quiet_tensorflow() -> bool:
    """Sets ``TF_CPP_MIN_LOG_LEVEL`` to `LEVEL` and makes TensorFlow's first import quiet,
    unless the user set the variable. Call it before TensorFlow can be imported.

    Returns:
        Whether it did (False: the user's level is kept, and TensorFlow logs as it likes).
    """
    if "TF_CPP_MIN_LOG_LEVEL" in os.environ:
        return False
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = LEVEL
    if "tensorflow" not in sys.modules and not any(
        isinstance(f, _QuietImport) for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _QuietImport())
    return True
