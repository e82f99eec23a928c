"""What a run shows on stderr: plain lines without a terminal (`--quiet`, `--verbose`), and a live
display in a real terminal (tmux: the screen as a user sees it)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, assert_one_line_error, deployment, fnrun, function_config, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}


def _package(root: Path, sleep: str = "0", fail: bool = False) -> Path:
    files = {
        "app/deploy.yaml": deployment("web"),
        "app/1-label.yaml": function_config("fnrun-test/label:v1", {"team": "web"}, name="label"),
        "app/2-sleep.yaml": function_config("fnrun-test/sleep:v1", {"seconds": sleep}, name="slow"),
    }
    if fail:
        files["app/3-fail.yaml"] = function_config("fnrun-test/fail:v1", {"message": "fail: it broke", "exitCode": "3"}, name="bad")
    return write_package(root, files)


def test_without_a_terminal_one_line_per_function_and_a_summary(tmp_path: Path) -> None:
    _package(tmp_path)
    result = fnrun("run", str(tmp_path), env=PLAIN)
    assert result.code == 0, result
    status = [line for line in result.stderr.splitlines() if line.startswith("[ok]")]
    assert len(status) == 2
    assert status[0].startswith("[ok] fnrun-test/label:v1 (") and status[0].endswith("s, 2 changed)")
    assert status[1].startswith("[ok] fnrun-test/sleep:v1 (") and status[1].endswith("s, no changes)")
    assert "[fnrun-test/sleep:v1] sleep: sleeping 0s" in result.stderr  # function stderr, prefixed
    last = result.stderr.splitlines()[-1]
    assert last.startswith("fnrun run: 2 functions, 2 resources changed, 2 files written (0 created, 2 updated, 0 deleted, 1 unchanged) in ")


def test_quiet_is_silent_on_success_and_shows_only_the_failure(tmp_path: Path) -> None:
    _package(tmp_path / "ok")
    quiet = fnrun("run", str(tmp_path / "ok"), "--quiet", env=PLAIN)
    assert quiet.code == 0, quiet
    assert quiet.stderr == "" and quiet.stdout == ""
    _package(tmp_path / "bad", fail=True)
    failed = fnrun("run", str(tmp_path / "bad"), "-q", env=PLAIN)
    assert_one_line_error(failed, "exit code 3", code=1)
    assert failed.stderr.splitlines() == [
        "[fnrun-test/fail:v1] fail: it broke",
        next(line for line in failed.stderr.splitlines() if line.startswith("[failed] fnrun-test/fail:v1 (")),
        "fnrun: error: function fnrun-test/fail:v1 failed with exit code 3",
    ]


def test_verbose_shows_where_each_function_runs_and_every_file_written(tmp_path: Path) -> None:
    _package(tmp_path)
    result = fnrun("run", str(tmp_path), "--verbose", env=PLAIN)
    assert result.code == 0, result
    lines = result.stderr.splitlines()
    assert "[run] fnrun-test/label:v1 (declared in app/1-label.yaml, scope app/)" in lines
    assert lines[-2:] == ["  updated app/2-sleep.yaml", "  updated app/deploy.yaml"]


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def _screen(session: str) -> list[str]:
    return [line.rstrip() for line in _tmux("capture-pane", "-p", "-t", session).splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (the terminal emulator this test reads the screen of)")
def test_a_terminal_gets_a_live_board_and_a_summary(tmp_path: Path) -> None:
    """fnrun in a real terminal (a tmux pane, 100x30): while the slow function runs the board shows
    it running with a ticking duration; at the end, every function done and the summary."""
    _package(tmp_path, sleep="4")
    session = f"fnrun-test-{os.getpid()}"
    command = f"cd {shlex.quote(str(REPO))} && GITHUB_ACTIONS= {shlex.quote(sys.executable)} -m orchestrator run {shlex.quote(str(tmp_path))}; echo EXIT=$?; sleep 60"
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", command)
    try:
        running = _wait_for(session, lambda screen: any("fnrun-test/sleep:v1" in l and "running" in l for l in screen))
        sleep_row = next(l for l in running if "fnrun-test/sleep:v1" in l)
        assert "2-sleep.yaml" in sleep_row
        assert any(l.startswith("✓ fnrun-test/label:v1") and "1-label.yaml" in l and "2 changed" in l for l in running), running
        final = _wait_for(session, lambda screen: any(l.startswith("EXIT=") for l in screen))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "EXIT=0" in final
    rows = [l for l in final if l.startswith("✓ ")]
    assert len(rows) == 2, final
    assert rows[1].startswith("✓ fnrun-test/sleep:v1") and "no changes" in rows[1]
    seconds = float(rows[1].split()[3].rstrip("s"))
    assert 4 <= seconds < 30
    assert any(l.startswith("fnrun run: 2 functions, 2 resources changed, 2 files written") for l in final), final
    assert not any("sleep: sleeping" in l for l in final)  # a healthy function's stderr stays off the screen
    assert not any("running" in l for l in final)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (the terminal emulator this test reads the screen of)")
def test_a_terminal_shows_a_failed_functions_stderr(tmp_path: Path) -> None:
    _package(tmp_path, fail=True)
    session = f"fnrun-fail-{os.getpid()}"
    command = f"cd {shlex.quote(str(REPO))} && GITHUB_ACTIONS= {shlex.quote(sys.executable)} -m orchestrator run {shlex.quote(str(tmp_path))}; echo EXIT=$?; sleep 60"
    _tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", command)
    try:
        final = _wait_for(session, lambda screen: any(l.startswith("EXIT=") for l in screen))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert "EXIT=1" in final
    assert "[fnrun-test/fail:v1] fail: it broke" in final
    assert any(l.startswith("✗ fnrun-test/fail:v1") and "failed" in l for l in final), final
    assert final[-2] == "fnrun: error: function fnrun-test/fail:v1 failed with exit code 3"


def _wait_for(session: str, ready: Callable[[list[str]], bool], timeout: float = 120) -> list[str]:
    deadline = time.monotonic() + timeout
    screen: list[str] = []
    while time.monotonic() < deadline:
        screen = _screen(session)
        if ready(screen):
            return screen
        time.sleep(0.1)
    raise AssertionError("the screen never showed what was expected:\n" + "\n".join(screen))


def _terminal_output(root: Path, environ: dict[str, str]) -> str:
    """What fnrun writes to a real terminal (a pseudo-terminal as its stdout and stderr)."""
    import pty

    leader, follower = pty.openpty()
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(GITHUB_ACTIONS="", TERM="xterm-256color", PYTHONPATH=str(REPO), **environ)
    process = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(root)], stdout=follower, stderr=follower, env=env, cwd=REPO)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return b"".join(chunks).decode(errors="replace")


def _colours(text: str) -> set[str]:
    """The SGR colour codes (foreground and background, 8, 16, 256 or true colour) in `text`."""
    found = set()
    for sequence in text.split("\x1b[")[1:]:
        codes = sequence.split("m", 1)[0]
        if not all(part.isdigit() for part in codes.split(";") if part):
            continue
        found |= {code for code in codes.split(";") if code and (30 <= int(code) <= 49 or 90 <= int(code) <= 107)}
    return found


def test_no_color_takes_the_colour_out_of_the_live_display(tmp_path: Path) -> None:
    """The live display follows NO_COLOR (no-color.org): the same board, no colour codes."""
    coloured = _terminal_output(_package(tmp_path / "a"), {})
    plain = _terminal_output(_package(tmp_path / "b"), {"NO_COLOR": "1"})
    assert _colours(coloured), coloured[-400:]
    assert not _colours(plain), plain[-400:]
    assert "fnrun run: 2 functions, 2 resources changed" in plain.replace("\r\n", " ").replace("\n", " ")
