"""A write is all-or-nothing across files even when fnrun is SIGKILLed mid-write (the journal),
and two fnrun processes never lose each other's updates (the lock and the stale-input check)."""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from orchestrator import procstat
from orchestrator.read.package import read_package
from orchestrator.write import journal
from orchestrator.write.staging import Stager
from testing.in_process import fnrun_here
from testing.pipeline_helpers import REPO, write_package

FILES = 2000


def make_package(root: Path, files: int = FILES) -> Path:
    return write_package(root, {
        f"d{n % 20}/cm-{n}.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{n}  # keep\ndata:\n  version: old\n"
        for n in range(files)
    })


def file_states(root: Path) -> dict[str, str]:
    """Per resource file: "old" or "new"; anything else is a torn write."""
    states = {}
    for path in sorted(root.rglob("*.yaml")):
        text = path.read_text()
        states[path.relative_to(root).as_posix()] = "new" if "version: new" in text else "old" if "version: old" in text else text
    return states


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("*") if p.name.endswith(journal.TEMP_SUFFIX) or p.name.startswith(journal.JOURNAL))


def start_sink(root: Path, content: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "sink", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, start_new_session=True,
    )
    assert process.stdin is not None
    try:
        process.stdin.write(content.encode())
        process.stdin.close()
    except BrokenPipeError:
        pass
    return process


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Power loss, as far as a test can cause it: SIGKILL to fnrun and its staging helper at once."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    deadline = time.monotonic() + 30  # a process in a system call (an fsync) dies when it returns
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (a zombie does not: it only waits to be reaped)."""
    return any(stat.pgrp == pgid and procstat.running(stat) for stat in procstat.processes().values())


def test_sigkill_at_random_instants_leaves_every_file_all_old_or_all_new_together(tmp_path: Path, fast_subset: bool) -> None:
    """14 kills of a 2000-file write, every other one in the window where files are renamed; in
    the fast subset 6 kills of a 500-file write, whose rename window (a fsync per file) still
    outlasts the delays drawn in it, and whose other kills are drawn over its shorter run."""
    files = 500 if fast_subset else FILES
    share = files / FILES
    pristine = make_package(tmp_path / "pristine", files)
    new_list = fnrun_here("source", str(pristine)).stdout.replace("version: old", "version: new")
    rng = random.Random(20261123)
    outcomes = []
    for attempt in range(6 if fast_subset else 14):
        package = tmp_path / f"pkg{attempt}"
        shutil.copytree(pristine, package)
        process = start_sink(package, new_list)
        if attempt % 2 == 0:
            # In the rename window: kill as soon as the journal is there, or a little later.
            delay = rng.uniform(0, 0.03)
            deadline = time.monotonic() + 60
            while not (package / journal.JOURNAL).exists() and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.0005)
            time.sleep(delay)
        else:
            time.sleep(rng.uniform(0.05, 0.5 + 1.5 * share))  # anywhere: reading, staging, committing, or done
        kill_group(process)

        # any command that reads the package recovers it (what it does, not how fnrun starts: in a fork)
        after = fnrun_here("source", str(package))
        assert after.code == 0, after.stderr
        found = file_states(package)
        states = set(found.values())
        assert states in ({"old"}, {"new"}), f"attempt {attempt}: torn package {states}"
        assert len(found) == files
        assert leftovers(package) == [], f"attempt {attempt}: left behind {leftovers(package)[:5]}"
        outcomes.append((states.pop(), "finished a write that was interrupted" in after.stderr))
        shutil.rmtree(package)
    assert any(state == "new" and recovered for state, recovered in outcomes), outcomes  # the journal was exercised


def test_a_cut_off_commit_is_rolled_forward_by_the_next_read_and_said(tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", files=6)
    stager = Stager(package)
    targets = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.yaml"))
    for rel in targets[:4]:
        stager.submit(rel, (package / rel).read_bytes().replace(b"version: old", b"version: new"))
    renames = [(temp, package / rel) for rel, temp in stager.temps.items()]
    journal.begin(package, renames, [targets[5]])
    journal.apply_entries(package, renames[:2], [])  # ... and the power went out here

    result = fnrun_here("source", str(package), cwd=REPO)

    assert result.code == 0, result.stderr
    assert "finished a write that was interrupted (5 file(s)" in result.stderr
    states = file_states(package)
    assert [states[rel] for rel in targets[:4]] == ["new"] * 4 and states[targets[4]] == "old"
    assert targets[5] not in states
    assert leftovers(package) == []


def test_temp_files_of_a_write_killed_while_staging_are_removed(tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", files=3)
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    stray = package / "d0" / f".cm-0.yaml.{dead.pid}-1{journal.TEMP_SUFFIX}"
    stray.write_text("half")
    staging = subprocess.Popen(["sleep", "60"])  # stands for another fnrun, staging right now
    try:
        live = package / "d0" / f".cm-0.yaml.{staging.pid}-9{journal.TEMP_SUFFIX}"
        live.write_text("busy")
        read_package(package)
        assert not stray.exists()
        assert live.exists()
    finally:
        staging.kill()
        staging.wait()


def slow_label(tmp_path: Path, name: str, seconds: float) -> Path:
    """An exec function that sleeps, then sets `data.<name>` on every item."""
    return _label_function(tmp_path, name, f"time.sleep({seconds})")


def gated_label(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """An exec function that says it has its input (fnrun has read the package) by creating
    `started`, waits until the test creates `go`, then sets `data.<name>` on every item: the
    test edits the package between the two, whatever the machine's load."""
    started, go = tmp_path / f"{name}.started", tmp_path / f"{name}.go"
    wait = f"open({str(started)!r}, 'w').close()\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)"
    return _label_function(tmp_path, name, wait), started, go


