"""Hostile functions and inputs through the real CLI: endless stdout or stderr, alias bombs and
deep nesting, from a container and from an exec function, and in package files. Each fails with one
line, the right exit code, an untouched package, no container left behind, and fnrun's own peak
memory (the child's ru_maxrss, read with os.wait4) far below what the input would have cost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, snapshot, write_package
from testing.runtime_fixtures import containers_of

HOSTILE = "fnrun-test/hostile:v1"
MiB = 1024 * 1024
# fnrun's own peak RSS on these runs is ~40-90 MB; the unguarded runs reached gigabytes.
PEAK_BOUND_KB = 400 * 1024


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str
    peak_kb: int  # the fnrun process's peak resident set (ru_maxrss, kilobytes on Linux)
    pid: int


# Reaps fnrun itself and reports its own peak: a child forked from this (large) test process keeps
# the test process's pages as its peak across exec, so fnrun is started from a small interpreter.
_REAPER = """
import os, subprocess, sys
out = int(sys.argv[1])
child = subprocess.Popen(sys.argv[2:])
os.write(out, f"{child.pid}\\n".encode())
_, status, usage = os.wait4(child.pid, 0)
os.write(out, f"{usage.ru_maxrss}\\n".encode())
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def fnrun_with_peak(*args: str, timeout: float = 120) -> Finished:
    """The real CLI as a child of a small reaper, which reads its peak RSS (ru_maxrss) by os.wait4."""
    import selectors

    report_read, report_write = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(report_write), sys.executable, "-m", "orchestrator", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=REPO,
        pass_fds=(report_write,), start_new_session=True,
    )
    os.close(report_write)
    assert process.stdout and process.stderr
    chunks: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): [], report_read: []}
    try:
        with selectors.DefaultSelector() as selector:
            for fd in chunks:
                selector.register(fd, selectors.EVENT_READ)
            open_fds = set(chunks)
            while open_fds:
                events = selector.select(timeout)
                if not events:
                    os.killpg(process.pid, signal.SIGKILL)
                    raise TimeoutError(f"fnrun {' '.join(args)} did not finish in {timeout}s")
                for key, _ in events:
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
                        open_fds.discard(key.fd)
    finally:
        os.close(report_read)
    process.returncode = process.wait()
    text = {fd: b"".join(parts).decode() for fd, parts in chunks.items()}
    pid, peak_kb = (int(line) for line in text[report_read].split())
    return Finished(process.returncode, text[process.stdout.fileno()], text[process.stderr.fileno()], peak_kb, pid)


