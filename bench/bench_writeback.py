"""Write-back of functions that change every resource: `fnrun run` against `kpt fn eval` and the
function alone, in one run.

Cases (each on a generated package, every tool run on a fresh copy):
- label: `fnrun-test/label:v1 -- team=platform` adds a label to every resource;
- namespace: `fnrun/set-namespace:v1 -- namespace=prod` changes one scalar per resource.

The function alone is a bare container run of the same image on the same ResourceList (the
package's items and the same functionConfig), in this process with the client made beforehand.
Target: fnrun's time above the function alone <= 0.25x kpt's time above the function alone.
It also reports peak RSS of both tools and how many changed resources fnrun wrote back as text
edits and how many it left to the round-trip editor (from one extra in-process run).

    python bench/bench_writeback.py                       # 400 files x 5 = 2,000 resources
    python bench/bench_writeback.py --files 2000 --runs 1 --memory 2g  # 10,000 resources

Exit status: 0 all targets met, 1 a target missed, 2 a run failed or the set-up is missing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_run import BareRun, BareRunFailed
from bench_run import _INNER, BenchError, Series, check_setup, fnrun_command, fresh_copy, measure, row, timed
from fallback_rate import tallied
from gen_package import generate

TARGET = 0.25  # (fnrun - function alone) / (kpt - function alone)
CASES = {
    "label": ("fnrun-test/label:v1", ["team=platform"], b"team: platform"),
    "namespace": ("fnrun/set-namespace:v1", ["namespace=prod"], b"namespace: prod"),
}


def function_input(template: Path, args: list[str]) -> bytes:
    """The ResourceList both tools send: the package's items and a ConfigMap of the arguments."""
    from orchestrator.read.package import read_package
    from orchestrator.run import resourcelist

    data = dict(arg.split("=", 1) for arg in args)
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": data}
    return resourcelist.encode(read_package(template).resources, config).encode()


def tool_step(command: Callable[[Path], list[str]], template: Path, work: Path, marker: bytes) -> Callable[[Series], None]:
    def step(series: Series) -> None:
        package = fresh_copy(template, work)
        done = timed(command(package), work)
        if "fn" in command(package)[:2] and "[PASS]" not in done.stdout + done.stderr:
            raise BenchError(f"kpt did not report the function passed:\n{done.stderr[-2000:]}")
        sample = next(package.rglob("*.yaml")).read_bytes()
        if marker not in sample:
            raise BenchError(f"{series.name}: the function's change is not in {sample[:200]!r}")
        series.times.append(done.seconds)
        series.rss_kib.append(done.rss_kib)
        inner = _INNER.search(done.stderr)
        if inner:
            series.inner.append(done.seconds - float(inner.group(1)))

    return step


def edit_counts(template: Path, work: Path, image: str, args: list[str], memory: str) -> dict[str, int]:
    """How fnrun wrote the changed resources back: text edits or the round trip (in-process run)."""
    from orchestrator import api

    package = fresh_copy(template, work)
    with open(os.devnull, "w") as devnull, tallied() as counts:
        request = api.RunRequest(
            directory=str(package), functions=api.Functions(image=image, arguments=tuple(args)),
            sandbox=api.SandboxSettings(image_pull_policy="never", memory=memory), output=api.Output(quiet=True),
        )
        api.run(request, stdout=devnull)
    return dict(counts)


def run_case(name: str, template: Path, work: Path, runs: int, memory: str) -> tuple[list[str], bool]:
    image, args, marker = CASES[name]
    check_setup(image)
    bare = BareRun(image, function_input(template, args), memory)
    bare.min_output = 1000  # a function that changes things may answer with less than it got
    bare()  # warm the engine's caches for this image
    fnrun, kpt, alone = Series(f"fnrun {name}"), Series(f"kpt {name}"), Series(f"alone {name}")

    def bare_step(series: Series) -> None:
        series.times.append(bare())

    fnrun_cmd = lambda package: [*fnrun_command(), "run", str(package), "--image", image, "--image-pull-policy", "never", "--memory", memory, "--no-cache", "--no-builtin", "--", *args]  # noqa: E731
    kpt_cmd = lambda package: ["kpt", "fn", "eval", str(package), "--image", image, "--image-pull-policy", "never", "--", *args]  # noqa: E731
    measure(runs, [(fnrun, tool_step(fnrun_cmd, template, work, marker)), (kpt, tool_step(kpt_cmd, template, work, marker)), (alone, bare_step)])
    counts = edit_counts(template, work, image, args, memory)
    total = sum(counts.values()) or 1
    above_fnrun, above_kpt = fnrun.median - alone.median, kpt.median - alone.median
    ratio = above_fnrun / above_kpt if above_kpt > 0 else float("inf")
    ok = ratio <= TARGET
    lines = [
        row(f"{name}: fnrun run (process, end to end)", fnrun),
        row(f"{name}: kpt fn eval", kpt),
        row(f"{name}: the function alone (bare container run)", alone),
        f"{name}: above the function alone: fnrun {above_fnrun:.2f} s, kpt {above_kpt:.2f} s -> {ratio:.2f}x",
        f"{name}: fnrun's own work within its runs (its time less the function's as it reports it): median {statistics.median(fnrun.inner):.2f} s"
        f" -> {statistics.median(fnrun.inner) / above_kpt:.2f}x kpt above the function (not noisy across runs; the target uses the line above)"
        if fnrun.inner and above_kpt > 0 else f"{name}: fnrun did not report the function's time",
        f"{name}: written as text edits {counts.get('text', 0)}, round trip {counts.get('roundtrip', 0)}"
        f" (fallback rate {counts.get('roundtrip', 0) / total * 100:.1f} %)",
        f"{'PASS' if ok else 'FAIL'}: {name}: fnrun above the function <= {TARGET}x kpt above the function ({ratio:.2f}x)",
    ]
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--per-file", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="default: all")
    parser.add_argument("--memory", default="512m", help="the function container's memory limit, fnrun's and the bare run's (kpt sets none)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="fnrun-bench-wb-") as tmp:
            template, work = Path(tmp) / "pkg", Path(tmp) / "work"
            work.mkdir()
            count = generate(template, args.files, args.per_file)
            print(f"{count} resources in {args.files} files, {args.runs} rounds", file=sys.stderr)
            report, missed = [], 0
            for name in args.case or sorted(CASES):
                lines, ok = run_case(name, template, work, args.runs, args.memory)
                report += lines
                missed += not ok
    except (BenchError, BareRunFailed) as err:
        print(f"bench_writeback: error: {err}", file=sys.stderr)
        return 2
    print(f"\n{'case / tool (wall seconds)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7}")
    print("\n".join(report))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
