"""Parallel renders of trees that mix in-process builtins, containers and exec functions never
hang, leave nothing behind and always write the same bytes: the small profile of
bench/stress_render.py, run with the suite. A render past the watchdog is a hang (on a loaded
machine one takes a few seconds)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from testing import stress

pytestmark = pytest.mark.usefixtures("test_images")
SEEDS = (11, 12, 13)
JOBS = (4, 2, 8, 4)  # one render of each seed per entry
WATCHDOG = 120.0


def test_parallel_renders_of_mixed_trees_never_hang_and_always_agree(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    for seed in SEEDS:
        rendered: list[dict[str, bytes]] = []
        for round_, jobs in enumerate(JOBS):
            tree = stress.tree(tmp_path / f"seed{seed}-{round_}", seed)
            outcome = stress.render(tree, jobs, WATCHDOG, mark)
            where = f"seed {seed}, render {round_ + 1}, --jobs {jobs}"
            assert outcome.code is not None, f"{where}: still running after {WATCHDOG:g}s\n{outcome.stderr}"
            assert outcome.code == 0, f"{where}\n{outcome.stderr}"
            assert outcome.left == [], (where, outcome.left)
            assert "fnrun/set-labels:v1 (sub2/Kptfile, " in outcome.stderr and ", builtin, " in outcome.stderr, outcome.stderr  # in-process
            rendered.append(stress.files(tree))
        for round_, files in enumerate(rendered[1:], 2):
            differ = [path for path in sorted(set(files) | set(rendered[0])) if files.get(path) != rendered[0].get(path)]
            assert not differ, (f"seed {seed}: render {round_} differs from the first in {differ[0]}", rendered[0].get(differ[0]), files.get(differ[0]))
        sub2 = [text for path, text in rendered[0].items() if path.startswith("sub2/") and path.endswith(".yaml")]
        assert sub2 and all(b"tier: two" in text for text in sub2)  # the in-process builtin ran
        sub3 = [text for path, text in rendered[0].items() if path.startswith("sub1/sub3/") and path.endswith(".yaml")]
        assert sub3 and all(b"namespace: three" in text and b"tier: one" in text for text in sub3)  # its own, then its parent's
