"""A griffe extension for npyio's two docstring habits that Google style has no form for.

mkdocstrings parses docstrings as Google style, which knows ``Examples:`` (npyio writes
``Example:``) and one parameter per item (npyio groups parameters that share a description:
``dtype, shape: ...``, its names possibly wrapped over lines ending with a comma). This
extension rewrites both, before parsing, into what Google style reads: ``Examples:``, and one
item per name with the shared description. Anything else that does not parse still fails the
strict build.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$")
_SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters):\s*$")
_NAMES = re.compile(r"^\w+(,\s*\w+)+$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _split_grouped(lines: list[str], start: int, item: int) -> tuple[list[str], int]:
    """The item at ``lines[start]`` (indented ``item``), one per name, and the next index."""
    header, i = lines[start].strip(), start + 1
    while ": " not in header and header.endswith(",") and i < len(lines):
        header, i = f"{header} {lines[i].strip()}", i + 1
    body = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > item):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():  # blank lines after the item stay after it
        body.pop()
        i -= 1
    names, _, description = header.partition(": ")
    if not _NAMES.match(names):
        return lines[start:i], i
    pad = " " * item
    out = []
    for name in (n.strip() for n in names.split(",")):
        out += [f"{pad}{name}: {description}", *body]
    return out, i


def rewrite(text: str) -> str:
    """``text`` with ``Example:`` as ``Examples:`` and grouped parameters split, one per name.

    Example:
        >>> print(rewrite("Args:\\n    a, b: Both.\\n        More.\\n\\nExample:\\n    Code."))
        Args:
            a: Both.
                More.
            b: Both.
                More.
        <BLANKLINE>
        Examples:
            Code.
    """
    lines = text.splitlines()
    out: list[str] = []
    i, section = 0, -1
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) <= section:
            section = -1
        if m := _EXAMPLE.match(line):
            out.append(f"{m.group(1)}Examples:")
        elif m := _SECTION.match(line):
            section = len(m.group(1))
            out.append(line)
        elif section >= 0 and line.strip() and "," in line.split(":", 1)[0]:
            item, i = _split_grouped(lines, i, _indent(line))
            out += item
            continue
        else:
            out.append(line)
        i += 1
    return "\n".join(out)


class NpyioDocstrings(Extension):
    """Rewrites every object's docstring with `rewrite` when it is loaded."""

    def on_object(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