def _label_function(tmp_path: Path, name: str, pause: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(
        "#!/usr/bin/env python3\n"
        "import os, sys, time, yaml\n"
        "rl = yaml.safe_load(sys.stdin)\n"
        f"{pause}\n"
        f"for item in rl['items']: item.setdefault('data', {{}})['{name}'] = 'set'\n"
        "yaml.safe_dump(rl, sys.stdout)\n"
    )
    path.chmod(0o755)
    return path


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Until `path` exists (the function has its input); a run that ended first fails the test."""
    deadline = time.monotonic() + 120
    while not path.exists():
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_two_concurrent_runs_never_lose_an_update(tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", files=40)
    (slow, slow_started, slow_go), fast_ = gated_label(tmp_path, "slow"), slow_label(tmp_path, "fast", 0.2)

    def start(fn: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "run", str(package), "--exec", str(fn), "--enable-exec"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )

    first = start(slow)
    _wait_for(slow_started, first)  # both have read the package before either writes
    second = start(fast_)
    second_out, second_err = second.communicate(timeout=120)
    slow_go.touch()
    first_out, first_err = first.communicate(timeout=120)

    assert second.returncode == 0, second_err
    assert first.returncode == 1, first_err
    errors = [line for line in first_err.splitlines() if line.startswith("fnrun: error:")]
    assert len(errors) == 1 and "changed on disk after fnrun read it" in errors[0] and "nothing was written" in errors[0], first_err
    texts = [p.read_text() for p in package.rglob("*.yaml")]
    assert all("fast: set" in t and "slow: set" not in t for t in texts)  # the second's writes are all there


def test_a_file_edited_during_the_run_is_not_overwritten(tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", files=3)
    fn, started, go = gated_label(tmp_path, "slow")
    run = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(package), "--exec", str(fn), "--enable-exec"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    _wait_for(started, run)
    edited = package / "d1" / "cm-1.yaml"
    edited.write_text(edited.read_text() + "# my edit\n")
    (package / "d0" / "new.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n")
    go.touch()
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1, err
    assert "d1/cm-1.yaml changed on disk" in err
    assert edited.read_text().endswith("# my edit\n")
    assert all("slow: set" not in p.read_text() for p in package.rglob("*.yaml"))


def test_a_second_writer_waits_for_the_lock_and_says_so(tmp_path: Path) -> None:
    package = make_package(tmp_path / "pkg", files=3)
    new_list = fnrun_here("source", str(package)).stdout.replace("version: old", "version: new")
    fd = os.open(package, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        process = start_sink(package, new_list)
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert "another fnrun is writing" in line and "waiting" in line
        assert set(file_states(package).values()) == {"old"}
    finally:
        os.close(fd)
    assert process.wait(timeout=60) == 0
    assert set(file_states(package).values()) == {"new"}