def assert_failed_cleanly(result: Finished, code: int, *needles: str) -> None:
    assert result.code == code, result
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("fnrun: error:")]
    assert len(errors) == 1, result.stderr[-2000:]
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    assert len(errors[0]) < 400, errors[0]
    assert result.peak_kb < PEAK_BOUND_KB, f"fnrun peaked at {result.peak_kb // 1024} MB"
    assert containers_of(result.pid) == []


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return write_package(tmp_path / "pkg", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"})


@pytest.fixture
def exec_hostile(tmp_path: Path) -> Path:
    """The same hostile function as an exec function (stdlib only: any python3 runs it)."""
    path = tmp_path / "hostile.py"
    path.write_text("#!/usr/bin/env python3\n" + (REPO / "tests" / "images" / "hostile" / "main.py").read_text())
    path.chmod(0o755)
    return path


def function_args(kind: str, exec_path: Path) -> list[str]:
    return ["--image", HOSTILE] if kind == "container" else ["--exec", str(exec_path), "--enable-exec"]


@pytest.mark.parametrize("kind", ["container", "exec"])
def test_endless_stdout_is_cut_at_the_cap(kind: str, package: Path, exec_hostile: Path, test_images: None) -> None:
    before = snapshot(package)
    result = fnrun_with_peak("run", str(package), *function_args(kind, exec_hostile), "--max-output", "16M", "--timeout", "60", "--", "mode=flood-stdout")
    assert_failed_cleanly(result, 1, "wrote more than 16M on stdout", "--max-output")
    assert snapshot(package) == before


@pytest.mark.parametrize("kind", ["container", "exec"])
@pytest.mark.parametrize("mode", ["flood-stderr", "long-stderr-line"])
def test_endless_stderr_costs_no_memory(kind: str, mode: str, package: Path, exec_hostile: Path, test_images: None) -> None:
    """It floods stderr until the timeout; fnrun keeps the tail only, also when holding it (--quiet)."""
    before = snapshot(package)
    result = fnrun_with_peak("run", str(package), *function_args(kind, exec_hostile), "--quiet", "--timeout", "4", "--", f"mode={mode}")
    assert_failed_cleanly(result, 1, "timed out after 4s")
    assert snapshot(package) == before


@pytest.mark.parametrize("kind", ["container", "exec"])
@pytest.mark.parametrize(("mode", "needle"), [("bomb", "aliases expand to more than"), ("deep", "nested deeper than 500 levels")])
def test_pathological_answers_are_refused(kind: str, mode: str, needle: str, package: Path, exec_hostile: Path, test_images: None) -> None:
    before = snapshot(package)
    result = fnrun_with_peak("run", str(package), *function_args(kind, exec_hostile), "--timeout", "60", "--", f"mode={mode}")
    name = HOSTILE if kind == "container" else "hostile.py"
    assert_failed_cleanly(result, 1, name, needle)
    assert snapshot(package) == before


def billion_laughs() -> str:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: lol", "data:", '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("content", "line", "needle"), [
    (billion_laughs(), 11, "aliases expand to more than"),  # a5: where the expansion passes a million
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: " + "[" * 20000 + "]" * 20000 + "\n", 6, "nested deeper than 500 levels"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: " + "[" * 600 + "]" * 600 + "\n", 6, "nested deeper than 500 levels"),
])
@pytest.mark.parametrize("command", ["source", "run"])
def test_package_files_with_bombs_or_deep_nesting_are_refused(command: str, content: str, line: int, needle: str, tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {"ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n", "sub/bad.yaml": content})
    before = snapshot(package)
    args = ["source", str(package)] if command == "source" else ["run", str(package), "--image", "fnrun-test/identity:v1"]
    result = fnrun_with_peak(*args)
    assert_failed_cleanly(result, 2, f"sub/bad.yaml:{line}:", needle)
    assert result.stdout == ""
    assert snapshot(package) == before


ANCHORS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels
    app: web  # shared
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      containers:
      - &container
        name: web
        image: nginx
        env: &env [{name: A, value: "1"}]
      - <<: *container
        name: sidecar
"""


def test_ordinary_anchors_and_aliases_still_round_trip(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {"web.yaml": ANCHORS})
    source = subprocess.run([sys.executable, "-m", "orchestrator", "source", str(package)], capture_output=True, text=True, check=True)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "orchestrator", "sink", str(out)], input=source.stdout, capture_output=True, text=True, check=True)
    assert (out / "web.yaml").read_text() == ANCHORS
    result = fnrun_with_peak("run", str(package), "--image", "fnrun-test/identity:v1")
    assert result.code == 0, result.stderr
    assert (package / "web.yaml").read_text() == ANCHORS


@pytest.mark.parametrize("library_limit", [None, 1000, 600])
def test_nesting_limit_is_fnrun_s_whatever_libyaml_refuses(library_limit: int | None) -> None:
    """libyaml 0.2.6 refuses flow nesting itself at 1,000 levels, in its own words and up to
    1,024 characters ahead of the parser; fnrun's limit and message must not depend on that.
    The library's limit is forced down here (where PyYAML lets it be set) to stand for any
    version that refuses first."""
    import yaml

    from orchestrator.errors import InputError
    from orchestrator.yamlio import fast

    setter = getattr(getattr(yaml, "_yaml", None), "_set_max_nest_level", None)
    getter = getattr(getattr(yaml, "_yaml", None), "_get_max_nest_level", None)
    if library_limit is not None and not (callable(setter) and callable(getter)):
        pytest.skip("this PyYAML does not let libyaml's nesting limit be set")
    saved = getter() if callable(getter) else None
    try:
        if library_limit is not None:
            setter(library_limit)
        for depth in (600, 1500, 20000):
            text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: " + "[" * depth + "]" * depth + "\n"
            with pytest.raises(InputError) as caught:
                fast.parse(text, "deep.yaml")
            assert str(caught.value) == "deep.yaml:6: collections nested deeper than 500 levels"
        fast.parse("a: " + "[" * 400 + "]" * 400 + "\n", "ok.yaml")  # under both limits: fine
    finally:
        if saved is not None:
            setter(saved)
