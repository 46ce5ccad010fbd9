"""Decoding backends: how one file path becomes one tensor, and the public readers.

- ``"graph"``: npyio's pure-TensorFlow parser (`npyio._graph.decode`). The default.
- ``"tfio"``: tensorflow-io's C++ numpy op (`npyio._read.tfio`), imported only when asked
  for; files it cannot decode correctly fall back to the graph parser (table in README.md).
- ``"py_function"``: ``tf.py_function`` around ``np.load`` (`npyio._read.py_function`), the
  classic approach, kept for comparison and as an escape hatch. It runs Python per element
  (holding the GIL), and a graph that uses it cannot be serialized: it fails on tf.data service
  workers, in other processes and on TPU hosts.

A backend is chosen once, by `reader`, with the size limits: every backend applies them.
"""
