"""The Python reader of local ``.npy`` files, which `npyio.pack` reads local sources with.

A pack is about reading every file once, and on local files a pair of small files read in
Python costs a fraction of tf.data's per-file path (bench/README.md, "Packing"). This reader
gives numpy arrays in the calling thread, so it is no tf.data backend (`npyio._read.backends`),
but it reads a part as they do: each file through `check_file` (`npyio verify`'s reader and
checks: the limits, the header grammar, the size) and its spec's file layout
(`npyio._format.spec.Layout.reason`), so a bad or odd file is refused naming it;
`npy.payload_array` is numpy's reading of the payload, with bools as the graph decodes them.
``tests/read/test_local.py`` holds it to the backends' conformance cases
(``tests/read/test_backends.py``).
"""

from __future__ import annotations

import numpy as np

from npyio._format import npy
from npyio._format.header import Checked, HeaderCache
from npyio._format.spec import Spec
from npyio._io.header import check_file
from npyio.errors import NpyFormatError

__all__ = ["LocalReader"]


class LocalReader:
    """Reads one part's local files as ``spec`` says they load.

    It keeps the headers it has read (a dataset's files share a few) and ``spec.reason`` of
    each, so that a part's files are judged once per distinct header.
    """

    def __init__(self, spec: Spec, name: str | None = None) -> None:
        """``name`` (the part's, as ``"inputs"``) ends the reason of a refused file."""
        self.spec = spec
        self.name = name
        self._cache: HeaderCache = {}
        self._verdicts: dict[npy.NpyHeader, str | None] = {}

    def reason(self, checked: Checked) -> str | None:
        """Why a checked file is bad or does not load as the spec (None: it does)."""
        if checked.reason is not None or checked.header is None:
            return checked.reason
        if checked.header not in self._verdicts:
            self._verdicts[checked.header] = self.spec.file.reason(checked.header, checked.path)
        return self._verdicts[checked.header]

    def error(self, checked: Checked, reason: str) -> NpyFormatError:
        """The error that refuses a checked file, naming it (and the part, when named)."""
        return NpyFormatError(
            checked.path, reason if self.name is None else f"{reason} ({self.name})"
        )

    def read(self, path: str) -> np.ndarray:
        """The array in the file ``path``, in native byte order, as the backends decode it.

        Raises:
            NpyFormatError: naming the file, for a file that is bad or does not load as the
                spec says.
        """
        checked = check_file(path, self._cache, self.spec.limits, data=True)
        reason = self.reason(checked)
        if reason is not None or checked.header is None:
            raise self.error(checked, reason or "no header")
        array = npy.payload_array(checked.header, checked.data)
        return array.astype(array.dtype.newbyteorder("="), copy=False)  # as the backends give it
