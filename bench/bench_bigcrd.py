"""A label run over a real repository of big CustomResourceDefinitions: fnrun's own work against
`fnrun source` on the same package, for the container and for the builtin (in-process) function.

The package is a directory given on the command line, never downloaded here; for the numbers in
bench/README.md, kube-prometheus's `manifests/` and `examples/` (110 files, 5.8 MB, mostly CRDs
with long description lines):

    git clone <a kube-prometheus checkout> /tmp/kube-prometheus
    mkdir /tmp/kp && cp -r /tmp/kube-prometheus/manifests /tmp/kube-prometheus/examples /tmp/kp/
    rm /tmp/kp/examples/alertmanager-config-with-template.yaml   # not YAML (a broken template)
    rm /tmp/kp/examples/alertmanager-config.yaml /tmp/kp/examples/existingrule.yaml   # not KRM: run --image refuses them, as kpt fn eval does
    python bench/bench_bigcrd.py /tmp/kp --runs 3

In each round, rotating which goes first, on a fresh copy each time:
- `fnrun source PKG` (a process, output to a file);
- `fnrun run PKG --image fnrun/set-labels:v1 --no-builtin -- team=platform` (the container);
- the same without --no-builtin (the function in-process);
- the function alone: a bare container run of the image on the same ResourceList (docker SDK,
  client made beforehand), and the same code as a plain process (`python -m functions.set_labels`).

fnrun's own work is its total less the function alone: for the container, less the bare run; for
the builtin, less the function's own time as fnrun reports it (`[ok] ... (N s, builtin)`).
Targets: own work <= 2x `fnrun source`, both ways; builtin total below container total.

Exit status: 0 targets met, 1 a target missed, 2 a run failed or the set-up is missing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_run import BareRun, BareRunFailed
from bench_run import BenchError, Series, child_env, fnrun_command, fresh_copy, measure, row, timed

IMAGE = "fnrun/set-labels:v1"
ARGS = ["team=platform"]
TARGET = 2.0  # fnrun's own work / fnrun source
_REPORTED = re.compile(r"\[ok\] \S+ \((\d+(?:\.\d+)?)s")


def function_input(package: Path) -> bytes:
    from orchestrator.read.package import read_package
    from orchestrator.run import resourcelist

    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": dict(a.split("=", 1) for a in ARGS)}
    return resourcelist.encode(read_package(package).resources, config).encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path, help="a directory of YAML (e.g. kube-prometheus's manifests and examples)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memory", default="2g", help="the function container's memory limit (fnrun's and the bare run's)")
    parser.add_argument("--source", type=Path, help="run fnrun from this checkout (first on PYTHONPATH); its functions/ must match the image's for the builtin run")
    args = parser.parse_args(argv)
    if args.source is not None:
        import bench_run

        bench_run.SOURCE = args.source.resolve()
    if not args.package.is_dir():
        print(f"bench_bigcrd: error: {args.package} is not a directory", file=sys.stderr)
        return 2
    files = [p for p in args.package.rglob("*") if p.is_file()]
    print(f"{args.package}: {len(files)} files, {sum(p.stat().st_size for p in files) / 2**20:.1f} MiB, {args.runs} rounds", file=sys.stderr)
    source, container, builtin = Series("fnrun source"), Series("fnrun run (container)"), Series("fnrun run (builtin)")
    bare, process = Series("alone: bare container run"), Series("alone: python -m functions.set_labels")
    reported: dict[str, list[float]] = {"container": [], "builtin": []}
    try:
        with tempfile.TemporaryDirectory(prefix="fnrun-bench-bigcrd-") as tmp:
            work = Path(tmp)
            stdin = function_input(args.package)
            (work / "input.yaml").write_bytes(stdin)
            alone = BareRun(IMAGE, stdin, args.memory)
            alone.min_output = len(stdin) // 2
            alone()  # warm the engine's caches for this image

            def source_step(series: Series) -> None:
                done = timed([*fnrun_command(), "source", str(args.package)], work)
                if "kind: ResourceList" not in done.stdout[:200]:
                    raise BenchError("fnrun source printed no ResourceList")
                series.times.append(done.seconds)
                series.rss_kib.append(done.rss_kib)

            def run_step(flags: list[str], how: str):
                def step(series: Series) -> None:
                    package = fresh_copy(args.package, work)
                    command = [*fnrun_command(), "run", str(package), "--image", IMAGE, "--image-pull-policy", "never", "--no-cache", "--memory", args.memory, *flags, "--", *ARGS]
                    done = timed(command, work)
                    if ("builtin" in done.stderr) != (how == "builtin"):
                        raise BenchError(f"fnrun run {' '.join(flags)}: expected a {how} run:\n{done.stderr[-1000:]}")
                    if not any(b"team: platform" in crd for crd in _crds(package)):
                        raise BenchError(f"{how} run: no label written to a CustomResourceDefinition")
                    series.times.append(done.seconds)
                    series.rss_kib.append(done.rss_kib)
                    inner = _REPORTED.search(done.stderr)
                    if inner:
                        reported[how].append(float(inner.group(1)))

                return step

            def bare_step(series: Series) -> None:
                series.times.append(alone())

            def process_step(series: Series) -> None:
                with open(work / "input.yaml", "rb") as feed:
                    started = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "functions.set_labels"], stdin=feed, stdout=subprocess.DEVNULL, env=child_env(), cwd=args.source or Path(__file__).resolve().parents[1])
                    seconds = time.perf_counter() - started
                if done.returncode != 0:
                    raise BenchError("python -m functions.set_labels failed")
                series.times.append(seconds)

            measure(args.runs, [(source, source_step), (container, run_step(["--no-builtin"], "container")), (builtin, run_step([], "builtin")), (bare, bare_step), (process, process_step)])
    except (BenchError, BareRunFailed) as err:
        print(f"bench_bigcrd: error: {err}", file=sys.stderr)
        return 2

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2] if values else float("nan")

    own_container = container.median - bare.median
    own_builtin = builtin.median - median(reported["builtin"])
    lines = [row(s.name, s) for s in (source, container, builtin, bare, process)]
    lines.append(f"function time as fnrun reports it: container {median(reported['container']):.2f} s, builtin {median(reported['builtin']):.2f} s")
    checks = [
        (f"container: fnrun's own work (total - bare run) {own_container:.2f} s = {own_container / source.median:.2f}x source", own_container <= TARGET * source.median),
        (f"builtin: fnrun's own work (total - function as reported) {own_builtin:.2f} s = {own_builtin / source.median:.2f}x source", own_builtin <= TARGET * source.median),
        (f"builtin total {builtin.median:.2f} s below container total {container.median:.2f} s", builtin.median < container.median),
    ]
    print(f"\n{'(wall seconds)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7}")
    print("\n".join(lines))
    for text, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}: {text} (target <= {TARGET}x)" if "own work" in text else f"{'PASS' if ok else 'FAIL'}: {text}")
    return 0 if all(ok for _, ok in checks) else 1


def _crds(package: Path) -> list[bytes]:
    """The package's files that hold a CustomResourceDefinition (whatever they are named)."""
    texts = (path.read_bytes() for path in package.rglob("*.y*ml"))
    return [text for text in texts if b"kind: CustomResourceDefinition" in text]


if __name__ == "__main__":
    sys.exit(main())
