"""`fnrun run --server` and `fnrun render --server`: the calls go to a running `fnrun serve`; reading,
scoping, merging and the write-back stay in the client, all or nothing as ever. The client is given
an engine address where nothing listens, so every container it ran could only have run on the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.runtimes.container.settings import LABEL_PID
from testing.pipeline_helpers import REPO, Result, assert_one_line_error, deployment, fnrun, snapshot, test_images, write_package  # noqa: F401 - fixture
from testing.runtime_fixtures import api, wait_for
from testing.serving import PROTOCOLS, Server

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
LABEL = "fnrun-test/label:v1"


@pytest.fixture(params=PROTOCOLS)
def server(test_images: None, request: pytest.FixtureRequest) -> Iterator[Server]:  # noqa: F811 - the fixture
    running = Server("--no-cache", protocol=request.param)
    try:
        yield running
    finally:
        code, stderr = running.stop()
        assert code == 0 and "Traceback" not in stderr, stderr


def package(root: Path) -> Path:
    return write_package(root, {"app.yaml": deployment("web", "the front end")})


def test_run_sends_the_call_and_writes_back_here(server: Server, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    result = fnrun("run", str(root), "--image", LABEL, "--server", server.address, "--", "tier=web", env=NO_ENGINE)
    assert result.code == 0, result.stderr
    text = (root / "app.yaml").read_text()
    assert "tier: web" in text and "# the front end\n" in text and "name: web  # keep me" in text, text
    assert "label: set 1 label(s)" in result.stderr  # the function's stderr, as from a local container


def test_fnrun_server_in_the_environment_does_the_same(server: Server, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    result = fnrun("run", str(root), "--image", LABEL, "--", "tier=env", env={**NO_ENGINE, "FNRUN_SERVER": server.address})
    assert result.code == 0, result.stderr
    assert "tier: env" in (root / "app.yaml").read_text()


def test_render_sends_each_container_step(server: Server, tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {
        "Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n"
                   f"  - image: {LABEL}\n    configMap:\n      tier: one\n  - image: {LABEL}\n    configMap:\n      owner: two\n",
        "app.yaml": deployment("web"),
    })
    result = fnrun("render", str(root), "--server", server.address, env=NO_ENGINE)
    assert result.code == 0, result.stderr
    text = (root / "app.yaml").read_text()
    assert "tier: one" in text and "owner: two" in text, text


def test_a_failing_function_fails_the_run_with_its_stderr_and_touches_nothing(server: Server, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", "fnrun-test/fail:v1", "--server", server.address, env=NO_ENGINE)
    assert_one_line_error(result, "fnrun-test/fail:v1", "exit code 1", code=1)
    assert "failing on purpose" in result.stderr
    assert snapshot(root) == before


def test_a_function_the_server_lacks_is_one_line(server: Server, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", "fnrun-test/no-such-function:v1", "--server", server.address, env=NO_ENGINE)
    assert_one_line_error(result, "fnrun-test/no-such-function:v1", "has no such function", code=4)
    assert snapshot(root) == before


def test_what_a_call_cannot_carry_is_refused_before_it_goes(server: Server, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", LABEL, "--env", "SECRET=1", "--server", server.address, env=NO_ENGINE)
    assert_one_line_error(result, "needs an environment", "without --server", code=2)
    assert snapshot(root) == before


def test_an_unreachable_server_is_one_line_exit_4_and_the_package_untouched(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", LABEL, "--server", f"unix:{tmp_path / 'nobody.sock'}", "--", "a=b", env=NO_ENGINE)
    assert_one_line_error(result, "nobody.sock", "did not answer", code=4)
    assert snapshot(root) == before


@pytest.mark.parametrize("address", ["nowhere", "host:port", "unix:"])
def test_a_malformed_address_is_refused(address: str, tmp_path: Path) -> None:
    result = fnrun("run", str(package(tmp_path / "pkg")), "--image", LABEL, "--server", address, env=NO_ENGINE)
    assert_one_line_error(result, f"--server {address!r}", "HOST:PORT or unix:PATH", code=2)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_server_killed_mid_call_leaves_the_package_untouched(test_images: None, tmp_path: Path, protocol: str) -> None:  # noqa: F811
    running = Server("--no-cache", protocol=protocol)
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    filters = {"label": f"{LABEL_PID}={running.proc.pid}", "status": "running"}
    try:
        client = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(root), "--image", "fnrun-test/sleep:v1",
                                   "--server", running.address, "--", "seconds=120"],
                                  cwd=REPO, env={**os.environ, **NO_ENGINE}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: api().containers(filters=filters), timeout=120), "the function never started on the server"
            running.proc.send_signal(signal.SIGKILL)
            _, stderr = client.communicate(timeout=120)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    finally:
        running.stop()
        _remove_left(filters)
    assert_one_line_error(Result(client.returncode, "", stderr), "function runner", code=4)
    assert snapshot(root) == before


def _remove_left(filters: dict) -> None:
    """What the killed server left (its next start would sweep it; this test starts none)."""
    def remove(container: dict) -> None:
        api().remove_container(container["Id"], force=True)

    threads = [threading.Thread(target=remove, args=(c,)) for c in api().containers(all=True, filters={"label": filters["label"]})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
