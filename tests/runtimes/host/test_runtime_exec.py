"""The exec runtime with real processes: arguments, environment, working directory, the process group on timeout and signals, errors (what every runtime owes is in tests/runtimes/test_protocol.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError, InputError
from orchestrator.runtimes import Invocation, Sandbox
from orchestrator.runtimes.host.exec import ExecRuntime
from testing.processes import alive, gone_within

REPO = Path(__file__).resolve().parents[3]


def script(directory: Path, name: str, body: str) -> Path:
    path = directory / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def run(path: Path | str, stdin: bytes = b"", on_stderr=None, **fields):
    invocation = Invocation(name=str(path), exec_path=Path(path), **fields)
    return ExecRuntime().run(invocation, stdin, on_stderr)


def test_protocol_args_env_and_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FROM_HOST", "host")
    monkeypatch.setenv("OVERRIDDEN", "host")
    fn = script(
        tmp_path,
        "fn.py",
        """
        import os, sys
        data = sys.stdin.buffer.read()
        print(os.getcwd(), sys.argv[1:], os.environ["FROM_HOST"], os.environ["OVERRIDDEN"], file=sys.stderr)
        sys.stdout.buffer.write(data[::-1])
        """,
    )
    out = run("fn.py", b"abc", local_dir=tmp_path, args=("--k=v", "x"), env={"OVERRIDDEN": "fn"})
    assert out.exit_code == 0
    assert out.stdout == b"cba"
    assert out.stderr == f"{tmp_path} ['--k=v', 'x'] host fn\n"
    assert out.duration > 0
    assert fn.exists()


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    fn = script(
        tmp_path,
        "slow.py",
        f"""
        import subprocess, time
        child = subprocess.Popen(["sleep", "60"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
    )
    started = time.monotonic()
    with pytest.raises(FunctionError, match=r"function .*slow.py timed out after 1.5s"):
        run(fn, sandbox=Sandbox(timeout=1.5))
    assert time.monotonic() - started < 5
    grandchild = int(pid_file.read_text())
    assert gone_within(grandchild, 5.0)


def test_lingering_child_after_closing_pipes_times_out(tmp_path: Path) -> None:
    fn = script(tmp_path, "linger.py", "import os, time\nfor fd in (0, 1, 2): os.close(fd)\ntime.sleep(60)\n")
    with pytest.raises(FunctionError, match="timed out after 1s"):
        run(fn, sandbox=Sandbox(timeout=1.0))


def test_unusable_paths_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"exec function .*missing.py: no such file"):
        run(tmp_path / "missing.py")
    plain = tmp_path / "plain.py"
    plain.write_text("print(1)\n")
    with pytest.raises(InputError, match=r"exec function .*plain.py: not executable"):
        run(plain)
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x00\x01 not a program")
    garbage.chmod(0o755)
    with pytest.raises(InputError, match=r"exec function .*garbage: cannot run it: Exec format error"):
        run(garbage)
    with pytest.raises(InputError, match="no such file"):
        run(tmp_path)


INTERRUPTED_CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from orchestrator.runtimes import Invocation
    from orchestrator.runtimes.host.exec import ExecRuntime
    def relay(line):
        print(line, flush=True)
    try:
        ExecRuntime().run(Invocation(name="sleepy", exec_path=Path(sys.argv[1])), b"", relay)
    except KeyboardInterrupt as err:
        print("interrupted", type(err).__name__, flush=True)
        sys.exit(130)
    """
)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_kills_the_process_group(tmp_path: Path, signum: int) -> None:
    fn = script(
        tmp_path,
        "sleepy.py",
        """
        import subprocess, sys, time
        child = subprocess.Popen(["sleep", "60"])
        print(child.pid, file=sys.stderr, flush=True)
        time.sleep(60)
        """,
    )
    parent = subprocess.Popen([sys.executable, "-c", INTERRUPTED_CHILD, str(fn)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        grandchild = int(parent.stdout.readline())
        assert alive(grandchild)
        parent.send_signal(signum)
        assert parent.wait(timeout=10) == 130
    finally:
        parent.kill()
        parent.wait()
        assert parent.stdout is not None
        parent.stdout.close()
    assert gone_within(grandchild, 5.0)


def test_signal_guard_holds_signals_during_critical_requests() -> None:
    """A SIGTERM while a container is being created is delivered after, never lost or mid-request."""
    from orchestrator.errors import Interrupted
    from orchestrator.runtimes.supervise.interrupts import SignalGuard

    previous = signal.getsignal(signal.SIGTERM)
    completed = []
    with pytest.raises(Interrupted) as caught:
        with SignalGuard() as guard:
            with guard.held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                completed.append("create")
            with guard.armed():
                completed.append("never reached")
    assert completed == ["create"]
    assert caught.value.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is previous


def test_signal_guard_leaves_ignored_signals_ignored() -> None:
    from orchestrator.runtimes.supervise.interrupts import SignalGuard

    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with SignalGuard() as guard, guard.armed():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)
