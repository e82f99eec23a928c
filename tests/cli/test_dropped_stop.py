"""A stop whose exception the interpreter drops still stops fnrun: no function starts after it,
and nothing is written.

Python raises a signal's exception wherever the main thread is; inside a destructor or a weakref
callback it only prints it ("Exception ignored in ...") and goes on. That happens for real: a
Ctrl-C during fnrun's imports can land in importlib's module-lock callback. Here the signal is
sent from a destructor that runs as a chosen library call begins: the run itself (the function
must then not run at all) or the write-back (the one moment a lost stop would cost the package)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import deployment, function_config, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")

# fnrun's own command line (orchestrator.launch.main), with a destructor that signals fnrun
# as the first thing MODULE.NAME does: the handler's exception is raised inside __del__.
DROPPING = """
import importlib, os, signal, sys
from orchestrator.launch import main

signum, module, name = int(sys.argv[1]), importlib.import_module(sys.argv[2]), sys.argv[3]

class SignalsOnItsWayOut:
    def __del__(self):
        os.kill(os.getpid(), signum)
        sum(range(1000))  # the handler runs here, inside the destructor

def wrap(call):
    def first_a_dropped_stop(*args, **kwargs):
        SignalsOnItsWayOut()  # made and dropped at once
        return call(*args, **kwargs)
    return first_a_dropped_stop

setattr(module, name, wrap(getattr(module, name)))
main(sys.argv[4:])
"""
SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143)]


def dropping(tmp_path: Path, signum: int, where: str, *args: str) -> subprocess.CompletedProcess[str]:
    module, _, name = where.rpartition(".")
    return subprocess.run([sys.executable, "-c", DROPPING, str(int(signum)), module, name, *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "FNRUN_CACHE": "0"})


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_a_stop_the_interpreter_dropped_still_keeps_the_package_unwritten(tmp_path: Path, signum: int, code: int) -> None:
    write_package(tmp_path, {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun/set-labels:v1", {"team": "a"})})
    before = snapshot(tmp_path)
    done = dropping(tmp_path, signum, "orchestrator.write.writeback.apply", "run", str(tmp_path), "--no-builtin")
    assert "Exception ignored" in done.stderr, done.stderr  # the interpreter did drop it
    assert "[ok] fnrun/set-labels:v1" in done.stderr, done.stderr  # after the function ran
    assert done.returncode == code, done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("fnrun: interrupted"), done.stderr
    assert "nothing was written" in done.stderr, done.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
@pytest.mark.parametrize("command", ["run", "render"])
def test_a_stop_the_interpreter_dropped_before_the_run_starts_no_function(tmp_path: Path, signum: int, code: int, command: str) -> None:
    files = {"deploy.yaml": deployment("web")}
    if command == "run":
        files["fn.yaml"] = function_config("fnrun-test/sleep:v1", {"seconds": "60"})
    else:
        files["Kptfile"] = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - image: fnrun-test/sleep:v1\n    configMap: {seconds: '60'}\n"
    write_package(tmp_path, files)
    before = snapshot(tmp_path)
    done = dropping(tmp_path, signum, f"orchestrator.api.{command}", command, str(tmp_path))
    assert "Exception ignored" in done.stderr, done.stderr
    assert done.returncode == code, done.stderr
    assert "sleep: sleeping" not in done.stderr and "fnrun-test/sleep:v1" not in done.stderr, done.stderr
    assert "nothing was written" in done.stderr, done.stderr
    assert snapshot(tmp_path) == before


# fnrun's console script, sent a signal just after its first instruction, while it loads.
WHILE_LOADING = """
import os, sys
from orchestrator import stops
import orchestrator.__main__ as command

signum, start = int(sys.argv[1]), stops.start_command
def then_a_stop():
    found = start()
    os.kill(os.getpid(), signum)  # noted and held, not raised: fnrun goes on loading
    return found
stops.start_command = then_a_stop
sys.argv = ["fnrun", *sys.argv[2:]]
command.main()
"""


@pytest.mark.parametrize(("signum", "code"), SIGNALS)
def test_a_stop_while_fnrun_loads_is_acted_on_once_it_has_loaded(tmp_path: Path, signum: int, code: int) -> None:
    write_package(tmp_path, {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/sleep:v1", {"seconds": "60"})})
    before = snapshot(tmp_path)
    done = subprocess.run([sys.executable, "-c", WHILE_LOADING, str(int(signum)), "run", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "FNRUN_CACHE": "0"})
    assert done.returncode == code, done.stderr
    assert done.stderr.splitlines() == [f"fnrun: interrupted{' (SIGTERM)' if signum == signal.SIGTERM else ''}; nothing was written"]
    assert snapshot(tmp_path) == before


NOTED_ONLY = """
import os, signal, sys
from orchestrator import stops

stops.take_over(None)  # the launcher's handlers
with stops.held():
    os.kill(os.getpid(), signal.SIGINT)
    sum(range(1000))  # the handler has run by now: it only noted
    print("the block ran to its end", flush=True)
print("not reached", flush=True)
"""


def test_a_stop_inside_a_block_that_must_not_be_cut_is_raised_as_it_ends() -> None:
    """The launcher starts its early container's thread in such a block: Thread.start() cut short
    by a KeyboardInterrupt left a thread creating a container that nothing would remove."""
    done = subprocess.run([sys.executable, "-c", NOTED_ONLY], capture_output=True, text=True, timeout=60)
    assert done.stdout == "the block ran to its end\n", done.stderr
    assert done.stderr.rstrip().endswith("Interrupted: interrupted by SIGINT"), done.stderr
