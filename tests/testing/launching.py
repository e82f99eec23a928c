"""Helpers for the launcher's tests (orchestrator.launch): the installed `fnrun` as users run it,
with the launcher's debug lines on, and fnrun's own messages without them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from testing.pipeline_helpers import REPO, signal_when

FNRUN = Path(sys.executable).parent / "fnrun"  # the console script: what users run
DEBUG = {"FNRUN_DEBUG_LAUNCH": "1", "FNRUN_CACHE": "0"}
STARTED = re.compile(r"fnrun launcher: started container (\w+) early")


def said(stderr: str) -> list[str]:
    """fnrun's own messages, without the launcher's debug lines and with timings blanked."""
    return [re.sub(r"\d+\.\d+s", "_s", line) for line in stderr.splitlines() if not line.startswith("fnrun launcher:")]


def launch(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `fnrun ARGS` to the end; its result and its pid (on its containers' fnrun.pid label)."""
    proc = subprocess.Popen(
        [str(FNRUN), *args], stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, **DEBUG, **(env or {})},
    )
    stdout, stderr = proc.communicate(stdin, timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), proc.pid


def adopted(stderr: str) -> bool:
    """Whether the run adopted the container the launcher started early (the launcher's debug lines)."""
    started = STARTED.search(stderr)
    return started is not None and f"the run adopted container {started.group(1)}" in stderr


def signalled_at_start(args: list[str], signum: int, after: float) -> tuple[subprocess.Popen[str], str]:
    """`fnrun ARGS` sent `signum` `after` seconds in (while it imports itself, or just after), run
    to its end; the process and its stderr."""
    proc = subprocess.Popen([str(FNRUN), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **DEBUG, "PYTHONFAULTHANDLER": "1"})
    time.sleep(after)
    proc.send_signal(signum)
    try:
        _, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:  # say where it hangs: faulthandler prints every thread's stack on SIGABRT
        proc.send_signal(signal.SIGABRT)
        _, stderr = proc.communicate()
        raise AssertionError(f"fnrun did not end within 120 s of signal {signum} sent {after} s in:\n{stderr[-8000:]}") from None
    return proc, stderr


def signalled_in_function(args: list[str], marker: str, signum: int) -> tuple[subprocess.Popen[str], str]:
    """`fnrun ARGS` sent `signum` once its function has printed `marker`; the process and the rest of its stderr."""
    proc = subprocess.Popen([str(FNRUN), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, **DEBUG})
    return proc, signal_when(proc, marker, signum)
