"""`fnrun source` and `fnrun source | fnrun sink` side by side with kpt, in one run.

Targets, each on the median of `--runs` rounds over the generated package
(2,000 files / 10,000 commented resources by default):

1. `fnrun source DIR > /dev/null`            <= 0.5x `kpt fn source DIR > /dev/null`;
2. `fnrun source DIR | fnrun sink OUT`        <= 0.5x `kpt fn source DIR | kpt fn sink OUT2`;
3. fnrun's peak RSS (any one fnrun process)  < 500 MB.

Every sink writes into a fresh, absent OUT (kept until the end: see `step`); fnrun's OUT must be
byte-identical to DIR (kpt's is not checked: it reformats). Runs of the tools are interleaved and the order rotated each round so
a busy machine slows them alike. Exit status: 0 every target met, 1 a target missed, 2 a run
failed or kpt is missing.
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
from bench_run import BenchError, Series, fnrun_command, row, same_tree
from gen_package import generate

TIME_TARGET = 0.5  # fnrun / kpt, both comparisons
RSS_TARGET_MB = 500


def pipeline(commands: list[list[str]], cwd: Path) -> tuple[float, list[int]]:
    """Run commands as a shell pipeline (the last one's stdout to /dev/null), timed from the first
    spawn to the last reap; each process's peak RSS (KiB) comes from its own wait4."""
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        processes: list[subprocess.Popen] = []
        upstream = subprocess.DEVNULL
        for position, command in enumerate(commands):
            last = position == len(commands) - 1
            process = subprocess.Popen(
                command, cwd=cwd, env=bench_run.child_env(), stdin=upstream, stdout=null if last else subprocess.PIPE, stderr=errors
            )
            if process.stdout is not None:
                upstream = process.stdout
            if processes and processes[-1].stdout is not None:
                processes[-1].stdout.close()  # the consumer owns the read end now
            processes.append(process)
        peaks = []
        for process in processes:
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            peaks.append(int(usage.ru_maxrss))
        seconds = time.perf_counter() - started
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    failed = [(c, p.returncode) for c, p in zip(commands, processes) if p.returncode != 0]
    if failed:
        raise BenchError(f"{' '.join(failed[0][0])} exited {failed[0][1]}:\n{stderr[-2000:]}")
    return seconds, peaks


def step(series: Series, make: Callable[[Path], list[list[str]]], work: Path, check: Callable[[Path], None] | None = None) -> Callable[[], None]:
    """One timed run into a fresh, absent output directory. Outputs are kept until the bench
    ends: ext4 allocates inodes slowly for 30 s after many were deleted (`recently_deleted`),
    so removing one run's 4,000 files and directories would slow whichever run came next."""

    def run() -> None:
        out = work / f"out-{len(series.times)}-{series.name.replace(' ', '-').replace('|', '-')}"
        seconds, peaks = pipeline(make(out), work)
        series.times.append(seconds)
        series.rss_kib.append(max(peaks))
        if check is not None:
            check(out)

    return run


def bench(tmp: Path, args: argparse.Namespace) -> int:
    package, work = tmp / "package", tmp / "work"
    work.mkdir()
    count = generate(package, args.files, args.per_file)
    fnrun, kpt = fnrun_command(), ["kpt", "fn"]
    print(f"{count} resources in {args.files} files, {args.runs} rounds (fnrun: {' '.join(fnrun)})", file=sys.stderr)

    def identical(out: Path) -> None:
        difference = same_tree(package, out)
        if difference:
            raise BenchError(f"fnrun source | fnrun sink did not reproduce the package: {difference}")

    series = {name: Series(name) for name in ("fnrun source", "kpt source", "fnrun source|sink", "kpt source|sink")}
    steps = [
        step(series["fnrun source"], lambda out: [[*fnrun, "source", str(package)]], work),
        step(series["kpt source"], lambda out: [[*kpt, "source", str(package)]], work),
        step(series["fnrun source|sink"], lambda out: [[*fnrun, "source", str(package)], [*fnrun, "sink", str(out)]], work, identical),
        step(series["kpt source|sink"], lambda out: [[*kpt, "source", str(package)], [*kpt, "sink", str(out)]], work),
    ]
    for round_ in range(args.runs):
        shift = round_ % len(steps)
        for run in steps[shift:] + steps[:shift]:
            run()
        print(f"  round {round_ + 1}: " + ", ".join(f"{s.name} {s.times[-1]:.2f}s" for s in series.values()), file=sys.stderr)
    return report(series)


def report(series: dict[str, Series]) -> int:
    print(f"{'tool (wall seconds)':<50} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7}")
    for name, values in series.items():
        print(row(name, values))
    print()
    peak_mb = max(series["fnrun source"].rss_kib + series["fnrun source|sink"].rss_kib) * 1024 / 1e6
    checks = [
        ("fnrun source / kpt fn source", series["fnrun source"].median / series["kpt source"].median),
        ("fnrun source|sink / kpt fn source|sink", series["fnrun source|sink"].median / series["kpt source|sink"].median),
    ]
    missed = 0
    for label, ratio in checks:
        ok = ratio <= TIME_TARGET
        missed += not ok
        print(f"{'PASS' if ok else 'FAIL'}: {label}: {ratio:.2f}x (target <= {TIME_TARGET:.2f}x)")
    ok = peak_mb < RSS_TARGET_MB
    missed += not ok
    print(f"{'PASS' if ok else 'FAIL'}: fnrun peak RSS (largest single fnrun process): {peak_mb:.0f} MB (target < {RSS_TARGET_MB} MB)")
    return 1 if missed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--per-file", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3, help="rounds; medians are reported (default 3)")
    parser.add_argument("--source", type=Path, help="run fnrun from this source tree (PYTHONPATH), not the installed one")
    args = parser.parse_args(argv)
    if args.source is not None:
        bench_run.SOURCE = args.source.resolve()
    if shutil.which("kpt") is None:
        print("bench_io: error: kpt is not on PATH", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory(prefix="fnrun-bench-io-") as tmp:
            return bench(Path(tmp), args)
    except BenchError as err:
        print(f"bench_io: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
