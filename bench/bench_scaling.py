"""How fnrun's passes over user text grow with their input: every path must stay linear.

For each input shape that makes a non-linear pass show (one very long line; long lines full of
quotes, backslashes and `#`; many short resources; deep indentation; thousands of comments; one
huge block scalar; one resource with many keys), a package of one file is made at sizes n, 2n,
4n and 8n, and each path is timed in this process:

- source: `api.source` (read the package, parse it, encode the ResourceList);
- write-back: decode a function's output ResourceList, plan the write and apply it;
- diff: the unified diff of that plan (`--diff`, `--check`);
- comments: the comment extraction the write-back compares with (`yamlio.comments.comments`);
- sink: `api.sink` of the function's output into the package.

The function's output is made once per size, untimed: the ResourceList with a label added as
text (`--sdk-function`: by fnrun's set-labels in process, which re-emits every item; slow to make).
Each time is the least CPU time (this process and its reaped children) of a few runs. It prints the growth factor per doubling and, per path and
shape, the geometric mean over the doublings; a mean above 2.3x (a quadratic pass shows 4x) fails.

    python bench/bench_scaling.py              # n = 1 MB, up to 8 MB: a few minutes
    python bench/bench_scaling.py --quick      # n = 128 KB, up to 1 MB
    python bench/bench_scaling.py --shape quotes --path comments

Exit status: 0 every path linear, 1 a path grew faster than 2.3x per doubling, 2 a run failed.
"""

from __future__ import annotations

import argparse
import gc
import io
import math
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LIMIT = 2.3  # growth per doubling; linear is 2, quadratic 4
FILE = "shape.yaml"
_HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    app: bench\n"


def _fill(size: int, unit: Callable[[int], str]) -> str:
    """Lines from `unit(i)` until they hold about `size` characters."""
    parts, total, i = [], 0, 0
    while total < size:
        line = unit(i)
        parts.append(line)
        total += len(line)
        i += 1
    return "".join(parts)


def long_line(size: int) -> str:
    return _HEAD.format(name="long") + "data:\n  big: " + "a" * size + "\n"


