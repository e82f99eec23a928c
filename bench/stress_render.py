"""The long stress profile: hundreds of parallel renders of trees that mix in-process builtins,
container functions and exec functions (tests/testing/stress.py), each under a watchdog, then
SIGTERM at random moments of as many more. The suite runs a small fixed profile of both
(tests/render/test_stress_render.py, tests/cli/test_sigterm_anywhere.py).

Goals: no render hangs (passes its watchdog) or fails; no signalled render takes more than 5 s to
stop, exits other than 143 (or dies of the signal before fnrun has its handlers), leaves a
process or container behind, or leaves the package other than as it was or fully rendered.
Exit 1 when a goal is missed.

    .venv/bin/python bench/stress_render.py [--renders 300] [--signals 100] [--watchdog 120]
"""

from __future__ import annotations

import argparse
import random
import shutil
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from testing import stress

STOP_WITHIN = 5.0


def renders(work: Path, count: int, watchdog: float, mark: str) -> list[str]:
    """Renders of `count` trees (seed = render number, --jobs 2, 4 or 8); what went wrong."""
    problems, times, started = [], [], time.monotonic()
    for number in range(count):
        tree = stress.tree(work / f"r{number}", number)
        jobs = (2, 4, 8)[number % 3]
        outcome = stress.render(tree, jobs, watchdog, mark)
        times.append(outcome.seconds)
        if outcome.code is None:
            problems.append(f"render {number} (--jobs {jobs}): hung past {watchdog:g}s")
        elif outcome.code != 0:
            problems.append(f"render {number} (--jobs {jobs}): exit {outcome.code}: {outcome.stderr.strip().splitlines()[-1:]}")
        if outcome.left:
            problems.append(f"render {number}: left {outcome.left}")
        shutil.rmtree(tree)
    print(f"renders: {count} in {time.monotonic() - started:.0f}s, hangs {sum('hung' in p for p in problems)}, "
          f"failures {len(problems)}, slowest {max(times, default=0):.2f}s, median {sorted(times)[len(times) // 2] if times else 0:.2f}s")
    return problems


def signals(work: Path, count: int, watchdog: float, mark: str) -> list[str]:
    """SIGTERM at a random moment of `count` renders of one tree; what went wrong."""
    reference = stress.tree(work / "reference", 5)
    before = stress.files(reference)
    whole = stress.render(reference, 4, watchdog, mark)
    if whole.code != 0:
        return [f"the reference render failed: {whole.stderr}"]
    after = stress.files(reference)
    problems, stops, codes, late = [], [], {}, 0
    rng = random.Random()
    for number in range(count):
        tree = stress.tree(work / f"s{number}", 5)
        delay = rng.uniform(0, whole.seconds)
        outcome = stress.render(tree, 4, watchdog, mark, signal_after=delay)
        where = f"SIGTERM {delay:.2f}s in (trial {number})"
        codes[outcome.code] = codes.get(outcome.code, 0) + 1
        if outcome.signalled:
            stops.append(outcome.seconds)
            if outcome.code is None or outcome.seconds > STOP_WITHIN:
                problems.append(f"{where}: stopped after {outcome.seconds:.2f}s")
            if outcome.code not in (0, 143, -signal.SIGTERM):  # 0: it was done as the signal came
                problems.append(f"{where}: exit {outcome.code}")
        state = stress.files(tree)
        if state not in (before, after):
            problems.append(f"{where}: the package was left half rendered (exit {outcome.code}): {stress.differences(state, before, after)}")
        elif outcome.code == 0 and state != after:
            problems.append(f"{where}: exit 0 but the package is not rendered")
        elif outcome.code == 143 and state == after:
            if "after the package was written" not in outcome.stderr:
                problems.append(f"{where}: the package was written but the line says otherwise")
            late += 1  # SIGTERM after the write-back committed: whole, and the line says so
        if outcome.left:
            problems.append(f"{where}: left {outcome.left}")
        shutil.rmtree(tree)
    print(f"signals: {count} renders ({len(stops)} signalled; exit codes {codes}), "
          f"slowest stop {max(stops, default=0):.2f}s, median {sorted(stops)[len(stops) // 2] if stops else 0:.2f}s, "
          f"exit 143 after the package was written: {late}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--renders", type=int, default=300)
    parser.add_argument("--signals", type=int, default=100)
    parser.add_argument("--watchdog", type=float, default=120.0)
    args = parser.parse_args()
    mark = uuid.uuid4().hex
    with tempfile.TemporaryDirectory(prefix="fnrun-stress-") as work:
        problems = renders(Path(work), args.renders, args.watchdog, mark)
        problems += signals(Path(work), args.signals, args.watchdog, mark)
    for problem in problems:
        print("  " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
