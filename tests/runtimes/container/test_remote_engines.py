"""Remote engines: DOCKER_HOST=tcp:// with TLS client certificates, and ssh://.

The tests start a second dockerd of their own (engine_fixtures: own storage, socket and bridge)
listening on 127.0.0.1 with --tlsverify and certificates made here with `openssl`, and an sshd on
127.0.0.1 whose sessions reach that dockerd. The engine runs in a mount namespace of its own where
the directory holding the test packages is an empty tmpfs: exactly what an engine on another
machine sees. A bind mount of /local fails there, so a function that lists /local proves that
fnrun uploaded it.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.remote import is_remote, transport, uploads
from orchestrator.runtimes.container.settings import LABEL_FUNCTION
from testing.engine_fixtures import copy_images, dockerd_service, stop
from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, load, snapshot, write_package

PROBE, IDENTITY, SLEEP = "fnrun-test/probe:v1", "fnrun-test/identity:v1", "fnrun-test/sleep:v1"
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: fnrun-test/probe:v1\n"


@pytest.mark.parametrize(
    ("host", "remote"),
    [
        ("unix:///var/run/docker.sock", False),
        ("tcp://127.0.0.1:2376", False),
        ("tcp://localhost:2375", False),
        ("tcp://[::1]:2376", False),
        ("tcp://build.example.com:2376", True),
        ("tcp://10.0.0.5:2375", True),
        ("ssh://me@127.0.0.1:2222", True),  # a VM's forwarded port: its own filesystem
        ("ssh://me@build.example.com", True),
    ],
)
def test_a_remote_engine_is_detected_from_docker_host(host: str, remote: bool) -> None:
    assert is_remote(host) is remote
    assert uploads("auto", host) is remote
    assert uploads("bind", host) is False and uploads("upload", host) is True


def test_the_transport_follows_docker_host_and_tls_verify(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCKER_TLS_VERIFY", raising=False)
    monkeypatch.delenv("DOCKER_CERT_PATH", raising=False)
    assert [transport(h) for h in ("unix:///s", "tcp://h:2375", "ssh://u@h")] == ["unix", "tcp", "ssh"]
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    assert transport("tcp://h:2376") == "tls"
    monkeypatch.delenv("DOCKER_TLS_VERIFY")
    monkeypatch.setenv("DOCKER_CERT_PATH", "/certs")  # TLS without verifying the engine, as the SDK has it
    assert transport("tcp://h:2376") == "tls"


def test_a_bad_mounts_mode_is_one_line(tmp_path: Path) -> None:
    write_package(tmp_path, {"d.yaml": deployment("d")})
    assert_one_line_error(fnrun("run", str(tmp_path), "--mounts", "copy"), "--mounts 'copy'", "bind, upload", code=2)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_certificates(directory: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as DOCKER_CERT_PATH
    wants them (ca.pem, cert.pem, key.pem)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (.ci/setup installs it)")
    directory.mkdir(parents=True)

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=directory, check=True, capture_output=True)

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *key, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=fnrun test CA")
    for name, subject, usage in (("server", "/CN=127.0.0.1", "serverAuth"), ("client", "/CN=fnrun", "clientAuth")):
        (directory / f"{name}.ext").write_text(f"subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage={usage}\n")
        run("req", *key, "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", subject)
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-out", f"{name}-cert.pem", "-days", "2", "-extfile", f"{name}.ext")
    shutil.copy(directory / "client-cert.pem", directory / "cert.pem")
    shutil.copy(directory / "client-key.pem", directory / "key.pem")
    return directory


class Engine:
    """The second dockerd: its private unix socket (for checks) and how fnrun reaches it."""

    def __init__(self, unix: str, tls_env: dict[str, str], hidden: Path) -> None:
        self.unix, self.tls_env, self.hidden = unix, tls_env, hidden

    def leftovers(self) -> list:
        client = docker.DockerClient(base_url=self.unix)
        return client.containers.list(all=True, filters={"label": LABEL_FUNCTION})


@pytest.fixture(scope="module")
def engine(test_images: None) -> Iterator[Engine]:
    root = Path(tempfile.mkdtemp(prefix="fnrun-remote-"))
    hidden = Path(tempfile.mkdtemp(prefix="fnrun-hidden-"))  # the test packages; empty for the engine
    try:
        certs = make_certificates(root / "certs")
        port = free_port()
        tls = [
            "-H", f"tcp://127.0.0.1:{port}", "--tlsverify", "--tlscacert", str(certs / "ca.pem"),
            "--tlscert", str(certs / "server-cert.pem"), "--tlskey", str(certs / "server-key.pem"),
        ]
        for unix in dockerd_service(root, {}, extra=tls, hide=hidden):
            copy_images(docker.DockerClient(base_url=unix, timeout=300), [PROBE, IDENTITY, SLEEP])
            env = {"DOCKER_HOST": f"tcp://127.0.0.1:{port}", "DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": str(certs)}
            yield Engine(unix, env, hidden)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(hidden, ignore_errors=True)


@pytest.fixture
def package(engine: Engine) -> Iterator[Path]:
    """A fresh directory under the one the engine cannot see."""
    path = Path(tempfile.mkdtemp(dir=engine.hidden))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def probe_package(root: Path) -> None:
    write_package(root, {"p/fn.yaml": function_config(PROBE), "p/notes.txt": "x\n", "d.yaml": deployment("d")})


def assert_probe_saw_local(data: dict[str, str]) -> None:
    assert data["localListing"] == "fn.yaml,notes.txt"
    assert data["localWritable"] == "false"
    assert data["uid"] == "65534"


# --- TLS -------------------------------------------------------------------------------------


def test_a_bind_mount_fails_on_the_engine_that_cannot_see_the_package(engine: Engine, package: Path) -> None:
    """The set-up's premise: this engine is as good as on another machine."""
    probe_package(package)
    before = snapshot(package)
    result = fnrun("run", str(package), "--mounts", "bind", env=engine.tls_env)
    assert result.code != 0 and "Traceback" not in result.stderr, result
    assert "bind source path does not exist" in result.stderr, result
    assert snapshot(package) == before