def quotes(size: int) -> str:
    """Eight long lines: a plain scalar, a double-quoted and a single-quoted one, each full of
    quotes, backslashes and `#`, each followed by a comment; one plain line that never closes its quotes."""
    width = max(size // 8, 16)
    plain = "x" + ("\\\"'#" * width)[:width]
    double = '"' + ("\\\\\\\" '#" * width)[:width].rstrip("\\") + '"'
    single = "'" + ("'' \" \\ #" * width)[:width] + "'"
    never = "x" + ('\\"' * width)[:width]
    values = [plain, double, single, never] * 2
    lines = "".join(f"  k{i}: {value} # c {i} 'q' \"d\"\n" for i, value in enumerate(values))
    return _HEAD.format(name="quotes") + "data:\n" + lines


def many_docs(size: int) -> str:
    return _fill(size, lambda i: ("---\n" if i else "") + _HEAD.format(name=f"cm-{i}") + f"data:\n  k: v{i}\n")


def deep(size: int) -> str:
    depth, step = 24, 8
    opening = "".join(" " * (step * d) + f"l{d}:\n" for d in range(depth))
    indent = " " * (step * depth)
    return _HEAD.format(name="deep") + "data:\n  nested: x\nspec:\n" + "".join(" " * step + line for line in opening.splitlines(keepends=True)) + _fill(
        size, lambda i: f"{indent}{' ' * step}k{i}: v{i}\n"
    )


def comments(size: int) -> str:
    return _HEAD.format(name="comments") + "data:\n" + _fill(
        size, lambda i: f"  # comment {i}: 'quoted' \"too\" #{i}\n  k{i}: v{i} # trailing 'x' \"y\"\n"
    )


def block(size: int) -> str:
    return _HEAD.format(name="block") + "data:\n  script: |\n" + _fill(size, lambda i: f"    line {i}: 'text' \"and\" # not a comment \\n\n")


def keys(size: int) -> str:
    """One resource with very many keys (about 50,000 per MB)."""
    return _HEAD.format(name="keys") + "data:\n" + _fill(size, lambda i: f"  k{i}: v{i}\n")


SHAPES: dict[str, Callable[[int], str]] = {
    "long-line": long_line,
    "quotes": quotes,
    "many-docs": many_docs,
    "deep": deep,
    "comments": comments,
    "block": block,
    "keys": keys,
}
PATHS = ("source", "write-back", "diff", "comments", "sink")


_LABELS = "\n    labels:\n      app: bench\n"


def function_output(package: Path, sdk_function: bool) -> str:
    """The ResourceList a label function sends back: the package's with `team: platform` added
    to every resource's labels as text (as a function that keeps the layout does), or, with
    `sdk_function`, what fnrun's set-labels (ruamel round trip, in process) makes of it."""
    from orchestrator import api

    source = api.source(package)
    if not sdk_function:
        return source.replace(_LABELS, _LABELS + "      team: platform\n")
    from functions import sdk, set_labels

    config = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n    team: platform\n"
    out = io.StringIO()
    if sdk.run(set_labels.set_labels, set_labels.Config, stdin=io.StringIO(source + config), stdout=out) != 0:
        raise RuntimeError("set-labels failed")
    return out.getvalue()


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (the workers a big read forks): on a
    machine shared with other work, wall time measures the others as much as fnrun."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best(runs: int, prepare: Callable[[], object], step: Callable[[object], object], reusable: bool = False) -> float:
    """The least CPU time of at least `runs` runs, more (up to 20) until they add up to half a
    second: a time of milliseconds is noise otherwise. Each starts from a collected heap. A step
    whose prepared state can be used again (`reusable`) is timed in batches of at least 20 ms,
    each counted as its mean: a single call of a few ms swings with the machine's interrupts."""
    times: list[float] = []
    batch = 1
    while len(times) < runs or (sum(times) * batch < 0.5 and len(times) < 20):
        state = prepare()
        gc.collect()
        started = cpu_seconds()
        for _ in range(batch):
            step(state)
        elapsed = cpu_seconds() - started
        if reusable and elapsed < 0.02 and batch < 1024:
            batch *= 2  # too short to time: this one was calibration
            continue
        times.append(elapsed / batch)
    return min(times)


def measure(shape: str, size: int, work: Path, runs: int, paths: list[str], sdk_function: bool = False) -> dict[str, float]:
    from orchestrator import api, collector
    from orchestrator.read.package import read_package
    from orchestrator.run import resourcelist
    from orchestrator.write import diff, writeback
    from orchestrator.yamlio import comments as comment_scan

    template = work / "template"
    shutil.rmtree(template, ignore_errors=True)
    template.mkdir(parents=True)
    content = SHAPES[shape](size)
    (template / FILE).write_text(content)
    output = function_output(template, sdk_function)
    if output.count("team: platform") != content.count("app: bench"):
        raise RuntimeError(f"{shape}: set-labels did not label the resources")

    def copy() -> Path:
        target = work / "pkg"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(template, target)
        return target

    def write_back(package: object) -> object:
        with collector.paused():  # as a run holds it (the api entry points do)
            plan = writeback.plan(package, resourcelist.decode(output, "fn").items, read_package(package))  # type: ignore[arg-type]
            writeback.apply(plan)
        return plan

    plan = write_back(copy())
    if not plan.changes or b"team: platform" not in (plan.changes[0].new or b""):
        raise RuntimeError(f"{shape}: the write-back did not write the label")
    steps: dict[str, tuple[Callable[[], object], Callable[[object], object]]] = {
        "source": (lambda: template, api.source),
        "write-back": (copy, write_back),
        "diff": (lambda: plan, diff.unified),
        "comments": (lambda: None, lambda _: (comment_scan.comments(content), comment_scan.comments(output))),
        "sink": (copy, lambda package: api.sink(package, output)),
    }
    reusable = {"source", "diff", "comments"}  # their state is the same template, plan or text
    return {path: best(runs, *steps[path], reusable=path in reusable) for path in paths}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="n in bytes (default 1 MB: inputs of 1, 2, 4 and 8 MB)")
    parser.add_argument("--quick", action="store_true", help="n = 128 KB and fewer runs")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs per time (default 3, --quick 2)")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append", help="default: all")
    parser.add_argument("--path", choices=PATHS, action="append", help="default: all")
    parser.add_argument("--sdk-function", action="store_true", help="make the function output with fnrun's set-labels (ruamel, slow to make) instead of as text")
    args = parser.parse_args(argv)
    size = 128 << 10 if args.quick else args.size
    runs = 2 if args.quick and args.runs == 3 else args.runs
    paths = args.path or list(PATHS)
    sizes = [size << k for k in range(4)]
    failed: list[str] = []
    print(f"{'shape':<10} {'path':<11} " + " ".join(f"{s / 2**20:>7.2f}MB" for s in sizes) + "   growth per doubling     mean")
    try:
        with tempfile.TemporaryDirectory(prefix="fnrun-bench-scaling-") as tmp:
            for shape in args.shape or list(SHAPES):
                timings = [measure(shape, s, Path(tmp), runs, paths, args.sdk_function) for s in sizes]
                for path in paths:
                    times = [t[path] for t in timings]
                    factors = [b / a if a > 0 else float("inf") for a, b in zip(times, times[1:])]
                    mean = math.prod(factors) ** (1 / len(factors))
                    verdict = "ok" if mean <= LIMIT else "FAIL"
                    if mean > LIMIT:
                        failed.append(f"{shape}/{path}")
                    print(
                        f"{shape:<10} {path:<11} " + " ".join(f"{t:>8.3f}s" for t in times)
                        + "   " + " ".join(f"{f:>5.2f}x" for f in factors) + f"   {mean:>5.2f}x {verdict}",
                        flush=True,
                    )
    except Exception as err:  # noqa: BLE001 - a bench reports what broke and stops, whatever it was
        print(f"bench_scaling: error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    if failed:
        print(f"FAIL: above {LIMIT}x per doubling: {', '.join(failed)}")
        return 1
    print(f"PASS: every path at most {LIMIT}x per doubling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
