"""`fnrun serve` when things go wrong around a call: a function that hangs, an engine that dies and
comes back. The engine test starts a dockerd of its own (tests/testing/engine_fixtures.py), never
the machine's."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import docker
import grpc
import pytest

from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.remote import frames
from testing.engine_fixtures import copy_images, dockerd_service, kill_engine, unmount_left
from testing.pipeline_helpers import test_images  # noqa: F401 - fixture
from testing.runtime_fixtures import api, wait_for
from testing.serving import PROTOCOLS, Server, resource_list

SLEEP = "fnrun-test/sleep:v1"
IDENTITY = "fnrun-test/identity:v1"


def test_a_hanging_function_is_killed_at_its_timeout_and_the_next_call_gets_a_fresh_container(test_images: None) -> None:  # noqa: F811
    running = Server("--no-cache", "--timeout", "3")
    try:
        with pytest.raises(grpc.RpcError) as caught:
            running.call(resource_list("web", config={"seconds": "600"}), SLEEP, timeout=120)
        assert caught.value.code() == grpc.StatusCode.INTERNAL and "timed out after 3s" in caught.value.details(), caught.value.details()
        answer = running.call(resource_list("web", config={"seconds": "0"}), SLEEP, timeout=120)
        assert b"name: web" in answer.resource_list
        mine = api().containers(all=True, filters={"label": f"{LABEL_PID}={running.proc.pid}"})
        assert [c["State"] for c in mine] == ["running"], "the hung call's container went; one serves on"
    finally:
        code, stderr = running.stop()
    assert code == 0 and "Traceback" not in stderr, stderr


def test_the_engine_gone_is_unavailable_and_the_server_recovers_when_it_is_back(test_images: None) -> None:  # noqa: F811
    root = Path(tempfile.mkdtemp(prefix="fnrun-dockerd-"))  # short: a unix socket's path is at most 107 bytes
    engine = dockerd_service(root, {})
    running = None
    try:
        host = next(engine)
        copy_images(docker.DockerClient(base_url=host, timeout=300), [IDENTITY])
        running = Server("--no-cache", env={"DOCKER_HOST": host})
        assert b"name: a" in running.call(resource_list("a"), IDENTITY).resource_list
        kill_engine(root)
        engine.close()
        with pytest.raises(grpc.RpcError) as caught:
            running.call(resource_list("b"), IDENTITY)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, caught.value.details()
        assert "container engine" in caught.value.details(), caught.value.details()
        assert running.health() == 1  # SERVING: the server is up; the engine is what is missing
        engine = dockerd_service(root, {})
        next(engine)
        assert b"name: c" in running.call(resource_list("c"), IDENTITY).resource_list
    finally:
        if running is not None:
            code, stderr = running.stop()
        engine.close()
        unmount_left(root)
        shutil.rmtree(root, ignore_errors=True)
    assert code == 0 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_client_that_goes_away_mid_call_cancels_it_and_its_container_goes(test_images: None, warm: bool, protocol: str) -> None:  # noqa: F811
    running = Server("--no-cache", *(() if warm else ("--no-warm",)))
    try:
        if warm:  # the container the slow call will borrow
            running.call(resource_list("w", config={"seconds": "0"}), SLEEP)
        body = resource_list("web", config={"seconds": "600"})
        if protocol == "grpc":
            future = running.stub.EvaluateFunction.future(running.messages.EvaluateFunctionRequest(resource_list=body, image=SLEEP), timeout=300)
            go_away = future.cancel
        else:
            sock = frames.connect(running.framed)
            assert sock is not None
            frames.send(sock, frames.request_frame(SLEEP, body), time.monotonic() + 60)
            go_away = sock.close
        mine = {"label": f"{LABEL_PID}={running.proc.pid}"}
        assert wait_for(lambda: api().containers(filters={**mine, "status": "running"}), timeout=120)
        time.sleep(2)  # let the call's process get going in it (the test holds either way: see below)
        go_away()  # before or after the function started, the container it uses goes
        assert wait_for(lambda: api().containers(all=True, filters=mine) == [], timeout=60), api().containers(all=True, filters=mine)
        answer = running.ask(resource_list("after", config={"seconds": "0"}), SLEEP, protocol)  # the server serves on
        assert b"name: after" in answer.resource_list
    finally:
        code, stderr = running.stop()
    assert code == 0 and "Traceback" not in stderr, stderr
    assert "CANCELLED" in stderr, stderr