def test_run_over_tls_uploads_local(engine: Engine, package: Path) -> None:
    probe_package(package)
    result = fnrun("run", str(package), "--mounts", "upload", env=engine.tls_env)
    assert result.code == 0, result
    assert_probe_saw_local(load(package / "p/sandbox-probe_configmap.yaml")["data"])
    assert engine.leftovers() == []


def test_the_environment_variable_chooses_upload(engine: Engine, package: Path) -> None:
    probe_package(package)
    result = fnrun("run", str(package), env={**engine.tls_env, "FNRUN_MOUNTS": "upload"})
    assert result.code == 0, result
    assert_probe_saw_local(load(package / "p/sandbox-probe_configmap.yaml")["data"])


def test_render_over_tls_uploads_local(engine: Engine, package: Path) -> None:
    write_package(package, {"Kptfile": KPTFILE, "notes.txt": "x\n", "d.yaml": deployment("d")})
    result = fnrun("render", str(package), "--mounts", "upload", env=engine.tls_env)
    assert result.code == 0, result
    data = load(package / "configmap_sandbox-probe.yaml")["data"]
    assert data["localListing"] == "Kptfile,d.yaml,notes.txt" and data["localWritable"] == "false"


def test_a_read_only_mount_is_uploaded(engine: Engine, package: Path) -> None:
    write_package(package, {"d.yaml": deployment("d"), "data/a.txt": "a\n", "data/b.txt": "b\n"})
    mount = f"type=bind,src={package / 'data'},dst=/local"  # an --image run has no /local of its own
    result = fnrun("run", str(package), "--image", PROBE, "--mounts", "upload", "--mount", mount, env=engine.tls_env)
    assert result.code == 0, result
    data = load(package / "sandbox-probe_configmap.yaml")["data"]
    assert data["localListing"] == "a.txt,b.txt" and data["localWritable"] == "false"


def test_a_writable_mount_is_refused_naming_it(engine: Engine, package: Path) -> None:
    write_package(package, {"d.yaml": deployment("d"), "out/.keep": ""})
    before = snapshot(package)
    mount = f"type=bind,src={package / 'out'},dst=/out,rw=true"
    result = fnrun("run", str(package), "--image", PROBE, "--mounts", "upload", "--mount", mount, env=engine.tls_env)
    assert_one_line_error(result, "writable mount", str(package / "out"), "/out", code=2)
    assert snapshot(package) == before


