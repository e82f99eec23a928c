"""`fnrun run` side by side with `kpt fn eval` and a bare container start, in one run.

Three targets, each checked on medians of fresh runs:

1. one identity function over a 4-resource package: fnrun <= 1.0x kpt;
2. fnrun's own overhead above a bare container start of the same image <= 15 %: fnrun's library
   call in this (warm) process against the bare SDK run in this process, so both exclude
   interpreter start-up; what a new `fnrun` process adds on top is reported beside it;
3. one identity function over 2,000 files / 10,000 resources: fnrun <= 0.5x kpt.

Every tool run gets a fresh copy of the package (both tools write back), must exit 0, and fnrun
must leave the tree byte-identical (the image is an identity function). Runs of the tools are
interleaved so a busy machine slows them alike. Exit status: 0 all targets met, 1 a target missed,
2 a run failed or the set-up is missing (no kpt, no image, no engine).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_run import BareRun, BareRunFailed
from gen_package import generate

IMAGE = "fnrun-test/identity:v1"
SMALL_TARGET = 1.0  # fnrun / kpt, 4 resources
SMALL_GOAL_13 = 0.9  # the same, the tighter goal (the launcher starts the container during fnrun's imports)
OVERHEAD_TARGET = 0.15  # (fnrun - bare) / bare, 4 resources
BIG_TARGET = 0.5  # fnrun / kpt, 10,000 resources


class BenchError(Exception):
    """A run that did not succeed, or a missing prerequisite: no number may be trusted."""


@dataclass
class Series:
    """Wall times (seconds) of one tool on one package, plus what else each run reported."""

    name: str
    times: list[float] = field(default_factory=list)
    rss_kib: list[int] = field(default_factory=list)
    inner: list[float] = field(default_factory=list)  # fnrun's own report of the function's run

    @property
    def median(self) -> float:
        return statistics.median(self.times)


# ---------------------------------------------------------------------------------------- tools


SOURCE: Path | None = None  # --source: run fnrun from this checkout instead of the installed one


def fnrun_command() -> list[str]:
    """fnrun's installed entry point, without a version-manager shim in front of it.

    A pyenv shim on PATH is a bash script that runs `pyenv exec` (0.3 s and more here): that is
    this machine's set-up, not fnrun. The console script beside this interpreter is what pip
    installed; `python -m orchestrator` runs the same `main` when there is none (or --source)."""
    script = Path(sys.executable).parent / "fnrun"
    if script.is_file() and SOURCE is None:
        return [str(script)]
    return [sys.executable, "-m", "orchestrator"]


def child_env() -> dict[str, str]:
    """The environment of every timed process. Bytecode is written and used, as an installed
    fnrun has it (pip compiles a wheel's modules): a shell that sets PYTHONDONTWRITEBYTECODE, as
    this machine's does, would otherwise make every fnrun process compile its modules again
    (~70 ms)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if SOURCE is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE), env.get("PYTHONPATH")]))
    return env


@dataclass
class Finished:
    seconds: float
    rss_kib: int
    stdout: str
    stderr: str


