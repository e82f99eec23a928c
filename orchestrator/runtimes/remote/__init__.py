"""Container functions evaluated by a function runner over gRPC (`fnrun serve`, or any server of
Porch's FunctionEvaluator contract) instead of this machine's engine: `run --server ADDR`. A
`fnrun serve` on a unix socket of this machine is spoken to in fnrun's own framing (`frames`), so
the edit loop's client imports no grpcio; both transports end in the same answers and errors.

Only the call travels: the ResourceList goes, the function's ResourceList and stderr come back;
reading, scoping, merging and the write-back stay here, all or nothing as ever. The contract
carries no environment, mounts, network or arguments, so a call that needs one is refused here
rather than run without it; /local is not there either (the server has no package)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import EnvironmentProblem, ImageUnavailable, InputError
from ..protocol import BASE_ENV, Bytes, Invocation, RunOutput, StderrSink, StdoutSink
from . import frames

EXIT_CODE_KEY = "exit-code"  # trailing metadata of a failed call: the function's exit code
RESOURCE_LIST_KEY = "resource-list-bin"  # ...its ResourceList (results included)
LOG_KEY = "log-bin"  # ...its stderr
DEADLINE_MARGIN = 30.0  # seconds beyond the function's own timeout before the client gives up
RESULTS_ROOM = 16 * 1024 * 1024  # an answer may exceed the function's output cap by the results the server adds


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
        pair = ((read_pem(self.key, f"FNRUN_SERVER_KEY={self.key}"), read_pem(self.cert, f"FNRUN_SERVER_CERT={self.cert}"))
                if self.cert is not None and self.key is not None else (None, None))
        return grpc.secure_channel(self.address, grpc.ssl_channel_credentials(read_pem(self.ca, f"FNRUN_SERVER_CA={self.ca}"), *pair))


def read_pem(path: Path, named: str) -> bytes:
    """A certificate or key file for TLS, on either side (`named`: how the user gave it), or one line."""
    try:
        return path.read_bytes()
    except OSError as err:
        raise InputError(f"{named}: cannot read it: {err.strerror}") from None


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
        started = time.monotonic()
        reply = self._framed(invocation, stdin)
        if reply is None:
            reply = self._grpc(invocation, stdin)
        out = self._output(invocation, reply, started)
        if on_stderr is not None and out.stderr:
            on_stderr(out.stderr)
        return out

    def _framed(self, invocation: Invocation, stdin: bytes) -> frames.Reply | None:
        """The call in fnrun's framing, where the server speaks it (None: it does not; gRPC then)."""
        main = frames.socket_path(self.address) if self.server.ca is None else None  # TLS: gRPC's
        if main is None:
            return None
        sock = frames.connect(main + frames.SUFFIX)
        if sock is None:
            if not os.path.exists(main):  # nothing there at all: no need for grpcio to say so
                return frames.Reply("UNAVAILABLE", f"no socket at {main}")
            return None
        limit = invocation.sandbox.max_output + RESULTS_ROOM
        try:
            return frames.call(sock, invocation.image or "", stdin, limit, invocation.sandbox.timeout + DEADLINE_MARGIN)
        except frames.FrameError as err:
            return frames.Reply("UNAVAILABLE", str(err))

    def _grpc(self, invocation: Invocation, stdin: bytes) -> frames.Reply:
        stub, messages = self._connect()
        return grpc_call(stub, messages, invocation.image or "", stdin, invocation.sandbox.timeout + DEADLINE_MARGIN)

    def _output(self, invocation: Invocation, reply: frames.Reply, started: float) -> RunOutput:
        """A failed function is its exit code and output, as from a container; anything else is
        the server's or the request's problem, raised as ours."""
        status, details = reply.status, reply.message
        if status == "OK" or (status == "INTERNAL" and reply.exit_code != 0):
            return RunOutput(stdout=reply.resource_list, stderr=reply.log.decode(errors="replace"), exit_code=reply.exit_code,
                             duration=time.monotonic() - started)
        where = f"function {invocation.name}: the function runner at {self.address}"
        if status == "NOT_FOUND":
            raise ImageUnavailable(f"{where} has no such function: {details}")
        if status in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED"):
            raise EnvironmentProblem(f"{where} did not answer ({status}): {_first_line(details)}")
        if status == "INVALID_ARGUMENT":
            raise InputError(f"{where} refused the call: {_first_line(details)}")
        raise EnvironmentProblem(f"{where} refused the call ({status}): {_first_line(details)}")

    def _connect(self) -> tuple[Any, Any]:
        with self._lock:
            if self._stub is None:
                from .wire import modules

                self._messages, services = modules()

                self._stub = services.FunctionEvaluatorStub(self.server.channel())
            return self._stub, self._messages


def grpc_call(stub: Any, messages: Any, image: str, resource_list: bytes, timeout: float) -> frames.Reply:
    """One EvaluateFunction over gRPC, its status and trailing metadata read into a Reply, so both
    transports' answers are read by one piece of code."""
    import grpc

    try:
        answer = stub.EvaluateFunction(messages.EvaluateFunctionRequest(resource_list=resource_list, image=image), timeout=timeout)
    except grpc.RpcError as err:
        trailing: dict[str, Any] = dict(err.trailing_metadata() or ())  # type: ignore[arg-type]  # grpc's stubs type metadata as pairs of Never
        exit_code = trailing.get(EXIT_CODE_KEY)
        return frames.Reply(err.code().name, err.details() or "", bytes(trailing.get(RESOURCE_LIST_KEY, b"")),
                            bytes(trailing.get(LOG_KEY, b"")), int(exit_code) if exit_code is not None else 0)
    return frames.Reply("OK", "", answer.resource_list, answer.log)


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


