"""An engine killed while fnrun runs a function: fnrun cannot remove the container, and the engine
comes back with it (stopped). The next fnrun on that engine removes it (container.orphans).

The test starts a dockerd of its own (tests/testing/engine_fixtures.py), never the machine's: it
kills that engine mid-run and starts it again on the same data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker

from orchestrator.runtimes.container.settings import LABEL_PID
from testing.engine_fixtures import copy_images, dockerd_service, kill_engine, unmount_left
from testing.pipeline_helpers import REPO, Result, assert_one_line_error, fnrun, write_package

SLEEP = "fnrun-test/sleep:v1"


def package(root: Path) -> Path:
    return write_package(root, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})


def owned(client: docker.DockerClient, pid: int, **filters: str) -> list[dict]:
    return client.api.containers(all=True, filters={"label": f"{LABEL_PID}={pid}", **filters})


def test_an_engine_killed_mid_run_leaves_no_container_after_the_next_run(tmp_path: Path, test_images: None) -> None:
    root = Path(tempfile.mkdtemp(prefix="fnrun-dockerd-"))  # short: a unix socket's path is at most 107 bytes
    engine = dockerd_service(root, {})
    try:
        host = next(engine)
        copy_images(docker.DockerClient(base_url=host, timeout=300), [SLEEP])
        env = {**os.environ, "DOCKER_HOST": host, "FNRUN_CACHE": "0", "FNRUN_WARM": "0"}
        run = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(package(tmp_path / "pkg")), "--image", SLEEP, "--", "seconds=120"],
                               cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            client = docker.DockerClient(base_url=host, timeout=60)
            deadline = time.monotonic() + 120
            while not owned(client, run.pid, status="running") and time.monotonic() < deadline:
                time.sleep(0.2)
            assert owned(client, run.pid, status="running"), "the function never ran"
            kill_engine(root)
            _, stderr = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert_one_line_error(Result(run.returncode, "", stderr), "cannot reach the container engine", code=4)
    finally:
        engine.close()
    engine = dockerd_service(root, {})
    try:
        client = docker.DockerClient(base_url=next(engine), timeout=60)
        kept = owned(client, run.pid)
        assert kept, "the engine came back without the container: nothing to sweep"
        warned = [line for line in stderr.splitlines() if line.startswith("fnrun: warning:")]
        if warned:  # only of a container that exists, and what becomes of it
            assert len(warned) == 1 and kept[0]["Id"][:12] in warned[0] and "the next fnrun" in warned[0], stderr
        result = fnrun("run", str(package(tmp_path / "next")), "--image", SLEEP, "--", "seconds=0",
                       env={"DOCKER_HOST": f"unix://{root / 'docker.sock'}", "FNRUN_CACHE": "0", "FNRUN_WARM": "0"})
        assert result.code == 0, result
        assert owned(client, run.pid) == [], "the next run removed the container the killed engine kept"
    finally:
        engine.close()
        unmount_left(root)
        shutil.rmtree(root, ignore_errors=True)
