"""The container runtime against the real engine: the sandbox as seen from inside, mounts, limits, cleanup (what every runtime owes is in tests/runtimes/test_protocol.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from orchestrator.errors import FnrunError, FunctionError, InputError
from orchestrator.runtimes import Invocation, Mount, Sandbox
from orchestrator.runtimes.container.runtime import ContainerRuntime
from testing.runtime_fixtures import (
    IDENTITY,
    PROBE,
    REPO,
    containers_of,
    project_image,
    python,
    require_base_image,
)


@pytest.fixture(scope="module")
def image() -> str:
    return require_base_image()


@pytest.fixture(autouse=True)
def no_container_left_behind():
    yield
    assert containers_of(os.getpid()) == []


def run(image: str, args: tuple[str, ...], stdin: bytes = b"", on_stderr=None, **fields):
    sandbox = fields.pop("sandbox", Sandbox(image_pull_policy="never"))
    invocation = Invocation(name=fields.pop("name", "test-fn"), image=image, args=args, sandbox=sandbox, **fields)
    return ContainerRuntime().run(invocation, stdin, on_stderr)


def probe(image: str, **fields) -> dict:
    out = run(image, python(PROBE), b"{}", **fields)
    assert out.exit_code == 0, out.stderr
    return json.loads(out.stdout)


def test_default_sandbox_as_seen_from_inside(image: str, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # pytest makes it 0700; nobody must be able to list it
    (tmp_path / "fn-config.yaml").write_text("kind: ConfigMap\n")
    (tmp_path / "data").mkdir()
    report = probe(image, local_dir=tmp_path, env={"LOG_TO_STDERR": "true", "GREETING": "hello world"})
    assert (report["uid"], report["gid"]) == (65534, 65534)
    assert report["no_new_privs"] == "1"
    assert int(report["cap_eff"], 16) == 0
    assert report["interfaces"] == ["lo"]
    assert report["root_writable"] is False
    assert report["tmp_writable"] is True
    assert report["local_writable"] is False
    assert report["local"] == ["data", "fn-config.yaml"]
    assert report["env"]["GREETING"] == "hello world"
    assert report["env"]["LOG_TO_STDERR"] == "true"
    assert int(report["memory_limit"]) == 512 * 1024 * 1024
    assert report["pids_max"] == "256"


def test_project_probe_image_reports_the_sandbox(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "Kptfile").write_text("kind: Kptfile\n")
    resource_list = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}}],
        "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"envs": "GREETING"}},
    }
    env = {"LOG_TO_STDERR": "true", "STRUCTURED_RESULTS": "true", "GREETING": "hi"}
    out = run(project_image("probe"), (), yaml.safe_dump(resource_list).encode(), local_dir=tmp_path, env=env)
    assert out.exit_code == 0, out.stderr
    items = yaml.safe_load(out.stdout)["items"]
    assert [item["metadata"]["name"] for item in items] == ["app", "sandbox-probe"]
    data = items[1]["data"]
    assert (data["uid"], data["gid"], data["noNewPrivs"]) == ("65534", "65534", "1")
    assert int(data["capEff"], 16) == 0
    assert data["interfaces"] == "lo"
    assert (data["rootWritable"], data["rootReadOnly"]) == ("false", "true")
    assert (data["tmpWritable"], data["tmpFsType"]) == ("true", "tmpfs")
    assert (data["localWritable"], data["localListing"]) == ("false", "Kptfile")
    assert data["memoryLimit"] == str(512 * 1024 * 1024)
    assert data["pidsLimit"] == "256"
    assert data["cpuMax"].split()[0] == "100000"  # 1 CPU: a quota of one default period (100 ms)
    assert (data["env.LOG_TO_STDERR"], data["env.STRUCTURED_RESULTS"], data["env.GREETING"]) == ("true", "true", "hi")


def test_without_local_dir_there_is_no_local(image: str) -> None:
    assert probe(image)["local"] is None


def test_as_current_user_and_relaxed_limits(image: str) -> None:
    sandbox = Sandbox(
        as_current_user=True, read_only_root=False, drop_capabilities=False, memory=256 * 1024 * 1024,
        pids_limit=64, image_pull_policy="never",
    )
    report = probe(image, sandbox=sandbox)
    assert (report["uid"], report["gid"]) == (os.getuid(), os.getgid())
    assert report["no_new_privs"] == "1"  # never relaxed
    assert int(report["memory_limit"]) == 256 * 1024 * 1024
    assert report["pids_max"] == "64"
    if os.getuid() == 0:
        assert report["root_writable"] is True
        assert int(report["cap_eff"], 16) != 0


def test_network_only_when_allowed(image: str) -> None:
    allowed = Sandbox(network=True, image_pull_policy="never")
    assert "eth0" in probe(image, sandbox=allowed)["interfaces"]
    assert "eth0" in probe(image, sandbox=allowed, network=True)["interfaces"]
    assert probe(image, sandbox=allowed, network=False)["interfaces"] == ["lo"]
    with pytest.raises(InputError, match="declares network: true; pass --network"):
        run(image, IDENTITY, network=True)


def test_mounts_read_only_unless_asked(image: str, tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    for directory in (ro, rw):
        directory.mkdir()
        directory.chmod(0o777)
    script = "import sys\nfor d in ('/ro', '/rw'):\n    try: open(d + '/out', 'w').write(d)\n    except OSError as e: print(d, e.strerror, file=sys.stderr)\n"
    out = run(image, python(script), mounts=(Mount(ro, "/ro"), Mount(rw, "/rw", read_only=False)), mount_root=tmp_path)
    assert out.exit_code == 0
    assert "/ro Read-only file system" in out.stderr
    assert not (ro / "out").exists()
    assert (rw / "out").read_text() == "/rw"


def test_mount_sources_are_checked(image: str, tmp_path: Path) -> None:
    package, outside = tmp_path / "package", tmp_path / "outside"
    package.mkdir()
    outside.mkdir()
    (package / "escape").symlink_to(outside)
    for source in (outside, package / "escape", package / ".." / "outside"):
        with pytest.raises(InputError, match="is outside"):
            run(image, IDENTITY, mounts=(Mount(source, "/data"),), mount_root=package)
    with pytest.raises(InputError, match="does not exist"):
        run(image, IDENTITY, mounts=(Mount(package / "missing", "/data"),), mount_root=package)


def test_timeout_kills_and_removes(image: str) -> None:
    sandbox = Sandbox(timeout=1.0, image_pull_policy="never")
    started = time.monotonic()
    with pytest.raises(FunctionError, match=r"function slow-fn timed out after 1s"):
        run(image, ("sleep", "60"), name="slow-fn", sandbox=sandbox)
    assert time.monotonic() - started < 10


def test_closing_its_streams_does_not_escape_the_timeout(image: str) -> None:
    script = "import os, time\nfor fd in (0, 1, 2): os.close(fd)\ntime.sleep(60)\n"
    with pytest.raises(FunctionError, match="timed out after 1.5s"):
        run(image, python(script), sandbox=Sandbox(timeout=1.5, image_pull_policy="never"))


def test_signal_handlers_are_restored(image: str) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    run(image, IDENTITY, b"x")
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


INTERRUPTED_CHILD = textwrap.dedent(
    """
    import sys
    from orchestrator.runtimes import Invocation, Sandbox
    from orchestrator.runtimes.container.runtime import ContainerRuntime
    invocation = Invocation(name="sleepy", image=sys.argv[1], sandbox=Sandbox(image_pull_policy="never"))
    def relay(line):
        print(line, flush=True)
    try:
        ContainerRuntime().run(invocation, b"", relay)
    except KeyboardInterrupt as err:
        print("interrupted", type(err).__name__, flush=True)
        sys.exit(130)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_kills_and_removes_the_container(signum: int) -> None:
    image = project_image("sleep")
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_CHILD, image], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "sleep: sleeping 60s"
        assert len(containers_of(child.pid)) == 1
        child.send_signal(signum)
        assert child.wait(timeout=30) == 130
        assert child.stdout.read().startswith("interrupted")
    finally:
        child.kill()
        child.wait()
        assert child.stdout is not None
        child.stdout.close()
    assert containers_of(child.pid) == []


