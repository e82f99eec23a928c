"""Run a function image through the Docker Engine API, sandboxed, with no container ever left behind.

Low-level docker-py calls only, in the order `docker run -i` uses: create, attach (before start,
so no output can be missed), start, stream stdin/stdout/stderr over the hijacked socket, wait,
remove. That is one round trip more than a bare create/start/wait/remove, and nothing else: the
image is looked up by creating the container (a 404 triggers the pull under ifNotPresent).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.constants import DEFAULT_DOCKER_API_VERSION, DEFAULT_TIMEOUT_SECONDS, MINIMUM_DOCKER_API_VERSION
from docker.utils import kwargs_from_env, parse_repository_tag, version_lt

from orchestrator import stops
from orchestrator.errors import EnvironmentProblem, FnrunError, FunctionError, ImageUnavailable, InputError
from orchestrator.runtimes.container import engine_choice, live, orphans
from orchestrator.runtimes.container.hijack import duplex
from orchestrator.runtimes.container.remote import uploads
from orchestrator.runtimes.container.settings import LABEL_FUNCTION, create_body
from orchestrator.runtimes.container.start_failures import podman_runtime_refusal, start_failure
from orchestrator.runtimes.container.upload import copies_of
from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.interrupts import SignalGuard
from orchestrator.runtimes.supervise.streams import BoundedOutput, FrameDemux, LineSplitter, OutputTooLarge, pump, too_large


def api_client(announce: bool = False) -> docker.APIClient:
    """A new engine connection (DOCKER_HOST honoured: a podman socket, tcp with TLS
    (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) and ssh:// work too). A run or a server holds one for
    its life (`Engine`), which says which engine a runtime variable led to (`announce`); a
    command that only asks the engine a question, or the sweep beside a run, makes its own."""
    choice = engine_choice.chosen()
    try:
        client = _connect(choice.host)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as err:
        raise EnvironmentProblem(f"cannot reach the container engine at {choice.host or 'the default socket'}: {_brief(err)}") from None
    if announce:
        engine_choice.announce(choice)
    return client


class Engine:
    """The engine connection of one run (or one server, for its life): made at its first use,
    since a run of builtins only never needs one, and closed by its owner at the end."""

    def __init__(self) -> None:
        self._client: docker.APIClient | None = None
        self._lock = threading.Lock()

    def api(self) -> docker.APIClient:
        with self._lock:
            if self._client is None:
                self._client = api_client(announce=True)
                orphans.sweep_soon(self._client, self.remove_quietly)  # what gone fnruns left, once per process
            return self._client

    def remove_quietly(self, container_id: str) -> None:
        """`remove_quietly` through this connection (the removal `live` is given)."""
        try:
            api = self.api()
        except FnrunError:
            return
        remove_quietly(api, container_id)

    def close(self) -> None:
        """Close the connection once the removals still under way on it are done: now, or under
        fnrun's launcher after the package is written (live.wait_later, in the order asked, so
        after the run's removers). A later request on it connects again."""
        with self._lock:
            client = self._client
        if client is not None:
            live.wait_later(client.close)


def _connect(host: str | None = None) -> docker.APIClient:
    """What `docker.from_env().api` builds, with the API version taken from a ping.

    The SDK's `version="auto"` asks GET /version, for which the engine gathers every component's
    version (7-16 ms here, once per fnrun process); GET /_ping answers in about 2 ms with the
    same `API-Version` header the docker CLI negotiates with. An engine whose ping lacks the
    header is asked the SDK's way. ssh:// goes through the system `ssh` (the SDK's shell-out, as
    the docker CLI does: the user's ssh config, agent and known hosts apply)."""
    environment = {key: value for key, value in os.environ.items() if key != "DOCKER_HOST"}
    kwargs = kwargs_from_env(environment={**environment, **({"DOCKER_HOST": host} if host else {})})
    api = docker.APIClient(
        version=DEFAULT_DOCKER_API_VERSION, timeout=DEFAULT_TIMEOUT_SECONDS,
        use_ssh_client=str(kwargs.get("base_url", "")).startswith("ssh://"), **kwargs,
    )
    if getattr(kwargs.get("tls"), "ca_cert", None):
        # requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE win over the session's CA: the engine's
        # CA from DOCKER_CERT_PATH would be ignored wherever those are set.
        api.trust_env = False
    response = api._get(f"{api.base_url}/_ping")  # unversioned, like the CLI's first request
    api._raise_for_status(response)
    version = response.headers.get("API-Version") or api._retrieve_server_version()
    if version_lt(version, MINIMUM_DOCKER_API_VERSION):
        raise docker.errors.InvalidVersion(f"the engine speaks API {version}, older than {MINIMUM_DOCKER_API_VERSION}")
    api._version = version
    return api


class ContainerRuntime(Bytes):
    """Runtime for `container:` functions, over its owner's `engine` (a run's, a server's; its
    own when none is given)."""

    streams_stdout = True

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else Engine()

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        if invocation.image is None:
            raise InputError(f"function {invocation.name} has no image")
        api = self.engine.api()
        copies = copies_of(invocation)
        config = container_config(invocation, copies)
        started = time.monotonic()
        try:
            with SignalGuard() as guard:
                with guard.armed():
                    if invocation.sandbox.image_pull_policy == "always":
                        pull(api, invocation.image, "cannot pull image {image} (image pull policy: always)")
                with guard.held():
                    container_id = _create(api, invocation, config, guard)
                try:
                    with guard.held():
                        upload(api, container_id, invocation, copies)
                    with guard.armed():
                        attached = attach(api, container_id)
                        try:
                            api.start(container_id)
                            stdout, stderr, code = exchange(api, container_id, invocation, attached, stdin, on_stderr, on_stdout)
                        finally:
                            attached.close()
                finally:
                    with guard.held():
                        remove(api, container_id)
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise engine_error(invocation, err) from None
        return RunOutput(stdout=stdout, stderr=stderr, exit_code=code, duration=time.monotonic() - started)


def engine_error(inv: Invocation, err: BaseException) -> FnrunError:
    """The engine refused or failed a request: the machine's problem, not the package's (exit 4),
    with the fix where the engine's words are known (runtimes.container.start_failures)."""
    if isinstance(err, requests.exceptions.ConnectionError):  # refused, reset or aborted: the engine went away
        where = engine_choice.chosen().host or "the default socket"
        return EnvironmentProblem(f"function {inv.name}: cannot reach the container engine at {where}: {_brief(err)}")
    text = str(getattr(err, "explanation", None) or err)
    return start_failure(inv.name, text) or EnvironmentProblem(f"function {inv.name}: container engine error: {_brief(err)}")


def upload(api: docker.APIClient, container_id: str, inv: Invocation, copies: dict[str, Path]) -> None:
    from orchestrator.runtimes.container.upload import archive

    remedy = "keep what is mounted small" if uploads(inv.sandbox.mount_mode) else "make it readable (chmod o+rx)"
    for target, source in copies.items():
        api.put_archive(container_id, target, archive(source, target, inv.name, remedy=remedy))


def container_config(inv: Invocation, copies: dict[str, Path]) -> dict[str, Any]:
    """The create request (orchestrator.runtimes.container.settings: the launcher builds the same one)."""
    return create_body(inv, copies)


def _create(api: docker.APIClient, inv: Invocation, config: dict[str, Any], guard: SignalGuard) -> str:
    """Create the container; a missing image is pulled (ifNotPresent) or reported (never)."""
    try:
        return create(api, config)
    except docker.errors.APIError as err:
        if not isinstance(err, docker.errors.ImageNotFound):
            if _names_runtime(err, inv):
                raise _unknown_runtime(api, inv) from None
            raise
        if inv.sandbox.image_pull_policy == "never":
            raise ImageUnavailable(f"image {inv.image} is not present (image pull policy: never)") from None
    with guard.armed():  # a pull can take long: let Ctrl-C through, no container exists yet
        pull(api, str(inv.image), "image {image} is not present and cannot be pulled")
    try:
        return create(api, config)
    except docker.errors.ImageNotFound:
        raise ImageUnavailable(f"image {inv.image} is not present after pulling it") from None


def _names_runtime(err: docker.errors.APIError, inv: Invocation) -> bool:
    return bool(inv.sandbox.oci_runtime) and "runtime" in str(err.explanation or err).lower()


def _unknown_runtime(api: docker.APIClient, inv: Invocation) -> EnvironmentProblem:
    offered = ", ".join(sorted(api.info().get("Runtimes") or {})) or "none listed"
    return EnvironmentProblem(
        f"OCI runtime {inv.sandbox.oci_runtime!r} is not registered with the container engine "
        f"(it offers: {offered}); register it (dockerd --add-runtime) or pick another with --runtime"
    )


def pull(api: docker.APIClient, image: str, failure: str = "cannot pull image {image}") -> None:
    """Pull one image; any failure is one line naming it (`failure`), then the registry's answer
    cut to its gist."""
    repository, tag = parse_repository_tag(image)
    try:
        for event in api.pull(repository, tag=tag or "latest", stream=True, decode=True):
            if isinstance(event, dict) and event.get("error"):
                raise ImageUnavailable(f"{failure.format(image=image)}: {_brief(event['error'])}")
    except (docker.errors.APIError, requests.exceptions.RequestException) as err:
        raise ImageUnavailable(f"{failure.format(image=image)}: {_brief(err)}") from None


class Attached:
    """The hijacked attach socket of one container, opened before it starts so no output is missed.

    What APIClient.attach_socket does, keeping the HTTP response so it can be closed properly
    (attach_socket hands back only the socket, whose wrappers then leak until collected)."""

    def __init__(self, api: docker.APIClient, container_id: str, exec_id: str | None = None) -> None:
        """Attach to a container, or (`exec_id`) start that exec in it, attached the same way."""
        upgrade = {"Connection": "Upgrade", "Upgrade": "tcp"}
        if exec_id is None:
            self.response: Any = api.post(
                api._url("/containers/{0}/attach", container_id),
                params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}, headers=upgrade, stream=True,
            )
        else:
            self.response = api._post_json(api._url("/exec/{0}/start", exec_id), data={"Detach": False, "Tty": False},
                                           headers=upgrade, stream=True)
        try:
            if exec_id is not None:
                api._raise_for_status(self.response)
            self.stream = duplex(api._get_raw_response_socket(self.response))
        except BaseException:
            self.response.close()
            raise

    @classmethod
    def over(cls, sock: socket.socket) -> Attached:
        """An attach stream opened elsewhere: the launcher's early container (runtimes.container.early)."""
        attached = cls.__new__(cls)
        attached.response = None
        attached.stream = duplex(sock)
        return attached

    def close(self) -> None:
        self.stream.close()
        if self.response is not None:
            self.response.close()


