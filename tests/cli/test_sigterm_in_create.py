"""SIGTERM while the engine has created a container and fnrun has not yet learned its id: the
container must still go. The engine's answer to each create of a whole render is held in turn
(testing/slow_engine.py), fnrun is signalled once the container exists, and the answer is let
through a moment later. Each way fnrun starts containers gets its turn: warm ones started ahead,
pre-starts and the ordinary path (warm containers off), and, with the result cache on, starts
that wait for the first call to miss it. Random moments (test_sigterm_anywhere.py) hit this
window about once in a hundred renders."""

from __future__ import annotations

import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from testing import stress
from testing.slow_engine import SlowEngine

pytestmark = pytest.mark.usefixtures("test_images")
SEED = 21
WATCHDOG = 60.0
LATE = 0.5  # how long after the signal the held answer comes
SWITCHES = {
    "warm": {},
    "cold": {"FNRUN_WARM": "0"},
    "cache": {"FNRUN_CACHE": "1"},  # each render with an empty cache of its own
}


def _render(tree: Path, engine: SlowEngine, mark: str, switches: dict[str, str], cache: Path) -> stress.Outcome:
    """fnrun render through `engine`, SIGTERM once its held create is done (if it holds one)."""

    def stop(proc: subprocess.Popen[str]) -> bool:
        if engine.hold is None:
            return False
        while not engine.answered.wait(0.05) and proc.poll() is None:
            pass
        if engine.answered.is_set():
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(LATE)
            except subprocess.TimeoutExpired:
                pass
        engine.release()
        return engine.answered.is_set()

    env = {"DOCKER_HOST": f"unix://{engine.path}", **switches}
    if switches.get("FNRUN_CACHE") == "1":
        env["FNRUN_CACHE_DIR"] = str(cache)
    return stress.render(tree, 4, WATCHDOG, mark, stop=stop, env=env)


@pytest.mark.parametrize("switches", SWITCHES.values(), ids=SWITCHES.keys())
def test_sigterm_while_a_create_is_unanswered_leaves_no_container(tmp_path: Path, switches: dict[str, str]) -> None:
    mark = uuid.uuid4().hex
    socket_path = tmp_path / "engine.sock"
    reference = stress.tree(tmp_path / "reference", SEED)
    before = stress.files(reference)
    with SlowEngine(socket_path) as engine:
        whole = _render(reference, engine, mark, switches, tmp_path / "caches" / "reference")
        creates = engine.creates
    assert whole.code == 0, whole.stderr
    assert whole.left == []
    after = stress.files(reference)
    assert creates >= 3, f"a whole render created {creates} containers; the tree should need several"
    for hold in range(1, creates + 1):
        tree = stress.tree(tmp_path / f"hold{hold}", SEED)
        with SlowEngine(socket_path, hold) as engine:
            outcome = _render(tree, engine, mark, switches, tmp_path / "caches" / f"hold{hold}")
        where = f"SIGTERM with create {hold} of {creates} unanswered"
        assert outcome.code is not None, f"{where}: still running {WATCHDOG:g}s later\n{outcome.stderr}"
        assert outcome.left == [], (where, outcome.left, outcome.stderr)
        assert "Traceback" not in outcome.stderr, (where, outcome.stderr)
        assert stress.files(tree) in (before, after), (where, outcome.stderr)
        assert outcome.code in (0, 143), (where, outcome.code, outcome.stderr)
