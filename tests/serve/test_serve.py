"""`fnrun serve` as porch-server meets it: a real server process on a unix socket, clients generated
from the same evaluator.proto, real containers on the engine."""

from __future__ import annotations

import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import yaml

from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.remote import wire
from testing.pipeline_helpers import assert_one_line_error, fnrun, test_images  # noqa: F401 - fixture
from testing.runtime_fixtures import api, wait_for
from testing.serving import PROTOCOLS, Server, free_port, resource_list

LABEL = "fnrun-test/label:v1"
FAIL = "fnrun-test/fail:v1"
SLEEP = "fnrun-test/sleep:v1"
IDENTITY = "fnrun-test/identity:v1"
APPLY_SETTERS = "ghcr.io/kptdev/krm-functions-catalog/apply-setters:v0.2.0"


@pytest.fixture
def server(test_images: None) -> Iterator[Server]:  # noqa: F811 - the fixture
    running = Server("--no-cache", "--builtin-catalog")
    try:
        yield running
    finally:
        code, stderr = running.stop()
        assert code == 0 and "Traceback" not in stderr, stderr
        assert api().containers(all=True, filters={"label": f"{LABEL_PID}={running.proc.pid}"}) == []


def items_of(answer: bytes) -> list[dict]:
    return yaml.safe_load(answer)["items"]


def test_health_is_serving_for_the_server_and_the_evaluator(server: Server) -> None:
    _, health_messages, _ = wire.health()
    assert server.health() == health_messages.HealthCheckResponse.SERVING
    assert server.health(wire.SERVICE) == health_messages.HealthCheckResponse.SERVING


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_kpt_catalog_by_its_full_name_runs_in_process_and_keeps_comments(server: Server, protocol: str) -> None:
    answer = server.ask(resource_list("web", config={"replicas": "4"}, comment=" # the front end"), APPLY_SETTERS, protocol)
    assert answer.status == "OK", answer
    text = answer.resource_list.decode()
    assert "replicas: 4 # kpt-set: ${replicas}" in text, text
    assert "name: web # the front end" in text, text


def test_a_short_name_is_kpt_catalog_s(server: Server) -> None:
    answer = server.call(resource_list("web", config={"replicas": "2"}), "apply-setters:v0.2.0")
    assert items_of(answer.resource_list)[0]["spec"]["replicas"] == 2


def test_twenty_calls_of_one_container_function_each_answer_their_own(server: Server) -> None:
    for n in range(20):
        answer = server.call(resource_list(f"web-{n}", config={"tier": f"t{n}"}), LABEL)
        [item] = items_of(answer.resource_list)
        assert item["metadata"]["name"] == f"web-{n}" and item["metadata"]["labels"] == {"tier": f"t{n}"}
        assert b"label" in answer.log  # the function's stderr


def test_one_image_s_calls_share_one_warm_container_across_requests(server: Server) -> None:
    for n in range(5):
        server.call(resource_list(f"web-{n}", config={"n": str(n)}), LABEL)
    kept = api().containers(filters={"label": f"{LABEL_PID}={server.proc.pid}", "status": "running"})
    assert [c["Image"] for c in kept] == [LABEL], kept  # one container served every call, and waits for the next


WARMLEAK = "fnrun-test/warmleak:v1"
CHANNELS = {"memfd", "socketpair", "thread", "child", "sharedAnonymous", "sharedFileDevShm", "sharedFileTmp", "sysvShm"}


def test_a_hostile_image_s_calls_from_different_clients_see_nothing_of_each_other(server: Server) -> None:
    """tests/images/warmleak opens every channel a forked process inherits and writes each call's
    Secrets into them: the next tenant's call must find every channel empty."""
    for tenant in ("alpha-7f3e1c", "bravo-92d04a", "charlie-5b8e6d"):
        body = (f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Secret\n"
                f"  metadata:\n    name: db\n  stringData:\n    password: {tenant}\n").encode()
        channel = grpc.insecure_channel(server.address)  # each tenant its own client
        try:
            stub = wire.modules()[1].FunctionEvaluatorStub(channel)
            answer = stub.EvaluateFunction(server.messages.EvaluateFunctionRequest(resource_list=body, image=WARMLEAK), timeout=120)
        finally:
            channel.close()
        [seen] = [i["data"] for i in items_of(answer.resource_list) if i["kind"] == "ConfigMap"]
        assert set(seen.pop("opened").split(",")) == CHANNELS, "the function opened every channel"
        seen.pop("parent")
        assert seen == {name: "" for name in CHANNELS}, f"a channel carried an earlier call's data: {seen}"
    kept = api().containers(filters={"label": f"{LABEL_PID}={server.proc.pid}", "status": "running"})
    assert [c["Image"] for c in kept] == [WARMLEAK], "the calls went through one warm container"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_unknown_image_is_not_found(server: Server, protocol: str) -> None:
    answer = server.ask(resource_list("web"), "fnrun-test/no-such-function:v1", protocol)
    assert answer.status == "NOT_FOUND", answer
    assert "fnrun-test/no-such-function:v1" in answer.message


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failing_function_is_an_error_with_its_stderr_and_results(server: Server, protocol: str) -> None:
    answer = server.ask(resource_list("web"), FAIL, protocol)
    assert answer.status == "INTERNAL" and answer.exit_code == 1, answer
    assert "exit code 1" in answer.message and "failing on purpose" in answer.message, answer.message
    assert b"failing on purpose" in answer.log  # over gRPC: the trailing metadata's log-bin


