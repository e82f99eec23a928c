"""`fnrun serve` over TLS and mutual TLS on TCP, and `run --server` reaching it
(FNRUN_SERVER_CA, FNRUN_SERVER_CERT, FNRUN_SERVER_KEY). Certificates are made here, for the test."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, snapshot, write_package
from testing.serving import Server, free_port

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
LABEL = "fnrun-test/label:v1"


def _issue(subject: str, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None, server: bool = False,
           ca: bool = False) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, issuer_key = issuer if issuer is not None else (name, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(hours=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


def _write(directory: Path, name: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> tuple[Path, Path]:
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    ca_cert, ca_key = _issue("fnrun test CA", None, ca=True)
    issuer = (ca_cert.subject, ca_key)
    ca_path, _ = _write(tmp_path, "ca", ca_cert, ca_key)
    server_cert, server_key = _write(tmp_path, "server", *_issue("fnrun serve", issuer, server=True))
    client_cert, client_key = _write(tmp_path, "client", *_issue("porch-server", issuer))
    return {"ca": ca_path, "server.crt": server_cert, "server.key": server_key, "client.crt": client_cert, "client.key": client_key}


def _credentials(pki: dict[str, Path], client: bool) -> grpc.ChannelCredentials:
    pair = (pki["client.key"].read_bytes(), pki["client.crt"].read_bytes()) if client else (None, None)
    return grpc.ssl_channel_credentials(pki["ca"].read_bytes(), *pair)


def test_tls_serves_a_client_that_trusts_its_ca_and_run_reaches_it(test_images: None, pki: dict[str, Path], tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    running = Server("--no-cache", "--tls-cert", str(pki["server.crt"]), "--tls-key", str(pki["server.key"]),
                     address=address, credentials=_credentials(pki, client=False))
    try:
        assert running.health() == 1
        root = write_package(tmp_path / "pkg", {"app.yaml": deployment("web")})
        result = fnrun("run", str(root), "--image", LABEL, "--server", address, "--", "tier=tls",
                       env={**NO_ENGINE, "FNRUN_SERVER_CA": str(pki["ca"])})
        assert result.code == 0, result.stderr
        assert "tier: tls" in (root / "app.yaml").read_text()
        before = snapshot(root)
        plain = fnrun("run", str(root), "--image", LABEL, "--server", address, "--", "tier=plain", env=NO_ENGINE)
        assert_one_line_error(plain, address, "did not answer", code=4)  # plaintext to a TLS server
        assert snapshot(root) == before
    finally:
        code, stderr = running.stop()
    assert code == 0 and "(TLS)" in stderr, stderr


def test_mutual_tls_refuses_a_client_without_a_certificate(test_images: None, pki: dict[str, Path], tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    running = Server("--no-cache", "--tls-cert", str(pki["server.crt"]), "--tls-key", str(pki["server.key"]), "--client-ca", str(pki["ca"]),
                     address=address, credentials=_credentials(pki, client=True))
    try:
        assert running.health() == 1
        root = write_package(tmp_path / "pkg", {"app.yaml": deployment("web")})
        without = fnrun("run", str(root), "--image", LABEL, "--server", address, "--", "tier=x", env={**NO_ENGINE, "FNRUN_SERVER_CA": str(pki["ca"])})
        assert_one_line_error(without, address, code=4)
        with_cert = fnrun("run", str(root), "--image", LABEL, "--server", address, "--", "tier=mtls",
                          env={**NO_ENGINE, "FNRUN_SERVER_CA": str(pki["ca"]), "FNRUN_SERVER_CERT": str(pki["client.crt"]),
                               "FNRUN_SERVER_KEY": str(pki["client.key"])})
        assert with_cert.code == 0, with_cert.stderr
        assert "tier: mtls" in (root / "app.yaml").read_text()
    finally:
        code, stderr = running.stop()
    assert code == 0, stderr


def test_half_a_client_certificate_is_refused(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"app.yaml": deployment("web")})
    result = fnrun("run", str(root), "--image", LABEL, "--server", "127.0.0.1:1", env={**NO_ENGINE, "FNRUN_SERVER_CERT": "/x.crt"})
    assert_one_line_error(result, "FNRUN_SERVER_CERT and FNRUN_SERVER_KEY go together", code=2)


def test_a_half_given_server_key_pair_is_refused() -> None:
    result = fnrun("serve", "--tls-cert", "/nonexistent.crt")
    assert_one_line_error(result, "--tls-cert and --tls-key go together", code=2)
