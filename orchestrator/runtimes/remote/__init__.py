"""Container functions evaluated by a function runner over gRPC (`fnrun serve`, or any server of
Porch's FunctionEvaluator contract) instead of this machine's engine: `run --server ADDR`.

Only the call travels: the ResourceList goes, the function's ResourceList and stderr come back;
reading, scoping, merging and the write-back stay here, all or nothing as ever. The contract
carries no environment, mounts, network or arguments, so a call that needs one is refused here
rather than run without it; /local is not there either (the server has no package)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import EnvironmentProblem, ImageUnavailable, InputError
from ..protocol import BASE_ENV, Bytes, Invocation, RunOutput, StderrSink, StdoutSink

EXIT_CODE_KEY = "exit-code"  # trailing metadata of a failed call: the function's exit code
RESOURCE_LIST_KEY = "resource-list-bin"  # ...its ResourceList (results included)
LOG_KEY = "log-bin"  # ...its stderr
DEADLINE_MARGIN = 30.0  # seconds beyond the function's own timeout before the client gives up


@dataclass(frozen=True)
class Server:
    """A function runner to call: where, and the TLS to reach it with (None: plaintext)."""

    address: str  # HOST:PORT or unix:PATH
    ca: Path | None = None  # the CA that signed the server's certificate (FNRUN_SERVER_CA): TLS
    cert: Path | None = None  # this client's certificate and key, for a server that asks (mutual TLS)
    key: Path | None = None

    def channel(self) -> Any:
        import grpc

        if self.ca is None:
            return grpc.insecure_channel(self.address)
        pair = (_read(self.key, "FNRUN_SERVER_KEY"), _read(self.cert, "FNRUN_SERVER_CERT")) if self.cert is not None and self.key is not None else (None, None)
        return grpc.secure_channel(self.address, grpc.ssl_channel_credentials(_read(self.ca, "FNRUN_SERVER_CA"), *pair))


def _read(path: Path | None, variable: str) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as err:
        raise InputError(f"{variable}={path}: cannot read it: {err.strerror}") from None


class RemoteRuntime(Bytes):
    """Runs container functions through the function runner `server`."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.address = server.address
        self._lock = threading.Lock()
        self._stub: Any = None
        self._messages: Any = None

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        _refuse_what_cannot_travel(invocation, self.address)
        stub, messages = self._connect()
        import grpc

        started = time.monotonic()
        request = messages.EvaluateFunctionRequest(resource_list=stdin, image=invocation.image)
        try:
            answer = stub.EvaluateFunction(request, timeout=invocation.sandbox.timeout + DEADLINE_MARGIN)
        except grpc.RpcError as err:
            out = self._failed(invocation, err, started)
        else:
            out = RunOutput(stdout=answer.resource_list, stderr=answer.log.decode(errors="replace"), exit_code=0,
                            duration=time.monotonic() - started)
        if on_stderr is not None and out.stderr:
            on_stderr(out.stderr)
        return out

    def _failed(self, invocation: Invocation, err: Any, started: float) -> RunOutput:
        """A failed function is its exit code and output, as from a container; anything else is
        the server's or the request's problem, raised as ours."""
        import grpc

        code, details = err.code(), err.details() or ""
        trailing = dict(err.trailing_metadata() or ())
        if code == grpc.StatusCode.INTERNAL and EXIT_CODE_KEY in trailing:
            log = bytes(trailing.get(LOG_KEY, b"")).decode(errors="replace")
            return RunOutput(stdout=bytes(trailing.get(RESOURCE_LIST_KEY, b"")), stderr=log,
                             exit_code=int(trailing[EXIT_CODE_KEY]), duration=time.monotonic() - started)
        where = f"function {invocation.name}: the function runner at {self.address}"
        if code == grpc.StatusCode.NOT_FOUND:
            raise ImageUnavailable(f"{where} has no such function: {details}")
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
            raise EnvironmentProblem(f"{where} did not answer ({code.name}): {_first_line(details)}")
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            raise InputError(f"{where} refused the call: {_first_line(details)}")
        raise EnvironmentProblem(f"{where} refused the call ({code.name}): {_first_line(details)}")

    def _connect(self) -> tuple[Any, Any]:
        with self._lock:
            if self._stub is None:
                from .wire import modules

                self._messages, services = modules()

                self._stub = services.FunctionEvaluatorStub(self.server.channel())
            return self._stub, self._messages


def check_address(address: str, flag: str) -> str:
    """A function runner's address as `fnrun serve` listens and `--server` dials: HOST:PORT or unix:PATH."""
    address = address.strip()
    if address.startswith("unix:") and len(address) > len("unix:"):
        return address
    host, _, port = address.rpartition(":")
    if host and port.isdigit():
        return address
    raise InputError(f"{flag} {address!r}: use HOST:PORT or unix:PATH")


def _refuse_what_cannot_travel(inv: Invocation, address: str) -> None:
    extra_env = {key for key, value in inv.env.items() if BASE_ENV.get(key) != value}  # the server sets BASE_ENV itself
    what = ("an environment" if extra_env else "mounts" if inv.mounts else "the network" if inv.network
            else "arguments" if inv.args else None)
    if inv.image is None:
        raise InputError(f"function {inv.name} has no image")
    if what is not None:
        raise InputError(f"function {inv.name} needs {what}, which a call to the function runner at {address} cannot carry; run it without --server")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no details)"