def test_a_large_resource_list_round_trips_over_tls(engine: Engine, package: Path) -> None:
    """Megabytes each way through non-blocking TLS writes and reads, then the half-close."""
    items = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  v: {'x' * 1000}\n" for i in range(3000))
    write_package(package, {"many.yaml": items.removeprefix("---\n")})
    before = snapshot(package)
    result = fnrun("run", str(package), "--image", IDENTITY, "--mounts", "upload", env=engine.tls_env)
    assert result.code == 0, result
    assert snapshot(package) == before  # identity changes nothing: every byte came back


def test_a_hanging_function_times_out_over_tls(engine: Engine, package: Path) -> None:
    write_package(package, {"d.yaml": deployment("d"), "fn.yaml": function_config(SLEEP, {"seconds": "120"})})
    started = time.monotonic()
    result = fnrun("run", str(package), "--timeout", "3", env=engine.tls_env)
    assert_one_line_error(result, SLEEP, "timed out", code=1)
    assert time.monotonic() - started < 60
    assert engine.leftovers() == []


def test_doctor_reports_tls_and_the_mount_mode(engine: Engine) -> None:
    result = fnrun("doctor", env=engine.tls_env)
    lines = result.stdout.splitlines()
    assert any("tls" in l and "engine" in l for l in lines), result.stdout
    assert any(l.split()[1:2] == ["mounts"] and "bind" in l for l in lines), result.stdout
    upload = fnrun("doctor", "--mounts", "upload", env=engine.tls_env)
    assert any(l.split()[1:2] == ["mounts"] and "upload" in l for l in upload.stdout.splitlines()), upload.stdout
    assert "stdin" not in result.stdout


