"""The I/O layer: what reads and writes files, under the grammar of `npyio._format`.

Listing a pack's directory, reading heads (a file's first bytes and size, many files on a
thread pool), an ``.npz`` member's header, the first file's spec, and writing and hashing a
pack's shards. TF-free: local paths are read with ``os``; any other path (``gs://``,
``ram://``, ...) with ``tf.io.gfile``, and TensorFlow is imported only then (`files.gfile`).
"""
