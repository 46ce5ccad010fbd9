"""A dependency-free progress display: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts work done out of ``total`` and shows it on ``stream`` (stderr by default).

    On a terminal it redraws one bar line; elsewhere it prints a plain line every 10%.
    """

    def __init__(
        self, total: int, label: str, stream: TextIO | None = None, *, enabled: bool = True
    ) -> None:
        self.enabled = enabled
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.done = 0
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._next_tenth = 1

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.tty:
            now = time.perf_counter()
            if now - self._last_draw > 0.1 or self.done >= self.total:
                self._last_draw = now
                self._draw()
        elif self.done * 10 >= self._next_tenth * self.total:
            self._next_tenth = self.done * 10 // self.total + 1
            self.stream.write(f"{self.label}: {self.done}/{self.total}\n")
            self.stream.flush()

    def _draw(self) -> None:
        frac = min(self.done / self.total, 1.0)
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        rate = self.done / max(time.perf_counter() - self._start, 1e-9)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} ({rate:,.0f}/s)")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
