"""A throwaway certificate authority and a server certificate for Google's storage host names.

Made with the ``openssl`` command line (no Python dependency), in a directory the caller owns
and deletes. TensorFlow's curl trusts the authority through ``CURL_CA_BUNDLE``; nothing else
does, and the key never leaves that directory.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The names TensorFlow's GCS client connects to (fixed in its binary), and ``localhost``.
HOST_NAMES = (
    "www.googleapis.com",
    "storage.googleapis.com",
    "oauth2.googleapis.com",
    "metadata.google.internal",
    "localhost",
)

# EC keys: a P-256 key is made in milliseconds (RSA takes ~100 ms) and every TLS handshake the
# fake server does (one per TensorFlow request: its curl handles share no connections) is cheaper.
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class Certs:
    """Paths of the authority's certificate (the bundle clients trust) and the server's pair."""

    ca: Path
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    run = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {run.stderr.strip()}")


def make_certs(directory: Path, names: tuple[str, ...] = HOST_NAMES) -> Certs:
    """Write ``ca.pem``, ``server.pem`` and ``server.key`` into ``directory``; return their paths.

    The server certificate names every entry of ``names`` and the IP 127.0.0.1 as subject
    alternative names and is valid for two days. Raises RuntimeError if openssl is missing or
    fails."""
    if shutil.which("openssl") is None:
        raise RuntimeError("the openssl command is not installed")
    directory.mkdir(parents=True, exist_ok=True)
    _openssl(
        "req", "-x509", *_KEY, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=npyio throwaway test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )  # fmt: skip
    _openssl(
        "req", *_KEY, "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={names[0]}",
        cwd=directory,
    )  # fmt: skip
    san = ",".join([*(f"DNS:{name}" for name in names), "IP:127.0.0.1"])
    (directory / "server.ext").write_text(
        f"subjectAltName={san}\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-set_serial", "1", "-days", "2", "-extfile", "server.ext", "-out", "server.pem",
        cwd=directory,
    )  # fmt: skip
    return Certs(
        ca=directory / "ca.pem", cert=directory / "server.pem", key=directory / "server.key"
    )
