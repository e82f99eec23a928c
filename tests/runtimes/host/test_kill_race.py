"""A builtin's child killed at once: `--timeout 0.001` expires while the fork server's child may
not yet have made its own session. The server kills the child by pid as well as by group, and
reaps it; the run ends with the timeout error instead of waiting on it."""

from __future__ import annotations

import os
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError
from orchestrator.runtimes.host import forked
from orchestrator.runtimes.host.exec import run_process
from orchestrator.runtimes.protocol import Invocation, Sandbox
from testing.stress import descendants


@pytest.mark.skipif(sys.platform != "linux", reason="fork and sessions as on Linux")
def test_a_child_killed_at_once_is_killed_and_reaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"fnrun_reader_probe_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        import os
        while os.read(0, 1 << 16):
            pass
        os.read(0, 1)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    server = forked.ForkServer()
    invocation = Invocation(name="probe", sandbox=Sandbox(timeout=0.001))
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            spawn = lambda: server.spawn(name, [], {}, str(tmp_path), 256 << 20)  # noqa: E731
            run_process(["probe"], invocation, {}, str(tmp_path), b"x" * (1 << 20), spawn=spawn)
            outcome.append(None)
        except BaseException as err:  # noqa: BLE001 - carried to the test's thread
            outcome.append(err)

    try:
        server.start()
        worker = threading.Thread(target=attempt, daemon=True)  # a regression hangs here, not the suite
        worker.start()
        worker.join(30)
        assert not worker.is_alive(), "the run waited on a child that was never killed"
        assert isinstance(outcome[0], FunctionError) and "probe timed out after 0.001s" in str(outcome[0])
        assert server.pid is not None and descendants(server.pid) == []  # killed and reaped
    finally:
        server.stop()
