"""Warm containers live exactly as long as their fnrun: gone after Ctrl-C and SIGTERM, and after a
SIGKILL of fnrun found by their labels and removed by the next fnrun on the engine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.runtime import LABEL_PID
from orchestrator.runtimes.container.warm.orphans import alive
from orchestrator.runtimes.container.warm.plan import LABEL_WARM, process_started
from testing.pipeline_helpers import REPO, fnrun, interrupt_when_running, snapshot, test_images, write_package  # noqa: F401

SLEEP, LABEL = "fnrun-test/sleep:v1", "fnrun-test/label:v1"
WARM = {"FNRUN_CACHE": "0", "FNRUN_WARM": "1"}


def kptfile(steps: list[tuple[str, dict[str, str]]]) -> str:
    text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n"
    for image, data in steps:
        text += f"  - image: {image}\n    configMap:\n" + "".join(f'      {k}: "{v}"\n' for k, v in data.items())
    return text


def package(root: Path, steps: list[tuple[str, dict[str, str]]]) -> Path:
    return write_package(root, {"Kptfile": kptfile(steps), "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})


def containers(pid: int) -> list:
    return docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_PID}={pid}"})


def render(root: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", "render", str(root)], stderr=subprocess.PIPE, text=True,
                            cwd=REPO, env={**os.environ, **WARM})


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_warm_run_leaves_no_container(test_images: None, tmp_path: Path, signum: int) -> None:
    root = package(tmp_path / "pkg", [(SLEEP, {"seconds": "60"})] * 3)
    before = snapshot(root)
    proc = render(root)
    stderr = interrupt_when_running(proc, {"label": [f"{LABEL_PID}={proc.pid}", f"{LABEL_WARM}=1"]}, signum)
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    assert containers(proc.pid) == []
    assert snapshot(root) == before


def test_the_next_fnrun_removes_what_a_killed_one_left(test_images: None, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", [(SLEEP, {"seconds": "60"})] * 3)
    proc = render(root)
    try:
        interrupt_when_running(proc, {"label": [f"{LABEL_PID}={proc.pid}", f"{LABEL_WARM}=1"]}, signal.SIGKILL)
        orphans = containers(proc.pid)
        assert orphans, "a SIGKILL leaves the warm container behind"
        other = package(tmp_path / "other", [(LABEL, {"a": "1"}), (LABEL, {"b": "2"})])
        result = fnrun("render", str(other), env=WARM)
        assert result.code == 0, result
        assert containers(proc.pid) == [], "the next warm run removed the orphans"
    finally:
        for leftover in containers(proc.pid):
            leftover.remove(force=True)


def test_a_process_is_told_from_one_that_reused_its_pid() -> None:
    me = os.getpid()
    assert alive(me, process_started(me) or "")
    assert not alive(me, "1")  # this pid, but started at another time: not the owner
    assert not alive(0, "")
