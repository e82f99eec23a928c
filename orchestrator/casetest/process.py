"""A case's command or script, run to completion or killed with everything it started: it runs
in its own session, and a timeout kills the whole process group (a script's `sleep` would
otherwise hold the output pipes open after bash is gone)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from .config import CaseError


def run(command: list[str], cwd: Path | str, env: dict[str, str], timeout: float, what: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr); a CaseError naming `what` when it does not finish in time."""
    child = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child.pid)
        child.communicate()
        raise CaseError(f"{what} did not finish in {timeout:g}s (killed)") from None
    except BaseException:
        _kill_group(child.pid)
        child.communicate()
        raise
    return child.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
