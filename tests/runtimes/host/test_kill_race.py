"""A child killed before it has made its own session: `--timeout 0.001` on a forked builtin can
expire while the fork has not yet called setsid, so there is no process group of its pid to kill.
The child must still die and the run end with the timeout error, not wait on it forever."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError
from orchestrator.runtimes.protocol import Invocation, Sandbox
from orchestrator.runtimes.host.exec import run_process
from orchestrator.runtimes.host.forked import ForkedProcess


def slow_to_settle() -> ForkedProcess:
    """A fork that makes its session only after a while, then waits on its stdin (as a builtin
    whose parent never got to close it would)."""
    pipes = [os.pipe() for _ in range(3)]
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.dup2(pipes[0][0], 0)
            os.dup2(pipes[1][1], 1)
            os.dup2(pipes[2][1], 2)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            time.sleep(0.5)
            os.setsid()
            while os.read(0, 1 << 16):
                pass
            os.read(0, 1)  # blocks while anyone holds the write end
        finally:
            os._exit(0)
    os.close(pipes[0][0])
    os.close(pipes[1][1])
    os.close(pipes[2][1])
    return ForkedProcess(pid, os.fdopen(pipes[0][1], "wb", 0), os.fdopen(pipes[1][0], "rb", 0), os.fdopen(pipes[2][0], "rb", 0))


@pytest.mark.skipif(sys.platform != "linux", reason="fork and sessions as on Linux")
def test_a_child_killed_before_its_session_exists_is_still_killed(tmp_path: Path) -> None:
    invocation = Invocation(name="probe", sandbox=Sandbox(timeout=0.001))
    spawned: list[int] = []

    def spawn() -> ForkedProcess:
        child = slow_to_settle()
        spawned.append(child.pid)
        return child

    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            run_process(["probe"], invocation, {}, str(tmp_path), b"x" * (1 << 20), spawn=spawn)
            outcome.append(None)
        except BaseException as err:  # noqa: BLE001 - carried to the test's thread
            outcome.append(err)

    worker = threading.Thread(target=attempt, daemon=True)  # a regression hangs here, not the suite
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.kill(spawned[0], signal.SIGKILL)  # free the stuck wait, then fail
        worker.join(5)
        pytest.fail("the run waited on a child that was never killed")
    assert isinstance(outcome[0], FunctionError) and "probe timed out after 0.001s" in str(outcome[0])
    with pytest.raises(ChildProcessError):  # reaped: no such child any more
        os.waitpid(spawned[0], os.WNOHANG)