def attach(api: docker.APIClient, container_id: str) -> Attached:
    return Attached(api, container_id)


def exchange(
    api: docker.APIClient, container_id: str, inv: Invocation, attached: Attached, stdin: bytes, on_stderr: StderrSink | None,
    on_stdout: StdoutSink | None = None,
) -> tuple[bytes, str, int]:
    """Write the input to a started container, read its output, wait for its exit code. The
    function's timeout counts from here: a pre-started container may have waited on stdin long."""
    stdout, stderr, deadline = converse(inv, attached, stdin, on_stderr, on_stdout)
    return stdout, stderr, _wait(api, container_id, inv, deadline)


def converse(
    inv: Invocation, attached: Attached, stdin: bytes, on_stderr: StderrSink | None, on_stdout: StdoutSink | None = None,
) -> tuple[bytes, str, float | None]:
    """Feed stdin and read the framed stdout and stderr of an attached container or exec until
    they end, within the output cap and the timeout; returns them and the deadline that ran."""
    stream = attached.stream
    out = BoundedOutput(inv.sandbox.max_output)
    err = LineSplitter(on_stderr)
    demux = FrameDemux(out.feed if on_stdout is None else out.tee(on_stdout), err.feed)
    deadline = time.monotonic() + inv.sandbox.timeout if inv.sandbox.timeout else None
    try:
        finished = pump(
            stream.write_fd,
            stdin,
            stream.send,
            stream.close_write,
            {stream.fd: demux.feed},
            deadline,
            {stream.fd: stream.recv} if stream.recv else None,
        )
    except OutputTooLarge as cap:
        raise too_large(inv.name, cap.limit) from None
    if not finished:
        raise timed_out(inv)
    return out.value(), err.close(), deadline


