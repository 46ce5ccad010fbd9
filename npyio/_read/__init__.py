"""Readers: how one part of an element (a file, or a member of an ``.npz`` archive) becomes
its tensor (`npyio._read.part`), by backend (`npyio._read.backends`), and the public readers
(`npyio._read.api`). This module itself imports nothing, so that TF-free planning can name the
backends."""

#: The backends, by name (`npyio._read.backends.reader`).
BACKENDS = ("graph", "tfio", "py_function")