# --- ssh -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ssh_env(engine: Engine) -> Iterator[dict[str, str]]:
    """An sshd on 127.0.0.1 whose sessions reach the engine (`docker system dial-stdio` with the
    engine's socket as DOCKER_HOST), and the environment for fnrun to reach it as ssh://. The
    user's own ~/.ssh is never touched: an `ssh` first on PATH adds `-F` with this test's config."""
    sshd, ssh, keygen, cli = (shutil.which(n) or f"/usr/sbin/{n}" for n in ("sshd", "ssh", "ssh-keygen", "docker"))
    if not Path(sshd).exists():
        pytest.skip("sshd is not installed (.ci/setup installs openssh-server)")
    if not Path(ssh).exists() or not Path(keygen).exists():
        pytest.skip("the ssh client is not installed (openssh-client)")
    if not Path(cli).exists():
        pytest.skip("no docker CLI for `docker system dial-stdio` at the ssh end")
    if os.geteuid() != 0:
        pytest.skip("sshd needs root here (privilege separation)")
    root = Path(tempfile.mkdtemp(prefix="fnrun-sshd-"))
    process = None
    try:
        for key in ("host_key", "client_key"):
            subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True)
        user, port = getpass.getuser(), free_port()
        (root / "authorized_keys").write_text((root / "client_key.pub").read_text())
        (root / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\nPidFile {root / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {root / 'authorized_keys'}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
            f"KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nAllowUsers {user}\n"
            f"SetEnv DOCKER_HOST={engine.unix}\n"
        )
        host_key = " ".join((root / "host_key.pub").read_text().split()[:2])
        (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key}\n")
        (root / "ssh_config").write_text(
            f"Host *\n  IdentityFile {root / 'client_key'}\n  IdentitiesOnly yes\n  UserKnownHostsFile {root / 'known_hosts'}\n"
            f"  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n"
        )
        (root / "bin").mkdir()
        wrapper = root / "bin" / "ssh"
        wrapper.write_text(f'#!/bin/sh\nexec {ssh} -F {root / "ssh_config"} "$@"\n')
        wrapper.chmod(0o755)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        log = root / "sshd.log"
        with log.open("wb") as out:
            process = subprocess.Popen([sshd, "-D", "-e", "-f", str(root / "sshd_config")], stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        env = {"DOCKER_HOST": f"ssh://{user}@127.0.0.1:{port}", "PATH": f"{root / 'bin'}:{os.environ['PATH']}"}
        wait_for_ssh(env, process, log)
        yield env
    finally:
        if process is not None:
            stop(process)
        shutil.rmtree(root, ignore_errors=True)


def wait_for_ssh(env: dict[str, str], process: subprocess.Popen, log: Path, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process.poll() is not None:
            pytest.skip(f"sshd could not start here: {log.read_text(errors='replace').strip()[-300:]}")
        host = env["DOCKER_HOST"].removeprefix("ssh://")
        user, _, address = host.partition("@")
        address, _, port = address.partition(":")
        probe = subprocess.run(["ssh", "-p", port, "-l", user, address, "true"], env={**os.environ, **env}, capture_output=True, timeout=30)
        if probe.returncode == 0:
            return
        time.sleep(0.3)
    pytest.skip(f"sshd did not answer within {timeout:g}s: {log.read_text(errors='replace').strip()[-300:]}")


def test_run_over_ssh_uploads_local_by_itself(ssh_env: dict[str, str], engine: Engine, package: Path) -> None:
    probe_package(package)
    result = fnrun("run", str(package), env=ssh_env)  # ssh:// is remote: upload without being asked
    assert result.code == 0, result
    assert_probe_saw_local(load(package / "p/sandbox-probe_configmap.yaml")["data"])
    assert engine.leftovers() == []


def test_render_over_ssh(ssh_env: dict[str, str], package: Path) -> None:
    write_package(package, {"Kptfile": KPTFILE, "notes.txt": "x\n", "d.yaml": deployment("d")})
    result = fnrun("render", str(package), env=ssh_env)
    assert result.code == 0, result
    assert load(package / "configmap_sandbox-probe.yaml")["data"]["localListing"] == "Kptfile,d.yaml,notes.txt"


def test_a_hanging_function_times_out_over_ssh(ssh_env: dict[str, str], engine: Engine, package: Path) -> None:
    write_package(package, {"d.yaml": deployment("d"), "fn.yaml": function_config(SLEEP, {"seconds": "120"})})
    result = fnrun("run", str(package), "--timeout", "4", env=ssh_env)
    assert_one_line_error(result, SLEEP, "timed out", code=1)
    assert engine.leftovers() == []


def test_doctor_reports_ssh_and_upload(ssh_env: dict[str, str]) -> None:
    result = fnrun("doctor", env=ssh_env)
    lines = result.stdout.splitlines()
    assert any("ssh" in l and "remote" in l for l in lines if l.split()[1:2] == ["engine"]), result.stdout
    assert any(l.split()[1:2] == ["mounts"] and "upload" in l for l in lines), result.stdout
    # warm calls over ssh: /local is a copy there, emptied by the helper and put in per call
    assert any(l.startswith("ok   warm      on: two calls ran in one warm container") for l in lines), result.stdout


def test_a_function_that_closes_its_output_and_lingers_times_out_over_ssh(ssh_env: dict[str, str], engine: Engine, package: Path) -> None:
    """The streams end, the process does not: the wait for its exit code must keep the deadline,
    though the SDK's ssh pipes ignore socket timeouts."""
    client = docker.DockerClient(base_url=engine.unix)
    script = "import os, sys, time\nsys.stdout.buffer.write(sys.stdin.buffer.read())\nsys.stdout.flush()\nos.close(1)\nos.close(2)\ntime.sleep(120)\n"
    container = client.containers.create(PROBE, entrypoint=["python3", "-c", script])
    container.commit(repository="fnrun-remote-test/linger", tag="v1")  # on the test's own engine only
    container.remove()
    write_package(package, {"d.yaml": deployment("d"), "fn.yaml": function_config("fnrun-remote-test/linger:v1")})
    started = time.monotonic()
    result = fnrun("run", str(package), "--timeout", "4", env=ssh_env)
    assert_one_line_error(result, "linger", "timed out", code=1)
    assert time.monotonic() - started < 60
    assert engine.leftovers() == []