def _wait(api: docker.APIClient, container_id: str, inv: Invocation, deadline: float | None) -> int:
    """Its streams are closed; a process that lingers past the deadline still counts as timed out."""
    remaining = None if deadline is None else deadline - time.monotonic()
    if remaining is not None and remaining <= 0:
        raise timed_out(inv)
    try:
        if remaining is not None and api.base_url.startswith("http+docker://ssh"):
            return _wait_beside(api, container_id, inv, remaining)
        return int(api.wait(container_id, timeout=remaining)["StatusCode"])
    except requests.exceptions.RequestException:
        if deadline is not None and time.monotonic() >= deadline:
            raise timed_out(inv) from None
        raise


def _wait_beside(api: docker.APIClient, container_id: str, inv: Invocation, remaining: float) -> int:
    """Wait in a thread of its own: the SDK's ssh pipes ignore socket timeouts. After a timeout
    the caller removes the container, which ends the wait (and the thread)."""
    outcome: list[Any] = []

    def wait() -> None:
        try:
            outcome.append(int(api.wait(container_id)["StatusCode"]))
        except BaseException as err:  # noqa: BLE001 - handed to the caller below
            outcome.append(err)

    waiter = threading.Thread(target=wait, name="fnrun-wait", daemon=True)
    waiter.start()
    waiter.join(remaining)
    if not outcome:
        raise timed_out(inv)
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def timed_out(inv: Invocation) -> FunctionError:
    return FunctionError(f"function {inv.name} timed out after {inv.sandbox.timeout:g}s; it was killed and removed")


