"""npyio's test suite (a package so that the shared helpers import as ``tests._npy_testing``)."""
