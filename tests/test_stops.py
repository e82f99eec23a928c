"""One way to stop: orchestrator.stops alone sets, reads or blocks fnrun's signal handling, and its
one mechanism holds a stop and raises it at the first safe point (the subprocess tests of a real
stop are in tests/cli/test_sigterm*.py and test_dropped_stop.py; these drive the mechanism in this
process, as a program calling the library would)."""

from __future__ import annotations

import ast
import os
import signal
from pathlib import Path

import pytest

from orchestrator import stops
from orchestrator.errors import EXIT_SIGINT, EXIT_SIGTERM, FunctionError, Interrupted, report_interrupt

PACKAGE = Path(__file__).resolve().parent.parent / "orchestrator"

#: what installs, reads, blocks or waits for a signal's handling
SIGNAL_APIS = {"signal", "getsignal", "pthread_sigmask", "sigwait", "sigwaitinfo", "sigtimedwait", "set_wakeup_fd", "siginterrupt"}

#: the modules but stops.py that may, each because it runs in a process of its own, never in fnrun's
ALLOWED = {
    # a forked worker child: leaves Ctrl-C and SIGTERM to its parent, which ends it
    "workers.py",
    # the fork server, a process of its own (forked or a new interpreter): ignores Ctrl-C (fnrun
    # ends it by closing its socket), wakes its loop on SIGCHLD, and resets both for its children
    "runtimes/host/zygote.py",
    # `fnrun wrap`, a function's own process inside its image: forwards the stops to its shell
    "wrap.py",
}


def _signal_calls(path: Path) -> list[int]:
    """Lines where `path` calls one of SIGNAL_APIS (as signal.X, through an alias of the module, or
    imported by name from it)."""
    tree = ast.parse(path.read_text(), str(path))
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "signal"}
        elif isinstance(node, ast.ImportFrom) and node.module == "signal":
            names |= {alias.asname or alias.name for alias in node.names if alias.name in SIGNAL_APIS}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SIGNAL_APIS and isinstance(func.value, ast.Name) and func.value.id in modules:
            found.append(node.lineno)
        elif isinstance(func, ast.Name) and func.id in names:
            found.append(node.lineno)
    return found


def test_only_stops_handles_signals_in_fnrun_process() -> None:
    calls = {str(path.relative_to(PACKAGE)): _signal_calls(path) for path in sorted(PACKAGE.rglob("*.py"))}
    others = {path: lines for path, lines in calls.items() if lines and path != "stops.py" and path not in ALLOWED}
    assert others == {}, "signal handling belongs in orchestrator/stops.py (held(), armed())"
    assert calls["stops.py"], "the scan must see stops.py's own calls"
    assert all(calls.get(path) for path in ALLOWED), "an allowed module no longer handles signals: drop it from ALLOWED"


def test_the_scan_sees_every_spelling(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import signal as s\nfrom signal import pthread_sigmask as mask\n"
                      "s.signal(2, s.SIG_IGN)\nmask(0, ())\nsignal_name = str(2)\n")
    assert _signal_calls(source) == [3, 4]


@pytest.fixture
def sigterm_default() -> object:
    """SIGTERM as a program that set nothing has it; put back after."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, previous)


def _stop(signum: int = signal.SIGTERM) -> None:
    os.kill(os.getpid(), signum)
    sum(range(1000))  # the handler runs by now


@pytest.mark.usefixtures("sigterm_default")
def test_a_held_stop_waits_for_the_block_then_raises_once_and_handlers_are_put_back() -> None:
    done = []
    with pytest.raises(Interrupted) as caught:
        with stops.held():
            _stop()
            done.append("the block ran to its end")
    assert done == ["the block ran to its end"]
    assert (caught.value.signum, caught.value.written) == (signal.SIGTERM, False)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.usefixtures("sigterm_default")
def test_a_stop_held_in_an_inner_block_waits_for_the_outer_one_and_raises_where_armed() -> None:
    done = []
    with pytest.raises(Interrupted):
        with stops.held():
            with stops.held():
                _stop()
            done.append("outer still holds")
            with stops.armed():
                done.append("never reached")
    assert done == ["outer still holds"]


@pytest.mark.usefixtures("sigterm_default")
def test_inside_armed_a_stop_raises_at_once() -> None:
    done = []
    with pytest.raises(Interrupted):
        with stops.held(), stops.armed():
            _stop()
            done.append("never reached")
    assert done == []


@pytest.mark.usefixtures("sigterm_default")
def test_a_held_stop_replaces_an_error_but_not_an_interrupt() -> None:
    with pytest.raises(Interrupted) as caught:
        with stops.held():
            _stop()
            raise FunctionError("the function failed because the stop cut it short")
    assert isinstance(caught.value.__context__, FunctionError)
    with pytest.raises(KeyboardInterrupt) as unwinding:
        with stops.held():
            _stop()
            raise KeyboardInterrupt()
    assert type(unwinding.value) is KeyboardInterrupt


@pytest.mark.usefixtures("sigterm_default")
def test_a_stop_that_waited_for_a_write_that_landed_says_it_was_written(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator.write.journal import signals_held

    with pytest.raises(Interrupted) as caught:
        with signals_held():
            _stop()
    assert caught.value.written
    assert report_interrupt(caught.value) == EXIT_SIGTERM
    assert capsys.readouterr().err == "fnrun: interrupted (SIGTERM); it came after the package was written\n"
    with pytest.raises(Interrupted) as cut:
        with signals_held():
            _stop()
            raise OSError("disk full")
    assert not cut.value.written


def test_an_ignored_stop_stays_ignored() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with stops.held(), stops.armed():
            _stop()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize(("err", "line", "code"), [
    (KeyboardInterrupt(), "fnrun: interrupted; nothing was written", EXIT_SIGINT),
    (Interrupted(signal.SIGTERM), "fnrun: interrupted (SIGTERM); nothing was written", EXIT_SIGTERM),
    (Interrupted(signal.SIGINT, written=True), "fnrun: interrupted; it came after the package was written", EXIT_SIGINT),
    (Interrupted(signal.SIGTERM, late=True), "fnrun: interrupted (SIGTERM); it came after fnrun had done its work", EXIT_SIGTERM),
])
def test_an_interrupt_is_told_by_its_fields(err: KeyboardInterrupt, line: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert report_interrupt(err) == code
    assert capsys.readouterr().err == f"{line}\n"