def timed(command: list[str], cwd: Path) -> Finished:
    """Run a command, timing it from spawn to reap; its peak RSS comes from wait4 (this child only)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=cwd, env=child_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if process.returncode != 0:
        raise BenchError(f"{' '.join(command)} exited {process.returncode}:\n{stderr[-2000:]}")
    return Finished(seconds, int(usage.ru_maxrss), stdout, stderr)


def same_tree(a: Path, b: Path) -> str | None:
    """None when both trees hold the same files with the same bytes, else the first difference."""
    compare = filecmp.dircmp(a, b)
    if compare.left_only or compare.right_only:
        return f"files differ under {a.name}: {compare.left_only or compare.right_only}"
    _, mismatch, errors = filecmp.cmpfiles(a, b, compare.common_files, shallow=False)
    if mismatch or errors:
        return f"{(mismatch or errors)[0]} changed"
    for sub in compare.common_dirs:
        difference = same_tree(a / sub, b / sub)
        if difference:
            return difference
    return None


_INNER = re.compile(r"^\[ok\] \S+ \((\d+(?:\.\d+)?)s\b", re.MULTILINE)  # "[ok] IMAGE (0.41s...)"


# The same run through the library API in a fresh interpreter: fnrun without its command line.
LIBRARY_RUN = (
    "import sys\nfrom orchestrator import api\n"
    "api.run(api.RunRequest(directory=sys.argv[1], functions=api.Functions(image=sys.argv[2]),\n"
    "    sandbox=api.SandboxSettings(image_pull_policy='never'), speed=api.Speed(cache=False)))"
)


def run_fnrun(template: Path, work: Path, image: str, library: bool = False) -> tuple[float, int, float | None]:
    """One `fnrun run --image` over a fresh copy; the copy must come back byte-identical."""
    package = fresh_copy(template, work)
    if library:
        command = [sys.executable, "-c", LIBRARY_RUN, str(package), image]
    else:
        # --no-cache: the same input every round would otherwise be a cache hit, no container at all
        command = [*fnrun_command(), "run", str(package), "--image", image, "--image-pull-policy", "never", "--no-cache"]
    done = timed(command, work)
    difference = same_tree(template, package)
    if difference:
        raise BenchError(f"fnrun changed the package for an identity function: {difference}")
    inner = _INNER.search(done.stderr)
    return done.seconds, done.rss_kib, float(inner.group(1)) if inner else None


def run_kpt(template: Path, work: Path, image: str) -> tuple[float, int]:
    """One `kpt fn eval --image` over a fresh copy; it must exit 0 and report the function passed."""
    package = fresh_copy(template, work)
    done = timed(["kpt", "fn", "eval", str(package), "--image", image, "--image-pull-policy", "never"], work)
    if "[PASS]" not in done.stdout + done.stderr:
        raise BenchError(f"kpt did not report the function passed:\n{done.stderr[-2000:]}")
    return done.seconds, done.rss_kib


def fresh_copy(template: Path, work: Path) -> Path:
    target = work / "pkg"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(template, target, symlinks=True)
    return target


# ------------------------------------------------------------------------- bare container start


def bare_process_step(image: str, stdin_file: Path, work: Path) -> Callable[[Series], None]:
    """The bare run in a fresh interpreter: start-up, `import docker`, from_env and one run.

    The floor for any Python tool on the docker SDK; fnrun's own overhead is what lies above it."""

    def step(series: Series) -> None:
        done = timed([sys.executable, str(Path(__file__).resolve().parent / "bare_run.py"), image, str(stdin_file)], work)
        series.times.append(done.seconds)
        series.rss_kib.append(done.rss_kib)

    return step


def resource_list(template: Path) -> bytes:
    """The ResourceList fnrun sends for this package (same size and shape for the bare run)."""
    from orchestrator.api import source

    return source(template).encode()


# ---------------------------------------------------------------------------------- the bench


def measure(runs: int, steps: list[tuple[Series, Callable[[Series], None]]]) -> None:
    """`runs` rounds; each round runs every step once, rotating which goes first."""
    for round_ in range(runs):
        shift = round_ % len(steps)
        for series, step in steps[shift:] + steps[:shift]:
            step(series)
            print(f"  {series.name}: {series.times[-1]:.3f}s", file=sys.stderr, flush=True)


def fnrun_step(template: Path, work: Path, image: str, library: bool = False) -> Callable[[Series], None]:
    def step(series: Series) -> None:
        seconds, rss, inner = run_fnrun(template, work, image, library)
        series.times.append(seconds)
        series.rss_kib.append(rss)
        if inner is not None:
            series.inner.append(inner)

    return step


def in_process_step(template: Path, work: Path, image: str) -> Callable[[Series], None]:
    """fnrun's library entry called in this process on a fresh copy: its own work, no start-up."""
    from orchestrator import api

    def step(series: Series) -> None:
        target = fresh_copy(template, work)
        before = time.perf_counter()
        request = api.RunRequest(
            directory=str(target), functions=api.Functions(image=image), sandbox=api.SandboxSettings(image_pull_policy="never"),
            output=api.Output(quiet=True), speed=api.Speed(cache=False),
        )
        api.run(request, stdout=open(os.devnull, "w"))
        series.times.append(time.perf_counter() - before)
        different = same_tree(template, target)
        if different:
            raise BenchError(f"fnrun (in-process) changed {different}")

    return step