def test_unreachable_engine_is_one_line(tmp_path: Path) -> None:
    code = "from orchestrator.runtimes.container.runtime import api_client\nfrom orchestrator.errors import FnrunError\n"
    code += "try:\n    api_client()\nexcept FnrunError as e:\n    print(e.exit_code, e)\n"
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert out.stdout.startswith("4 cannot reach the container engine at unix://")
    assert len(out.stdout.strip().splitlines()) == 1


def test_bad_sandbox_setting_is_input_error(image: str) -> None:
    """A size is parsed where it enters (the request); what reaches a runtime unchecked is refused there."""
    from orchestrator.api import RunRequest, SandboxSettings
    from orchestrator.requests import pipeline_options

    with pytest.raises(InputError, match="--memory 'lots': use a size such as 512m or 1g"):
        pipeline_options(RunRequest(directory=".", sandbox=SandboxSettings(memory="lots")), None)
    with pytest.raises(InputError, match="unknown image pull policy"):
        run(image, IDENTITY, sandbox=replace(Sandbox(), image_pull_policy="sometimes"))


def test_engine_rejection_is_one_line(image: str) -> None:
    with pytest.raises(FnrunError) as caught:
        run(image, ("/no/such/binary",))
    assert "function test-fn: container engine error" in str(caught.value)
    assert "\n" not in str(caught.value)