@pytest.mark.parametrize("body, says", [
    (b"\xff\xfe", "UTF-8"),
    (b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "not a ResourceList"),
])
def test_a_bad_request_is_invalid_argument(server: Server, body: bytes, says: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        server.call(body, LABEL)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and says in caught.value.details(), caught.value.details()


def test_a_container_function_gets_the_request_s_bytes_unparsed_by_the_server(server: Server) -> None:
    """A request that opens as a ResourceList goes to a container function as it came: the server
    does not parse what only the function reads (here an item no YAML parser takes, echoed back)."""
    body = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {unclosed: [\n"
    answer = server.ask(body, IDENTITY, "frames")
    assert answer.status == "OK" and answer.resource_list == body, answer


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_oversized_request_is_refused_and_the_server_keeps_serving(test_images: None, protocol: str) -> None:  # noqa: F811
    running = Server("--no-cache", "--max-request", "64k")
    try:
        big = resource_list(*(f"web-{n:05d}" for n in range(2000)))
        assert len(big) > 64 * 1024
        assert running.ask(big, LABEL, protocol).status == "RESOURCE_EXHAUSTED"
        _, health_messages, _ = wire.health()
        assert running.health() == health_messages.HealthCheckResponse.SERVING
        answer = running.ask(resource_list("web", config={"a": "b"}), LABEL, protocol)
        assert items_of(answer.resource_list)[0]["metadata"]["labels"] == {"a": "b"}
    finally:
        code, stderr = running.stop()
    assert code == 0, stderr


def test_many_clients_at_once_each_get_their_own_items(server: Server) -> None:
    answers: dict[tuple[int, int], list[dict]] = {}
    failures: list[BaseException] = []

    def client(c: int) -> None:
        channel = grpc.insecure_channel(server.address)
        stub = wire.modules()[1].FunctionEvaluatorStub(channel)
        try:
            for n in range(8):
                body = resource_list(f"c{c}-n{n}", config={"owner": f"c{c}-n{n}"})
                request = server.messages.EvaluateFunctionRequest(resource_list=body, image=LABEL)
                answers[c, n] = items_of(stub.EvaluateFunction(request, timeout=300).resource_list)
        except BaseException as err:  # noqa: BLE001 - reported below
            failures.append(err)
        finally:
            channel.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(answers) == 64
    for (c, n), items in answers.items():
        assert [(i["metadata"]["name"], i["metadata"]["labels"]) for i in items] == [(f"c{c}-n{n}", {"owner": f"c{c}-n{n}"})]


def test_sigterm_ends_a_call_under_way_within_its_grace_and_leaves_no_container(test_images: None) -> None:  # noqa: F811
    running = Server("--no-cache", "--grace", "1")
    outcome: list[Any] = []

    def slow_call() -> None:
        try:
            outcome.append(running.call(resource_list("web", config={"seconds": "120"}), SLEEP, timeout=120))
        except grpc.RpcError as err:
            outcome.append(err.code())

    caller = threading.Thread(target=slow_call)
    caller.start()
    filters = {"label": f"{LABEL_PID}={running.proc.pid}", "status": "running"}
    assert wait_for(lambda: api().containers(filters=filters), timeout=120), "the function never started"
    started = time.monotonic()
    running.proc.send_signal(signal.SIGTERM)
    running.proc.wait(timeout=60)
    ended = time.monotonic() - started
    caller.join(timeout=60)
    code, stderr = running.stop()
    assert code == 0 and "Traceback" not in stderr, stderr
    assert ended < 1 + 5, (ended, stderr)
    assert outcome and outcome[0] in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), outcome
    assert api().containers(all=True, filters={"label": f"{LABEL_PID}={running.proc.pid}"}) == []


def test_plaintext_beyond_loopback_is_refused() -> None:
    result = fnrun("serve", "--address", "0.0.0.0:0")
    assert_one_line_error(result, "--address 0.0.0.0:0", "--tls-cert", "--insecure", code=2)


def test_a_bad_size_is_one_line() -> None:
    result = fnrun("serve", "--max-request", "lots")
    assert_one_line_error(result, "--max-request 'lots'", code=2)


def test_metrics_count_calls_warm_hits_and_the_waiting_list(test_images: None) -> None:  # noqa: F811
    port = free_port()
    running = Server("--no-cache", "--metrics", f"127.0.0.1:{port}")
    try:
        for n in range(3):
            running.call(resource_list(f"web-{n}", config={"n": str(n)}), LABEL)
        with pytest.raises(grpc.RpcError):
            running.call(resource_list("web"), FAIL)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    finally:
        code, stderr = running.stop()
    assert code == 0, stderr
    values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line and not line.startswith("#")}
    assert values['fnrun_serve_calls_total{outcome="ok"}'] == 3 and values['fnrun_serve_calls_total{outcome="failed"}'] == 1, text
    assert values["fnrun_serve_call_seconds_count"] == 4
    assert values["fnrun_serve_warm_calls"] >= 2, "the label calls after the first ran warm"
    assert values["fnrun_serve_waiting_calls"] == 0


def test_metrics_on_a_unix_socket_is_refused() -> None:
    result = fnrun("serve", "--metrics", "unix:/tmp/m.sock")
    assert_one_line_error(result, "--metrics 'unix:/tmp/m.sock'", "HOST:PORT", code=2)
