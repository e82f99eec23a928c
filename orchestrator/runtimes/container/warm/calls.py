"""One function call in a warm container: its /local, then the function as a fresh process.

The call goes to the container's PID 1 over the stream fnrun holds to it (warm.channel): the
helper first makes the container as a cold one would be (no process left, /tmp, /dev/shm,
/dev/mqueue and System V IPC empty), then starts the function with the call's arguments and
environment and, once it exits, kills whatever it left running. The output cap and the timeout
are the cold path's. Before that, when the call's function-config directory differs from the one
at /local, /local is changed: the staging directory refilled (warm.local), or, where /local is a
copy (a remote engine), emptied by the helper as root through the engine's exec (only root may
change the copy) and filled through the archive API.

A call that could not get a clean container (the helper's refusal, which no function can forge:
the frames are the helper's own) raises NotClean before the function ran: the container is
discarded and the call runs elsewhere.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from orchestrator.runtimes.container import runtime as container
from orchestrator.runtimes.container.upload import archive
from orchestrator.runtimes.container.warm.channel import NotClean
from orchestrator.runtimes.container.warm.local import fill
from orchestrator.runtimes.container.warm.plan import HELPER, Plan
from orchestrator.runtimes.container.warm.pool import Warm
from orchestrator.runtimes.protocol import Invocation, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.streams import pump

#: /local trees bigger than this are not copied per call: such a call runs cold (bind-mounted).
MAX_LOCAL_BYTES = 16 * 1024 * 1024
MAX_LOCAL_FILES = 2000


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


def call(api: docker.APIClient, warm: Warm, plan: Plan, inv: Invocation, stdin: bytes,
         on_stderr: StderrSink | None, on_stdout: StdoutSink | None) -> tuple[bytes, str, int]:
    """Run `inv` in `warm`; (stdout, stderr, exit code) as the cold runtime returns them."""
    return finish(begin(api, warm, plan, inv), stdin, on_stderr, on_stdout)


def begin(api: docker.APIClient, warm: Warm, plan: Plan, inv: Invocation) -> Started:
    """/local, then the function's process, which waits for its stdin (a call whose turn has not
    come yet may be started: warm.spawn)."""
    try:
        if warm.local != inv.local_dir:
            _local(api, warm, inv)
    except docker.errors.APIError as err:
        if err.status_code in (404, 409):  # the container ended on its own (idle too long) or went
            raise NotClean(f"the container is gone: {err.explanation or err}") from None
        raise
    except OSError as err:  # the engine connection broke before the function started
        raise NotClean(f"the engine connection failed: {err}") from None
    warm.channel.start(plan.argv, dict(inv.env), plan.zygote_for(dict(inv.env)))
    return Started(warm, inv)


def finish(started: Started, stdin: bytes, on_stderr: StderrSink | None,
           on_stdout: StdoutSink | None) -> tuple[bytes, str, int]:
    """Feed the started call its stdin and collect what it answers; the timeout counts from here."""
    done = started.warm.channel.converse(started.inv, stdin, on_stderr, on_stdout)
    started.warm.calls += 1
    return done


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
