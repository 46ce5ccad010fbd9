"""A fake Google Cloud Storage for tests: TensorFlow's own GCS client (``gs://`` paths through
``tf.io.gfile`` and ``tf.io.read_file``) talks to an in-memory server inside a sealed network
namespace, where only loopback exists.

- `tests.gcs.sandbox`: `GcsSandbox`, the namespace and everything in it, driven from a test;
- `tests.gcs.fixtures`: the pytest fixtures ``gcs_sandbox``, ``gcs`` and ``gcs_worker``;
- `tests.gcs.control`: the control client (also usable inside the namespace: `connect`);
- `tests.gcs.server`: the fake server (latency, fault rules, counters);
- `tests.gcs.supervisor`: the process inside the namespace; `tests.gcs.worker`: a TensorFlow
  process that runs code sent to it; `tests.gcs.tls`: the throwaway CA.
"""
