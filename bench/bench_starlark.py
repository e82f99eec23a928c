"""A Starlark label script in-process vs the same labels through a container.

    .venv/bin/python bench/bench_starlark.py [--runs 5]

kpt's starlark image cannot be pulled here (no registry) and is not in the local engine, so the
container side is the equivalent function fnrun has as an image: fnrun/set-labels:v1 adding the
same label. Four ways over one small package (3 Deployments, 3 Services), each on a fresh copy,
interleaved, medians: `fnrun render --builtin-catalog` with a StarlarkRun step (the script runs
in-process); `fnrun render --no-builtin` of a fnrun/set-labels:v1 step (a container); the same
step in-process (fnrun's own catalog builtin); `kpt fn render` of the set-labels step (kpt
starts the container). The result cache is off. All leave the same resources (checked).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_builtin import WORKLOAD
from bench_run import BenchError, fnrun_command, rounds_main, timed

STARLARK_STEP = """\
  - image: gcr.io/kpt-fn/starlark:v0.5
    configPath: add-team.yaml
"""
SCRIPT = """\
apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: add-team
  annotations:
    config.kubernetes.io/local-config: "true"
source: |
  for r in ctx.resource_list["items"]:
    if r["kind"] in ("Deployment", "Service"):
      r["metadata"].setdefault("labels", {})["team"] = "payments"
      if r["kind"] == "Deployment":
        r["spec"]["template"]["metadata"]["labels"]["team"] = "payments"
"""
IMAGE_STEP = """\
  - image: fnrun/set-labels:v1
    configMap:
      team: payments
"""
NAMES = ("api", "web", "worker")
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\npipeline:\n  mutators:\n"


def render(*extra: str):
    return lambda target: [*fnrun_command(), "render", str(target), "--image-pull-policy", "never", "-q", "--no-status", *extra]


WAYS = {
    "starlark script, builtin": ("starlark", render("--builtin-catalog")),
    "fnrun/set-labels:v1, container": ("image", render("--no-builtin")),
    "fnrun/set-labels:v1, builtin": ("image", render()),
    "kpt fn render, set-labels container": ("image", lambda target: ["kpt", "fn", "render", str(target), "--image-pull-policy", "never"]),
}


def package(root: Path, step: str) -> None:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(KPTFILE + (STARLARK_STEP if step == "starlark" else IMAGE_STEP))
    if step == "starlark":
        (root / "add-team.yaml").write_text(SCRIPT)
    for name in NAMES:
        (root / f"{name}.yaml").write_text(WORKLOAD.format(name=name))


def _data(root: Path, name: str) -> list:
    return list(yaml.safe_load_all((root / f"{name}.yaml").read_text()))


def main(argv: list[str] | None = None) -> int:
    return rounds_main("bench_starlark", __doc__ or "", bench, argv, needs_kpt=False)


def bench(work: Path, runs: int) -> int:
    os.environ["FNRUN_CACHE"] = "0"  # every run really runs its functions
    for step in ("starlark", "image"):
        package(work / f"template-{step}", step)
    ways = [w for w in WAYS if shutil.which("kpt") or not w.startswith("kpt")]
    times: dict[str, list[float]] = {way: [] for way in ways}
    for run in range(runs):
        targets = {}
        for way in ways[run % len(ways):] + ways[:run % len(ways)]:
            step, command = WAYS[way]
            target = work / f"run{run}-{len(targets)}"
            shutil.copytree(work / f"template-{step}", target)
            times[way].append(timed(command(target), work).seconds)
            targets[way] = target
        first = targets[ways[0]]
        for way, target in targets.items():
            difference = next((f"{n}.yaml" for n in NAMES if _data(first, n) != _data(target, n)), None)
            if difference:
                raise BenchError(f"{way} left different resources: {difference}")
    container = statistics.median(times["fnrun/set-labels:v1, container"])
    print(f"Starlark label script vs the same labels by an image, 6 resources; {runs} runs, medians")
    print(f"{'':<38} {'seconds':>8} {'vs container':>13}")
    for way in ways:
        median = statistics.median(times[way])
        print(f"{way:<38} {median:>7.3f}s {median / container:>12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
