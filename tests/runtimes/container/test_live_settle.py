"""fnrun's last act (live.settle, from the launcher): a create still under way in a thread a stop
left behind is waited for, and what it made is removed, before the process exits. The engine's
answer to that create is held (testing/slow_engine.py) until the process is already settling;
without the settle the same process leaves the container behind, which the test shows too."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testing.runtime_fixtures import BASE_IMAGE, api, containers_of
from testing.slow_engine import SlowEngine

pytestmark = pytest.mark.engine

CHILD = r"""
import os, sys, threading
from orchestrator.runtimes.container import live, runtime
from orchestrator.runtimes.container.settings import owner_labels

api = runtime.api_client()
# another machine's, by its host label: no other fnrun's sweep of dead owners takes it from the test
config = {"Image": sys.argv[1], "Cmd": ["true"], "Labels": {**owner_labels(), "fnrun.host": "elsewhere"}}
threading.Thread(target=lambda: runtime.create(api, config), daemon=True).start()
sys.stdin.readline()  # the engine has made the container; its answer is held
if sys.argv[2] == "settle":
    live.settle(within=20)
print("done", flush=True)
os._exit(0)
"""


@pytest.mark.parametrize("settle", [True, False], ids=["settled", "not settled"])
def test_a_create_under_way_at_the_end_is_waited_for_and_removed(tmp_path: Path, settle: bool) -> None:
    socket_path = tmp_path / "engine.sock"
    env = {**os.environ, "DOCKER_HOST": f"unix://{socket_path}", "PYTHONPATH": os.pathsep.join(sys.path)}
    with SlowEngine(socket_path, hold=1) as engine:
        child = subprocess.Popen([sys.executable, "-c", CHILD, BASE_IMAGE, "settle" if settle else "exit"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert engine.answered.wait(30), "the engine never answered the create"
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("go\n")
            child.stdin.flush()
            time.sleep(0.5)  # the child is settling (or gone) when the answer comes
            engine.release()
            assert child.stdout.readline() == "done\n"
            assert child.wait(30) == 0
        finally:
            child.kill()
            child.wait()
    left = [c["Id"] for c in containers_of(child.pid)]
    for container_id in left:
        api().remove_container(container_id, force=True)
    assert (left == []) is settle, left
