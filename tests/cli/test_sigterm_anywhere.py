"""SIGTERM at any moment of a render ends fnrun: exit 143 with one line (or, before fnrun has its
handlers, the signal's own death), nothing of it left running (forked builtins, exec functions,
containers), and the package as it was or as a whole render leaves it. The moments are spread
over a whole render of a tree that mixes every kind of function (testing/stress.py), so reading,
functions of each kind and writing all get hit; bench/stress_render.py does more of them."""

from __future__ import annotations

import random
import signal
import uuid
from pathlib import Path

import pytest

from testing import stress

pytestmark = pytest.mark.usefixtures("test_images")
TRIALS = 8
SEED = 21
WATCHDOG = 60.0  # a hang, not a slow stop: on a quiet machine it stops within a second


def test_sigterm_at_random_moments_ends_everything_and_keeps_the_package_whole(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    reference = stress.tree(tmp_path / "reference", SEED)
    before = stress.files(reference)
    whole = stress.render(reference, 4, WATCHDOG, mark)
    assert whole.code == 0, whole.stderr
    after = stress.files(reference)
    moments = random.Random().sample(range(1, 100), TRIALS)  # percent of a whole render's time
    for trial, percent in enumerate(moments):
        tree = tmp_path / f"trial{trial}"
        stress.tree(tree, SEED)
        delay = whole.seconds * percent / 100
        outcome = stress.render(tree, 4, WATCHDOG, mark, signal_after=delay)
        where = f"SIGTERM {delay:.2f}s into the render"
        assert outcome.code is not None, f"{where}: still running {WATCHDOG:g}s later\n{outcome.stderr}"
        assert outcome.left == [], (where, outcome.left)
        got = stress.files(tree)
        assert got in (before, after), (
            f"{where}: the package is neither as it was nor rendered (exit {outcome.code}):\n"
            f"{stress.differences(got, before, after)}\n{outcome.stderr}"
        )
        if not outcome.signalled or outcome.code == 0:  # done before the signal, or as it came
            assert outcome.code == 0, outcome.stderr
            assert stress.files(tree) == after, f"{where}: exit 0 but the package is not rendered"
            continue
        assert "Traceback" not in outcome.stderr, outcome.stderr
        if outcome.code == -signal.SIGTERM:  # before fnrun's handlers: nothing had started
            assert stress.files(tree) == before
            continue
        assert outcome.code == 143, (where, outcome.stderr)
        # a signal after the write-back committed finds the package rendered, and says so
        said = "nothing was written" if stress.files(tree) == before else "it came after the package was written"
        assert [line for line in outcome.stderr.splitlines() if line.startswith("fnrun:")] == [f"fnrun: interrupted (SIGTERM); {said}"], outcome.stderr
