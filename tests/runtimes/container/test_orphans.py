"""Every container fnrun labels is removed by the next fnrun once its owner process is gone (a
fnrun killed outright, or one whose engine died mid-run), told apart from a live owner by pid,
start time and boot; containers of live owners and of other machines are left alone."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import docker

from orchestrator import procstat
from orchestrator.runtimes.container.settings import LABEL_BOOT, LABEL_FUNCTION, LABEL_HOST, LABEL_PID, LABEL_PRESTARTED, LABEL_STARTED, boot_id
from testing.pipeline_helpers import REPO, fnrun, write_package

IDENTITY, LABEL = "fnrun-test/identity:v1", "fnrun-test/label:v1"
COLD = {"FNRUN_CACHE": "0", "FNRUN_WARM": "0"}


def gone_process() -> tuple[int, str]:
    """The pid and start time of a process that has ended (and been reaped)."""
    child = subprocess.Popen(["sleep", "30"])
    stat = procstat.read(child.pid)
    assert stat is not None
    child.kill()
    child.wait()
    return child.pid, stat.started


def labelled(client: docker.DockerClient, owner: dict[str, str], tag: str) -> str:
    """A container labelled as fnrun labels a pre-started one, created (never started) through
    the engine, with `owner` as whose it is."""
    labels = {LABEL_FUNCTION: IDENTITY, LABEL_PRESTARTED: "1", "fnrun-test.orphan": tag, **owner}
    return client.containers.create(IDENTITY, labels=labels, network_mode="none").id


def test_the_next_run_removes_containers_whose_owner_is_gone(test_images: None, tmp_path: Path) -> None:
    client = docker.from_env()
    host, boot, me = socket.gethostname(), boot_id(), os.getpid()
    started = procstat.read(me).started  # type: ignore[union-attr]
    dead_pid, dead_started = gone_process()
    owners = {
        "ended": {LABEL_HOST: host, LABEL_BOOT: boot, LABEL_PID: str(dead_pid), LABEL_STARTED: dead_started},
        "pid reused": {LABEL_HOST: host, LABEL_BOOT: boot, LABEL_PID: str(me), LABEL_STARTED: str(int(started) - 1)},
        "earlier boot": {LABEL_HOST: host, LABEL_BOOT: "00000000-0000-0000-0000-000000000000", LABEL_PID: str(me), LABEL_STARTED: started},
        "alive": {LABEL_HOST: host, LABEL_BOOT: boot, LABEL_PID: str(me), LABEL_STARTED: started},
        "another machine": {LABEL_HOST: f"not-{host}", LABEL_BOOT: "x", LABEL_PID: str(dead_pid), LABEL_STARTED: dead_started},
    }
    made = {case: labelled(client, owner, f"{me}-{case}") for case, owner in owners.items()}
    try:
        pkg = write_package(tmp_path / "pkg", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
        result = fnrun("run", str(pkg), "--image", LABEL, "--", "team=web", env=COLD)
        assert result.code == 0, result
        left = {c.labels["fnrun-test.orphan"].split("-", 1)[1] for c in client.containers.list(all=True, filters={"label": "fnrun-test.orphan"})
                if c.labels["fnrun-test.orphan"].startswith(f"{me}-")}
        assert left == {"alive", "another machine"}
    finally:
        for container_id in made.values():
            try:
                client.api.remove_container(container_id, force=True)
            except docker.errors.NotFound:
                pass


def test_what_fnrun_creates_names_its_owner(test_images: None, tmp_path: Path) -> None:
    """The labels the sweep reads are on a real run's container: this very process, this boot."""
    client = docker.from_env()
    pkg = write_package(tmp_path / "pkg", {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})
    process = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(pkg), "--image", "fnrun-test/sleep:v1", "--", "seconds=30"],
                               cwd=REPO, env={**os.environ, **COLD}, stderr=subprocess.PIPE, text=True)
    try:
        deadline, found = time.monotonic() + 60, []
        while not found and time.monotonic() < deadline:
            found = client.api.containers(all=True, filters={"label": f"{LABEL_PID}={process.pid}"})
            time.sleep(0.1)
        assert found, "no container for the run"
        stat = procstat.read(process.pid)
        assert stat is not None
        labels = found[0]["Labels"]
        assert labels[LABEL_HOST] == socket.gethostname() and labels[LABEL_BOOT] == boot_id() and labels[LABEL_STARTED] == stat.started
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert client.containers.list(all=True, filters={"label": f"{LABEL_PID}={process.pid}"}) == []