def create(api: docker.APIClient, config: dict[str, Any]) -> str:
    """Create a container and remember it until it is removed (orchestrator.runtimes.container.live).
    A stop waits while the engine is asked: cut short, the container would exist with an id nobody
    read. Creates still under way are counted, so that the launcher waits for them at its end."""
    _check_podman_runtime(api, config)
    with live.creating():
        live.refuse_if_cancelled()  # counted first: the launcher's `settle` either waits for it or has refused it
        container_id = None
        try:
            with stops.held():  # a stop that came meanwhile raises on leaving it, id in hand
                container_id = api.create_container_from_config(config)["Id"]
                wanted = live.register(container_id, partial(remove_quietly, api))
            if not wanted:  # created while the run was being cancelled
                raise KeyboardInterrupt()
        except BaseException:
            if container_id is not None:
                with stops.held():
                    remove_quietly(api, container_id)
            raise
    return container_id


_PODMAN_DEFAULT: dict[str, str | None] = {}  # engine URL -> podman's runtime, None for other engines


def is_podman(version: dict) -> bool:
    """Whether an engine's /version answer is podman's (it names its components)."""
    return any("podman" in str(c.get("Name", "")).lower() for c in version.get("Components") or [])


def _check_podman_runtime(api: docker.APIClient, config: dict[str, Any]) -> None:
    """Podman ignores HostConfig.Runtime: refuse a runtime it would silently not use."""
    wanted = config.get("HostConfig", {}).get("Runtime")
    if not wanted:
        return
    key = str(api.base_url)
    if key not in _PODMAN_DEFAULT:
        _PODMAN_DEFAULT[key] = (api.info().get("DefaultRuntime") or "its default") if is_podman(api.version()) else None
    default = _PODMAN_DEFAULT[key]
    if default is not None and default != wanted:
        raise podman_runtime_refusal(config.get("Labels", {}).get(LABEL_FUNCTION, config.get("Image", "?")), wanted, default)


REMOVE_RETRIES = (0.05, 0.1, 0.2, 0.4, 0.8)


def remove(api: docker.APIClient, container_id: str) -> None:
    """Kill (if still running) and remove in one request; gone already is fine.

    An engine may fail a forced removal with a server error while the container is stopping on
    its own (podman 4.3 answers that it could not kill a container it finds just stopped, as a
    warm container whose stdin fnrun closed is): that removal is asked again, briefly."""
    for pause in (*REMOVE_RETRIES, None):
        try:
            api.remove_container(container_id, force=True, v=True)  # v: the anonymous volumes of copies
            break
        except docker.errors.NotFound:
            break
        except docker.errors.APIError as err:
            if "already in progress" in str(err):
                break
            if pause is None or not err.is_server_error():
                raise
            time.sleep(pause)
    live.forget(container_id)


def remove_quietly(api: docker.APIClient, container_id: str) -> None:
    """Remove while a run is being stopped: an engine error must not hide why it stopped."""
    try:
        remove(api, container_id)
    except (FnrunError, docker.errors.APIError, requests.exceptions.RequestException):
        pass


def _brief(err: object) -> str:
    """The gist of an engine or registry error: its first line, trimmed."""
    text = getattr(err, "explanation", None) or str(err)
    line = " ".join(str(text).strip().splitlines()[:1]) or type(err).__name__
    return line if len(line) <= 200 else line[:197] + "..."

