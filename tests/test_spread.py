"""The fast subset spreads over the cores; a focused run, a run with `-n`, the whole suite and a
suite that does not opt in stay in one process (tests/testing/spread.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.spread import workers

DIRECTORY = str(Path(__file__).parent)
FILE = __file__


@pytest.mark.parametrize(("setting", "fast", "given", "args", "cores", "want"), [
    ("auto", True, None, [DIRECTORY], 2, "auto"),
    ("auto", True, None, [DIRECTORY], 1, None),  # one core: a worker would only add its start
    ("3", True, None, [DIRECTORY], 1, 3),
    ("1", True, None, [DIRECTORY], 8, None),
    ("0", True, None, [DIRECTORY], 8, None),
    ("", True, None, [DIRECTORY], 8, None),  # a suite that does not opt in
    ("auto", False, None, [DIRECTORY], 8, None),  # the whole suite, engine included
    ("auto", True, 0, [DIRECTORY], 8, None),  # -n 0
    ("auto", True, 4, [DIRECTORY], 8, None),  # -n 4 is xdist's own
    ("auto", True, None, [FILE], 8, None),  # a file named
    ("auto", True, None, [f"{FILE}::test_x"], 8, None),  # a test named
    ("auto", True, None, [DIRECTORY, FILE], 8, None),
])
def test_only_the_fast_subset_as_a_whole_is_spread(setting: str, fast: bool, given: object, args: list[str], cores: int,
                                                   want: int | str | None) -> None:
    assert workers(setting, fast, given, args, cores) == want


def test_a_setting_that_is_no_count_is_refused() -> None:
    with pytest.raises(ValueError, match="fast_subset_workers is 'many'"):
        workers("many", True, None, [DIRECTORY], 2)


def test_the_subset_runs_in_workers_and_a_file_named_in_this_process(tmp_path: Path) -> None:
    """End to end through the suite's conftest and xdist: the test notes where it ran."""
    (tmp_path / "test_where.py").write_text(
        "import os, pathlib\n\ndef test_where():\n"
        "    (pathlib.Path(__file__).parent / 'ran-in').write_text(os.environ.get('PYTEST_XDIST_WORKER', 'this process'))\n")
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTEST_XDIST_WORKER", None)

    def where(target: Path) -> tuple[str, str]:
        run = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
                              "-o", "markers=engine: needs the engine", "-o", "fast_subset_workers=2", "-m", "not engine",
                              str(target)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        return (tmp_path / "ran-in").read_text(), run.stdout

    worker, output = where(tmp_path)
    assert worker.startswith("gw") and "created: 2/2 workers" in output, (worker, output)
    assert where(tmp_path / "test_where.py")[0] == "this process"
