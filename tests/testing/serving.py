"""A `fnrun serve` process for tests (tests/serve/): started on a unix socket of its own, with a
channel and a client generated from the same evaluator.proto, and fnrun's framed socket beside it.
A behaviour both transports share is one test over `PROTOCOLS`: `ask` answers a `Reply` either way."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import grpc

from orchestrator.runtimes.remote import frames, grpc_call, wire
from testing.pipeline_helpers import REPO

PROTOCOLS = ("grpc", "frames")


def resource_list(*names: str, config: dict[str, str] | None = None, comment: str = "") -> bytes:
    items = "".join(
        f"- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: {name}{comment}\n"
        f"  spec:\n    replicas: 1 # kpt-set: ${{replicas}}\n"
        for name in names
    )
    data = "".join(f"    {key}: {value!r}\n" for key, value in (config or {}).items())
    function_config = f"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n{data}" if data else ""
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}{function_config}".encode()


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """A `fnrun serve` process and a channel to it."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, address: str | None = None, credentials: Any = None,
                 protocol: str = "frames") -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="fnrun-serve-"))  # a unix socket's path is short
        self.address = address or f"unix:{self.dir / 'fnrun.sock'}"
        self.proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve", "--address", self.address, *args],
                                     cwd=REPO, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.channel = grpc.secure_channel(self.address, credentials) if credentials is not None else grpc.insecure_channel(self.address)
        self.messages, services = wire.modules()
        self.stub = services.FunctionEvaluatorStub(self.channel)
        grpc.channel_ready_future(self.channel).result(timeout=60)
        self.framed = (frames.socket_path(self.address) or "") + frames.SUFFIX
        if protocol == "grpc" and os.path.exists(self.framed):  # as a server without the framing: clients speak gRPC
            os.unlink(self.framed)
        elif self.address.startswith("unix:") and credentials is None:
            assert protocol == "grpc" or os.path.exists(self.framed), f"no framed socket at {self.framed} once gRPC answered"

    def ask(self, body: bytes, image: str, protocol: str, timeout: float = 120) -> frames.Reply:
        """One call over `protocol`, its answer or refusal as a Reply."""
        if protocol == "grpc":
            return grpc_call(self.stub, self.messages, image, body, timeout)
        sock = frames.connect(self.framed)
        assert sock is not None, f"nothing listens on {self.framed}"
        return frames.call(sock, image, body, 1 << 30, timeout)

    def call(self, body: bytes, image: str, timeout: float = 120) -> Any:
        return self.stub.EvaluateFunction(self.messages.EvaluateFunctionRequest(resource_list=body, image=image), timeout=timeout)

    def health(self, service: str = "") -> int:
        _, health_messages, health_services = wire.health()
        stub = health_services.HealthStub(self.channel)
        return stub.Check(health_messages.HealthCheckRequest(service=service), timeout=10).status

    def stop(self) -> tuple[int, str]:
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = self.proc.communicate(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode, stderr