def kpt_step(template: Path, work: Path, image: str) -> Callable[[Series], None]:
    def step(series: Series) -> None:
        seconds, rss = run_kpt(template, work, image)
        series.times.append(seconds)
        series.rss_kib.append(rss)

    return step


def check_setup(image: str) -> None:
    if shutil.which("kpt") is None:
        raise BenchError("kpt is not on PATH")
    try:
        import docker

        docker.from_env().api.inspect_image(image)
    except Exception as err:  # noqa: BLE001 - any failure here means: cannot bench
        raise BenchError(f"image {image} is not available ({err}); build it with scripts/build_images.py") from None


def row(label: str, series: Series) -> str:
    times = series.times
    rss = f"{max(series.rss_kib) / 1024:7.0f}" if series.rss_kib else "      -"
    return f"{label:<56} {statistics.median(times):8.3f} {min(times):8.3f} {max(times):8.3f} {len(times):3d} {rss}"


def rounds_main(name: str, doc: str, bench_fn: Callable[[Path, int], int], argv: list[str] | None, needs_kpt: bool = True) -> int:
    """The `main` of a bench that takes only --runs: kpt checked, a temp work directory, a failed
    run reported as one line with exit 2 (bench_builtin, bench_render, bench_starlark)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if needs_kpt and shutil.which("kpt") is None:
        print(f"{name}: kpt is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix=f"fnrun-{name.replace('_', '-')}-") as tmp:
        try:
            return bench_fn(Path(tmp), args.runs)
        except BenchError as err:
            print(f"{name}: a run failed: {err}", file=sys.stderr)
            return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds on the 4-resource package (default 5)")
    parser.add_argument("--big-runs", type=int, default=3, help="rounds on the 10,000-resource package (default 3)")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--per-file", type=int, default=5)
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--skip-big", action="store_true", help="only the 4-resource cases")
    parser.add_argument("--source", type=Path, help="run fnrun from this source tree (PYTHONPATH), not the installed one")
    args = parser.parse_args(argv)
    global SOURCE
    if args.source is not None:
        SOURCE = args.source.resolve()
        sys.path.insert(0, str(SOURCE))

    try:
        check_setup(args.image)
        with tempfile.TemporaryDirectory(prefix="fnrun-bench-") as tmp:
            return bench(Path(tmp), args)
    except (BenchError, BareRunFailed) as err:
        print(f"bench_run: error: {err}", file=sys.stderr)
        return 2


def bench(tmp: Path, args: argparse.Namespace) -> int:
    small, big, work = tmp / "small", tmp / "big", tmp / "work"
    work.mkdir()
    generate(small, 1, 4)
    fnrun_small, kpt_small, bare = Series("fnrun 4"), Series("kpt 4"), Series("bare 4")
    bare_process, fnrun_library = Series("bare process 4"), Series("fnrun library 4")
    stdin_file = tmp / "small.resourcelist.yaml"
    stdin_file.write_bytes(resource_list(small))
    bare_run = BareRun(args.image, stdin_file.read_bytes())
    bare_run()  # warm the engine's caches for this image, like the first run of any tool

    def bare_step(series: Series) -> None:
        series.times.append(bare_run())

    fnrun_inproc = Series("fnrun in-process 4")
    inproc_step = in_process_step(small, work, args.image)
    inproc_step(Series("warm-up"))  # imports and the client, as bare_run's were made beforehand

    print(f"4 resources, {args.runs} rounds (fnrun: {' '.join(fnrun_command())})", file=sys.stderr)
    measure(
        args.runs,
        [
            (fnrun_small, fnrun_step(small, work, args.image)),
            (kpt_small, kpt_step(small, work, args.image)),
            (bare, bare_step),
            (bare_process, bare_process_step(args.image, stdin_file, work)),
            (fnrun_library, fnrun_step(small, work, args.image, library=True)),
            (fnrun_inproc, inproc_step),
        ],
    )
    fnrun_big, kpt_big = Series("fnrun 10k"), Series("kpt 10k")
    if not args.skip_big:
        count = generate(big, args.files, args.per_file)
        print(f"{count} resources in {args.files} files, {args.big_runs} rounds", file=sys.stderr)
        measure(
            args.big_runs,
            [(fnrun_big, fnrun_step(big, work, args.image)), (kpt_big, kpt_step(big, work, args.image))],
        )
    return report(args, fnrun_small, kpt_small, bare, bare_process, fnrun_library, fnrun_inproc, fnrun_big, kpt_big)


def report(
    args: argparse.Namespace,
    fnrun_small: Series,
    kpt_small: Series,
    bare: Series,
    bare_process: Series,
    fnrun_library: Series,
    fnrun_inproc: Series,
    fnrun_big: Series,
    kpt_big: Series,
) -> int:
    print()
    print(f"{'case / tool (wall seconds)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7}")
    print(row("4 resources: fnrun run (process, end to end)", fnrun_small))
    print(row("4 resources: kpt fn eval", kpt_small))
    print(row("4 resources: bare SDK run (in-process)", bare))
    print(row("4 resources: bare SDK run (fresh python process)", bare_process))
    print(row("4 resources: fnrun via api.run (fresh process, no CLI)", fnrun_library))
    print(row("4 resources: fnrun via api.run (in-process, warm)", fnrun_inproc))
    if fnrun_small.inner:
        print(row("4 resources: the function, as fnrun reports it", Series("inner", fnrun_small.inner)))
    if fnrun_big.times:
        print(row(f"{args.files * args.per_file} resources: fnrun run", fnrun_big))
        print(row(f"{args.files * args.per_file} resources: kpt fn eval", kpt_big))
    print()
    print(
        "fnrun: its entry point as a new process, interpreter start-up and imports included.\n"
        "bare (in-process): engine calls only (create, attach, start, stdin, stdout, wait, remove) with\n"
        "fnrun's sandbox settings, client made beforehand: the target's baseline. bare (fresh python\n"
        "process): the same plus interpreter start-up, `import docker` and from_env: the floor for a\n"
        "Python tool. api.run: fnrun's library call in a new interpreter, i.e. fnrun without its\n"
        "command-line layer. api.run in-process: the same call in this warm process (imports and the\n"
        "engine client already made), the like-for-like partner of bare (in-process).\n"
        "RSS: peak of the tool's own process (wait4)."
    )
    print()
    checks = [
        ("4 resources, fnrun / kpt", fnrun_small.median / kpt_small.median, SMALL_TARGET, "x"),
        ("4 resources, fnrun / kpt (tighter goal)", fnrun_small.median / kpt_small.median, SMALL_GOAL_13, "x"),
        ("fnrun overhead above a bare container start (both in-process)", fnrun_inproc.median / bare.median - 1, OVERHEAD_TARGET, "%"),
    ]
    if fnrun_big.times:
        checks.append(
            (f"{args.files * args.per_file} resources, fnrun / kpt", fnrun_big.median / kpt_big.median, BIG_TARGET, "x")
        )
    missed = 0
    for label, value, target, unit in checks:
        ok = value <= target
        missed += not ok
        shown = f"{value * 100:.0f} % (target <= {target * 100:.0f} %)" if unit == "%" else f"{value:.2f}x (target <= {target:.2f}x)"
        print(f"{'PASS' if ok else 'FAIL'}: {label}: {shown}")
    peak = max(fnrun_small.rss_kib + fnrun_big.rss_kib)
    print(f"fnrun peak RSS: {peak / 1024:.0f} MiB")
    floor = bare_process.median / bare.median - 1
    startup = fnrun_small.median - fnrun_inproc.median
    print(f"(for reference: a new fnrun process adds {startup * 1000:.0f} ms of start-up to the in-process call;")
    print(f" a fresh Python process doing only the bare run is {floor * 100:.0f} % above the in-process bare run)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
