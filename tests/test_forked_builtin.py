"""Builtins in a fork of fnrun: the same protocol, limits and clean-up as a child interpreter.

The catalog's behaviour in a fork is checked against the images in test_builtin.py; here, probe
modules do what catalog code never does (hang, exhaust memory, crash, read the environment) to
show the fork is held to the timeout, the memory limit and a clean environment, and reaped."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError
from orchestrator.runtimes import forked
from orchestrator.runtimes.base import Invocation, Sandbox
from orchestrator.runtimes.builtin import FUNCTIONS_DIR
from orchestrator.runtimes.confine import confinement
from orchestrator.runtimes.exec import run_process

PROBE = '''
import os, sys
if __name__ == "__main__":
    what = sys.argv[1]
    if what == "echo":
        sys.stdout.write(sys.stdin.read().upper())
        print("args", sys.argv[2:], file=sys.stderr)
    elif what == "env":
        print(sorted(os.environ), os.getcwd())
    elif what == "hang":
        while True:
            pass
    elif what == "hog":
        hoard = [bytearray(1 << 20) for _ in range(4096)]
    elif what == "crash":
        raise RuntimeError("boom")
    elif what == "exit":
        sys.exit(3)
    elif what == "write":
        open(sys.argv[2], "w").write("x")
'''


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"fnrun_fork_probe_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def run(module: str, *args: str, stdin: bytes = b"", timeout: float = 30, cwd: str = "/"):
    invocation = Invocation(name=f"builtin {module}", args=tuple(args), sandbox=Sandbox(timeout=timeout))
    env = {"PATH": os.defpath, "ONLY_THIS": "1"}
    confine = confinement(256 << 20)
    lines: list[str] = []
    spawn = lambda: forked.spawn(module, list(args), env, cwd, confine)  # noqa: E731
    output = run_process([], invocation, env, cwd, stdin, lines.append, confine, spawn)
    return output, lines


def no_zombies() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_stdin_stdout_stderr_and_arguments(probe: str) -> None:
    output, lines = run(probe, "echo", "a=b", stdin=b"kind: ConfigMap\n")
    assert (output.exit_code, output.stdout) == (0, b"KIND: CONFIGMAP\n")
    assert lines == ["args ['a=b']"]
    assert no_zombies()


def test_the_child_sees_only_its_environment_and_directory(probe: str, tmp_path: Path) -> None:
    output, _ = run(probe, "env", cwd=str(tmp_path))
    assert output.stdout.decode().strip() == f"['ONLY_THIS', 'PATH'] {tmp_path}"


def test_a_runaway_fork_is_killed_at_the_timeout(probe: str) -> None:
    with pytest.raises(FunctionError, match="timed out after 0.5s"):
        run(probe, "hang", timeout=0.5)
    assert no_zombies()


def test_memory_beyond_the_limit_is_refused(probe: str) -> None:
    output, lines = run(probe, "hog")
    assert output.exit_code == 1 and lines[-1] == "MemoryError"


def test_a_crash_is_the_interpreter_s_traceback_and_exit_1(probe: str) -> None:
    output, lines = run(probe, "crash")
    assert output.exit_code == 1 and lines[-1] == "RuntimeError: boom"
    assert run(probe, "exit")[0].exit_code == 3


def test_the_file_system_is_read_only_to_the_fork(probe: str, tmp_path: Path) -> None:
    from orchestrator.runtimes.confine import available

    if not available():
        pytest.skip("this kernel refuses the namespaces a builtin is confined in")
    output, lines = run(probe, "write", str(tmp_path / "escaped"))
    assert output.exit_code == 1 and "Read-only file system" in lines[-1]
    assert not (tmp_path / "escaped").exists()


def test_only_this_fnrun_s_functions_fork() -> None:
    assert forked.can_fork("functions.set_labels", FUNCTIONS_DIR)
    assert not forked.can_fork("functions.kpt_catalog.starlark", FUNCTIONS_DIR)  # the Go runtime's threads
    assert not forked.can_fork("functions.set_labels", FUNCTIONS_DIR.parent / "elsewhere")
