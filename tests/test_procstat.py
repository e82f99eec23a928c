"""procstat reads a real process's stat line right: its parent, its process group, its state
through to a zombie and then gone, even when the command name holds spaces and parentheses."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator import procstat


def test_this_process_reads_as_the_kernel_reports_it() -> None:
    stat = procstat.read(os.getpid())
    assert stat is not None and procstat.running(stat)
    assert (stat.ppid, stat.pgrp) == (os.getppid(), os.getpgrp())
    assert stat.cpu_ticks >= 0
    again = procstat.read(os.getpid())
    assert again is not None and again.started == stat.started  # the same process, the same start


@pytest.mark.parametrize("grouping", [{"start_new_session": True}, {"process_group": 0}], ids=["setsid", "process_group"])
def test_a_child_s_parent_and_group_then_zombie_then_gone(grouping: dict[str, object], tmp_path: Path) -> None:
    odd_name = tmp_path / "a) b (c"  # the kernel names the process after this link: fields follow the last ')'
    odd_name.symlink_to(shutil.which("sleep") or "/bin/sleep")
    child = subprocess.Popen([str(odd_name), "60"], **grouping)  # type: ignore[call-overload]
    try:
        stat = procstat.read(child.pid)
        assert stat is not None and procstat.running(stat)
        assert (stat.ppid, stat.pgrp) == (os.getpid(), child.pid)  # both ways make it lead a group of its own
        assert stat.pgrp != os.getpgrp()
        assert Path(f"/proc/{child.pid}/comm").read_text() == "a) b (c\n"
        walked = procstat.processes()[child.pid]  # the walk over /proc reads it the same way
        assert (walked.ppid, walked.pgrp, walked.started) == (stat.ppid, stat.pgrp, stat.started)
    finally:
        child.kill()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet reaped
    zombie = procstat.read(child.pid)
    assert zombie is not None and zombie.state == "Z" and not procstat.running(zombie)
    assert (zombie.ppid, zombie.pgrp, zombie.started) == (os.getpid(), child.pid, stat.started)
    child.wait()
    assert procstat.read(child.pid) is None and child.pid not in procstat.processes()
    assert not procstat.running(None)
