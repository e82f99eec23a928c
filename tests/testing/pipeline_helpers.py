"""Helpers for the `fnrun run` tests: packages written from dicts, snapshots, the real CLI."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import docker
import pytest
from ruamel.yaml import YAML

from testing.in_process import Result

REPO = Path(__file__).resolve().parents[2]
TEST_IMAGES = ("identity", "label", "generate", "delete", "fail", "garbage", "probe", "results", "sleep", "hostile", "sdkprobe")


def function_config(image: str, data: dict[str, str] | None = None, name: str = "fn", extra: str = "") -> str:
    """A ConfigMap that declares a container function (the way users write them)."""
    lines = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        f"  name: {name}",
        "  annotations:",
        '    config.kubernetes.io/local-config: "true"',
        "    config.kubernetes.io/function: |",
        "      container:",
        f"        image: {image}",
    ]
    lines += ["      " + line for line in extra.splitlines() if line.strip()]
    if data:
        lines.append("data:")
        lines += [f'  {k}: "{v}"' for k, v in data.items()]
    return "\n".join(lines) + "\n"


def deployment(name: str, comment: str = "") -> str:
    head = f"# {comment}\n" if comment else ""
    return head + textwrap.dedent(
        f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {name}  # keep me
        spec:
          replicas: 2
        """
    )


def write_package(root: Path, files: dict[str, str]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime: `untouched` compares both."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def fnrun(*args: str, stdin: str | None = None, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """The real command line, as users run it."""
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_one_line_error(result: Result, *needles: str, code: int) -> None:
    assert result.code == code, result
    assert "Traceback" not in result.stderr, result.stderr
    errors = [l for l in result.stderr.splitlines() if l.startswith("fnrun: error:")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])


@pytest.fixture(scope="session")
def test_images() -> None:
    """The suite's function images, built by scripts/build_images.py (as .ci/run does)."""
    client = docker.from_env()
    missing = [n for n in TEST_IMAGES if not client.images.list(name=f"fnrun-test/{n}:v1")]
    if missing:
        subprocess.run([sys.executable, str(REPO / "scripts" / "build_images.py")], check=True)


@pytest.fixture(scope="session")
def probe_image(test_images: None) -> str:
    """The probe image as this checkout has it (the tag is shared: rebuilt when its hash differs)."""
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_images.py"), "--only", "probe"], check=True, capture_output=True)
    return "fnrun-test/probe:v1"


def load(path: Path) -> dict:
    """A file's single document, read with fnrun's own YAML 1.2 loader (PyYAML's is YAML 1.1)."""
    from orchestrator.yamlio import fast

    return fast.load(path.read_text(), str(path))


def interrupt_when_running(proc: subprocess.Popen, filters: dict, signum: int, count: int = 1, settle: float = 0.5) -> str:
    """Wait until `count` containers match `filters` (a label unique to the fnrun process), give
    them `settle` seconds, send `signum` to fnrun and return its stderr once it exited."""
    client = docker.from_env()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(client.containers.list(filters=filters)) < count:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else proc.returncode
            time.sleep(0.2)
        assert len(client.containers.list(filters=filters)) >= count, "the containers never started"
        time.sleep(settle)
        os.kill(proc.pid, signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return stderr


def signal_when(proc: subprocess.Popen[str], marker: str, signum: int) -> str:
    """Send `signum` once a line of the process's stderr holds `marker` (the function is running),
    and return the rest of stderr after it exits; a process that outlives the test is killed."""
    assert proc.stderr is not None
    try:
        while marker not in (line := proc.stderr.readline()):
            assert line, "fnrun ended before the function ran"
        proc.send_signal(signum)
        rest = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rest


def as_data(root: Path) -> dict[str, list]:
    """Every YAML file and Kptfile as YAML 1.2 data; Kptfile status left out (kpt beta.56 writes none)."""
    yaml = YAML(typ="safe", pure=True)
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and (path.suffix == ".yaml" or path.name == "Kptfile"):
            docs = [d for d in yaml.load_all(io.StringIO(path.read_text())) if d is not None]
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "Kptfile":
                    doc.pop("status", None)
            found[path.relative_to(root).as_posix()] = docs
    return found
