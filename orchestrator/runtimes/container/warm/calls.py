"""One function call in a warm container: its /local, then the function as a fresh process.

The call goes through the Engine API's exec: `fnrun-warm call NONCE -- ARGV` as the sandbox user,
with the call's environment and its stdin attached; the helper first makes the container as a
cold one would be (no process left, /tmp, /dev/shm, /dev/mqueue and System V IPC empty), then
runs the function and, once it exits, kills whatever it left running. Stdin, stdout, stderr, the
output cap and the timeout are the container runtime's own (runtime.converse). Before that, when
the call's function-config directory differs from the one at /local, /local is changed: the
staging directory refilled (warm.local), or, where /local is a copy (a remote engine), emptied by
the helper as root (only root may change the copy) and filled through the archive API.

A call that could not get a clean container (the helper's nonce line, which no function can write
since none sees the nonce) raises NotClean before the function ran: the container is discarded
and the call runs elsewhere.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import docker
import docker.errors

from orchestrator.runtimes.container import runtime as container
from orchestrator.runtimes.container.upload import archive
from orchestrator.runtimes.container.warm.local import fill
from orchestrator.runtimes.container.warm.plan import HELPER, Plan
from orchestrator.runtimes.container.warm.pool import Warm
from orchestrator.runtimes.protocol import Invocation, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.streams import pump

NOT_CLEAN = 213  # the helper's exit code when it ran nothing (fnrun-warm.c)
#: /local trees bigger than this are not copied per call: such a call runs cold (bind-mounted).
MAX_LOCAL_BYTES = 16 * 1024 * 1024
MAX_LOCAL_FILES = 2000


class NotClean(Exception):
    """The warm container could not be made as a cold one would be; the function did not run."""


def fits(local_dir: Path | None) -> bool:
    """Whether a call's /local is small enough to copy in per call."""
    if local_dir is None:
        return True
    files = size = 0
    for current, dirs, names in os.walk(local_dir):
        files += len(names) + len(dirs)
        if files > MAX_LOCAL_FILES:
            return False
        for name in names:
            try:
                size += os.lstat(os.path.join(current, name)).st_size
            except OSError:
                continue
        if size > MAX_LOCAL_BYTES:
            return False
    return True


@dataclass
class Started:
    """A call's process, started in its warm container and waiting for its stdin."""

    warm: Warm
    inv: Invocation
    exec_id: str
    attached: container.Attached
    marker: str  # the helper's line for "not clean", with this call's nonce

    def close(self) -> None:
        self.attached.close()


def call(api: docker.APIClient, warm: Warm, plan: Plan, inv: Invocation, stdin: bytes,
         on_stderr: StderrSink | None, on_stdout: StdoutSink | None) -> tuple[bytes, str, int]:
    """Run `inv` in `warm`; (stdout, stderr, exit code) as the cold runtime returns them."""
    return finish(api, begin(api, warm, plan, inv), stdin, on_stderr, on_stdout)


def begin(api: docker.APIClient, warm: Warm, plan: Plan, inv: Invocation) -> Started:
    """/local, then the helper and the function's process, which waits for its stdin (a call
    whose turn has not come yet may be started: warm.spawn)."""
    nonce = secrets.token_hex(12)
    try:
        if warm.local != inv.local_dir:
            _local(api, warm, inv)
        exec_id = api.exec_create(warm.container_id, [HELPER, "call", nonce, "--", *plan.argv], stdin=True, stdout=True,
                                  stderr=True, environment=dict(inv.env))["Id"]
        attached = container.Attached(api, warm.container_id, exec_id)
    except docker.errors.APIError as err:
        if err.status_code in (404, 409):  # the container ended on its own (idle too long) or went
            raise NotClean(f"the container is gone: {err.explanation or err}") from None
        raise
    except OSError as err:  # the engine connection broke before the function started
        raise NotClean(f"the engine connection failed: {err}") from None
    return Started(warm, inv, exec_id, attached, f"fnrun-warm {nonce}: ")


def finish(api: docker.APIClient, started: Started, stdin: bytes, on_stderr: StderrSink | None,
           on_stdout: StdoutSink | None) -> tuple[bytes, str, int]:
    """Feed the started call its stdin and collect what it answers; the timeout counts from here."""
    refused: list[str] = []
    inv = started.inv
    try:
        stdout, stderr, deadline = container.converse(inv, started.attached, stdin, _without(started.marker, refused, on_stderr), on_stdout)
    finally:
        started.close()
    code = exit_code(api, started.exec_id, inv, deadline)
    started.warm.calls += 1
    if code == NOT_CLEAN and refused:
        raise NotClean(refused[0])
    return stdout, stderr, code


def _without(marker: str, refused: list[str], sink: StderrSink | None) -> Callable[[str], None]:
    def feed(line: str) -> None:
        if line.startswith(marker):
            refused.append(line[len(marker):])
        elif sink is not None:
            sink(line)

    return feed


def _local(api: docker.APIClient, warm: Warm, inv: Invocation) -> None:
    """Make /local hold the call's function-config directory, and nothing else."""
    if warm.staging is not None:
        warm.local = None
        if inv.local_dir is not None:
            fill(warm.staging, inv.local_dir)
        warm.local = inv.local_dir
        return
    if warm.local is not None:
        code = helper(api, warm.container_id, ["clear", "/local"], user="0:0")
        if code != 0:
            raise NotClean(f"cannot empty /local (helper exit code {code})")
        warm.local = None
    if inv.local_dir is not None:
        api.put_archive(warm.container_id, "/local", archive(inv.local_dir, "/local", inv.name))
        warm.local = inv.local_dir


def helper(api: docker.APIClient, container_id: str, args: list[str], user: str = "", timeout: float = 60.0) -> int:
    """Run the helper in the container with no stdin and wait for its exit code (-1: it did not
    finish in time). Its output is read through the same attach as a call's (the SDK's own
    exec_start breaks its ssh pipe on close)."""
    exec_id = api.exec_create(container_id, [HELPER, *args], stdin=False, stdout=True, stderr=True, user=user)["Id"]
    attached = container.Attached(api, container_id, exec_id)
    deadline = time.monotonic() + timeout
    try:
        stream = attached.stream
        pump(None, b"", stream.send, lambda: None, {stream.fd: lambda _: None}, deadline,
             {stream.fd: stream.recv} if stream.recv else None)
    finally:
        attached.close()
    code = _wait(api, exec_id, deadline)
    return -1 if code is None else code


def exit_code(api: docker.APIClient, exec_id: str, inv: Invocation, deadline: float | None) -> int:
    """The exec's exit code: its streams are closed, the engine records the exit a moment later."""
    code = _wait(api, exec_id, deadline)
    if code is None:
        raise container.timed_out(inv)
    return code


def _wait(api: docker.APIClient, exec_id: str, deadline: float | None) -> int | None:
    pause = 0.001
    while True:
        state = api.exec_inspect(exec_id)
        if not state.get("Running") and state.get("ExitCode") is not None:
            return int(state["ExitCode"])
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
