"""The least any tool must do to run a function image once through the docker SDK.

`python bench/bare_run.py IMAGE STDIN_FILE` does one run in a fresh interpreter (bench_run.py
times that as the floor for a Python tool); bench_run.py also imports BareRun and times runs
in-process, with the client made beforehand, as the baseline of fnrun's overhead target.
Deliberately tiny: nothing but `docker` is imported, so the fresh-process timing holds no more
than interpreter start-up, the SDK and the engine.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import docker
from docker.types import LogConfig


class BareRunFailed(Exception):
    pass


class BareRun:
    """The least any tool must do to run a function image once, through the docker SDK.

    create (stdin open) -> attach -> start -> send the ResourceList, half-close -> read stdout to
    EOF -> wait -> remove. Same image and the same sandbox as fnrun's defaults (no network, nobody,
    no-new-privileges, read-only root with a tmpfs, no capabilities, memory/pids/CPU limits, no
    log driver), so the difference is fnrun's own work. The client is made once beforehand: the
    timing holds no interpreter start, no imports, no client creation, no version request."""

    def __init__(self, image: str, stdin: bytes, memory: str = "512m") -> None:
        self.api = docker.from_env().api
        self.image = image
        self.stdin = stdin
        self.min_output = len(stdin)  # an identity function's framed output holds at least the input
        self.host_config = self.api.create_host_config(
            network_mode="none",
            security_opt=["no-new-privileges"],
            read_only=True,
            tmpfs={"/tmp": "size=64m"},
            cap_drop=["ALL"],
            mem_limit=memory,
            pids_limit=256,
            nano_cpus=1_000_000_000,
            log_config=LogConfig(type="none"),
        )

    def __call__(self) -> float:
        api = self.api
        started = time.perf_counter()
        container = api.create_container(
            self.image, user="65534:65534", stdin_open=True, host_config=self.host_config,
            labels={"fnrun.bench": "bare"},
        )["Id"]
        try:
            wrapped = api.attach_socket(container, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            sock: socket.socket = getattr(wrapped, "_sock", wrapped)
            try:
                api.start(container)
                sock.sendall(self.stdin)
                sock.shutdown(socket.SHUT_WR)
                received = bytearray()
                while chunk := sock.recv(1 << 18):
                    received += chunk
            finally:
                sock.close()
            code = api.wait(container)["StatusCode"]
        finally:
            api.remove_container(container, force=True)
        seconds = time.perf_counter() - started
        if code != 0 or len(received) < self.min_output:
            raise BareRunFailed(f"bare run of {self.image} exited {code} with {len(received)} bytes of output")
        return seconds


if __name__ == "__main__":
    BareRun(sys.argv[1], Path(sys.argv[2]).read_bytes())()
