"""fnrun's start-up: the commands people run most on a small package, side by side with a bare
Python interpreter and kpt, in one run.

Each case is a new process, timed from spawn to reap (medians of `--runs` rounds, the order rotated
each round so a busy machine slows every tool alike, after one untimed round that writes the
bytecode): `python -c pass` (the same interpreter: the floor for any Python tool), `fnrun
--version` and `kpt version`, `fnrun --help`, `fnrun source` and `kpt fn source` of a 4-resource
package, `fnrun sink` and `kpt fn sink` of its ResourceList into a fresh directory, and a `fnrun
render` and a `fnrun run --image` of one fnrun catalog function, served by its builtin (no
container: what is timed is fnrun, not the engine), each on a fresh copy of the package.

Target: `fnrun --version` within TARGET_VERSION seconds of `python -c pass` (it loads nothing of
fnrun's machinery). The rest are figures: "above python" is each median minus the interpreter's.
`--source DIR` runs fnrun from another checkout (first on PYTHONPATH, as bench_io.py and
bench_run.py do), so a snapshot (`git archive REV orchestrator functions | tar -x -C DIR`) can be
compared with the working tree. Exit status: 0 the target met, 1 missed, 2 a run failed or the
set-up is missing (kpt, the image).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_run
from bench_run import BenchError, Series, fnrun_command, rounds_main, row
from gen_package import generate

TARGET_VERSION = 0.03  # seconds above `python -c pass`
IMAGE = "fnrun/set-labels:v1"
KPTFILE = f"""\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: small
pipeline:
  mutators:
  - image: {IMAGE}
    configMap:
      team: payments
"""


def timed(command: list[str], cwd: Path, stdin: Path | None = None) -> tuple[float, str]:
    """Wall seconds from spawn to reap, and stderr; a failed run is a BenchError."""
    with open(stdin or os.devnull, "rb") as given, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=bench_run.child_env(), stdin=given, stdout=subprocess.DEVNULL, stderr=err)
        _, status, _ = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise BenchError(f"{' '.join(command)} exited {code}:\n{stderr[-2000:]}")
    return seconds, stderr


class Case:
    """One command, run anew each time: `fresh` makes its working copy (not timed); `tree`: the
    fnrun it runs (a --source checkout, or None: the installed one; kpt's and python's: None)."""

    def __init__(self, name: str, command: Callable[[Path], list[str]], fresh: Callable[[Path], Path] | None = None, stdin: Path | None = None,
                 tree: Path | None = None) -> None:
        self.series = Series(name)
        self.command, self.fresh, self.stdin, self.tree = command, fresh, stdin, tree

    def run(self, work: Path, record: bool = True) -> str:
        target = self.fresh(work) if self.fresh is not None else work
        bench_run.SOURCE = self.tree  # fnrun_command() and child_env() read it
        seconds, stderr = timed(self.command(target), work, self.stdin)
        if record:
            self.series.times.append(seconds)
        return stderr


def cases(tmp: Path, trees: list[Path | None]) -> tuple[list[Case], list[Case]]:
    """The baselines (python, kpt), and fnrun's cases for each tree (labelled by the tree's name
    when there are several)."""
    package, kpt_package, work = tmp / "package", tmp / "kpt-package", tmp / "work"
    work.mkdir()
    generate(package, 1, 4)
    shutil.copytree(package, kpt_package)
    (kpt_package / "Kptfile").write_text(KPTFILE)
    listing = tmp / "list.yaml"
    listing.write_bytes(subprocess.run(["kpt", "fn", "source", str(package)], capture_output=True, check=True).stdout)
    made = iter(range(1_000_000))

    def copy_of(source: Path) -> Callable[[Path], Path]:
        return lambda into: Path(shutil.copytree(source, into / f"copy-{next(made)}"))

    def absent(into: Path) -> Path:
        return into / f"out-{next(made)}"

    baselines = [
        Case("python -c pass", lambda _: [sys.executable, "-c", "pass"]),
        Case("kpt version", lambda _: ["kpt", "version"]),
        Case("kpt fn source (4 resources)", lambda _: ["kpt", "fn", "source", str(package)]),
        Case("kpt fn sink (4 resources)", lambda out: ["kpt", "fn", "sink", str(out)], absent, listing),
    ]
    fnrun: list[Case] = []
    for tree in trees:
        label = f" [{tree.name}]" if tree is not None and len(trees) > 1 else ""
        fnrun += [
            Case(f"fnrun --version{label}", lambda _: [*fnrun_command(), "--version"], tree=tree),
            Case(f"fnrun --help{label}", lambda _: [*fnrun_command(), "--help"], tree=tree),
            Case(f"fnrun source (4 resources){label}", lambda _: [*fnrun_command(), "source", str(package)], tree=tree),
            Case(f"fnrun sink (4 resources){label}", lambda out: [*fnrun_command(), "sink", str(out)], absent, listing, tree=tree),
            Case(f"fnrun render (1 builtin step, 4 resources){label}", lambda dir: [*fnrun_command(), "render", str(dir)], copy_of(kpt_package), tree=tree),
            Case(f"fnrun run --image (builtin, 4 resources){label}", lambda dir: [*fnrun_command(), "run", str(dir), "-i", IMAGE, "--", "team=payments"],
                 copy_of(package), tree=tree),
        ]
    return baselines, fnrun


def bench(tmp: Path, runs: int, trees: list[Path | None]) -> int:
    baselines, fnrun = cases(tmp, trees)
    every = baselines + fnrun
    work = tmp / "work"
    for case in every:  # bytecode written, the engine's image data read once: not timed
        stderr = case.run(work, record=False)
        if "builtin" in case.series.name and "builtin" not in stderr:
            raise BenchError(f"{case.series.name}: {IMAGE} did not run builtin (an image built from other sources?):\n{stderr[-1000:]}")
    print(f"{runs} rounds (fnrun: {', '.join(str(tree or 'installed') for tree in trees)})", file=sys.stderr)
    for round_ in range(runs):
        shift = round_ % len(every)
        for case in every[shift:] + every[:shift]:
            case.run(work)
    floor = baselines[0].series.median
    print(f"{'command (wall seconds, a new process each)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7} {'above python':>12}")
    for case in every:
        print(f"{row(case.series.name, case.series)} {case.series.median - floor:>12.3f}")
    print()
    missed = 0
    for case in fnrun:
        if case.series.name.startswith("fnrun --version"):
            above = case.series.median - floor
            missed += above > TARGET_VERSION
            print(f"{'PASS' if above <= TARGET_VERSION else 'FAIL'}: {case.series.name} above python -c pass: {above * 1000:.0f} ms (target <= {TARGET_VERSION * 1000:.0f} ms)")
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    """bench_run's `rounds_main` (--runs, kpt checked, a failed run one line and exit 2), with
    `--source DIR` (repeatable) before it."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--source", type=Path, action="append", help="run fnrun from this source tree (PYTHONPATH); repeat to interleave trees")
    known, rest = parser.parse_known_args(argv)
    trees: list[Path | None] = [tree.resolve() for tree in known.source] if known.source else [None]
    return rounds_main("bench_start", __doc__ or "", lambda tmp, runs: bench(tmp, runs, trees), rest)


if __name__ == "__main__":
    sys.exit(main())
