"""fnrun's catalog in-process: a 5-function Kptfile pipeline of fnrun's own catalog
over a small package, rendered by `fnrun render` with builtins (the default), by `fnrun render
--no-builtin` (every step a container) and by `kpt fn render --image-pull-policy never` with the
same local images.

The result cache is off (FNRUN_CACHE=0: kpt has none). Fresh copies of one package per run, runs interleaved, medians of --runs, peak RSS from wait4 (for
fnrun, the largest of fnrun and the builtin children it waited for). All three must leave the same
files. Goal: builtin ≤ 0.1× kpt; exit 1 when missed, 2 when a run fails.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_run import BenchError, fnrun_command, rounds_main, same_tree, timed

GOAL = 0.1
KPTFILE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: shop
pipeline:
  mutators:
  - image: fnrun/set-namespace:v1
    configMap:
      namespace: shop
  - image: fnrun/set-labels:v1
    configMap:
      app.kubernetes.io/part-of: shop
  - image: fnrun/set-labels:v1
    configMap:
      team: payments
  validators:
  - image: fnrun/require-resource-limits:v1
    configMap:
      resources: cpu, memory
  - image: fnrun/check-service-selectors:v1
"""
WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
      - name: main
        image: registry.example.com/{name}:1.0  # pinned
        resources:
          limits: {{cpu: "1", memory: 256Mi}}
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector:
    app: {name}
  ports:
  - port: 80
"""
TOOLS = {
    "fnrun render (builtin)": lambda target: [*fnrun_command(), "render", str(target), "--image-pull-policy", "never", "-q"],
    "fnrun render --no-builtin": lambda target: [*fnrun_command(), "render", str(target), "--image-pull-policy", "never", "-q", "--no-builtin"],
    "kpt fn render": lambda target: ["kpt", "fn", "render", str(target), "--image-pull-policy", "never"],
}


def package(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(KPTFILE)
    for name in ("api", "web", "worker"):
        (root / f"{name}.yaml").write_text(WORKLOAD.format(name=name))


def main(argv: list[str] | None = None) -> int:
    return rounds_main("bench_builtin", __doc__ or "", bench, argv)


def bench(work: Path, runs: int) -> int:
    os.environ["FNRUN_CACHE"] = "0"  # every run really runs its functions, as kpt's do
    template = work / "template"
    package(template)
    _check_all_builtin(work, template, "before")
    times: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    rss: dict[str, list[int]] = {tool: [] for tool in TOOLS}
    tools = list(TOOLS)
    for run in range(runs):
        targets = {}
        for tool in tools[run % len(tools):] + tools[:run % len(tools)]:
            target = work / f"run{run}-{len(targets)}"
            shutil.copytree(template, target)
            finished = timed(TOOLS[tool](target), work)
            times[tool].append(finished.seconds)
            rss[tool].append(finished.rss_kib)
            targets[tool] = target
            print(f"  {tool}: {finished.seconds:.3f}s", file=sys.stderr, flush=True)
        first = targets[tools[0]]
        for tool, target in targets.items():
            # fnrun's two ways must leave the same bytes; kpt re-spaces comments and records no
            # Kptfile status, so against kpt the resources must be the same data
            difference = same_tree(first, target) if tool.startswith("fnrun") else _same_resources(first, target)
            if difference:
                raise BenchError(f"{tool} left different files: {difference}")
    _check_all_builtin(work, template, "after")
    kpt = statistics.median(times["kpt fn render"])
    print(f"5-function Kptfile pipeline of fnrun's catalog, 6 resources; {runs} runs, medians")
    print(f"{'':<28} {'seconds':>8} {'vs kpt':>7}  peak RSS")
    for tool in TOOLS:
        median = statistics.median(times[tool])
        print(f"{tool:<28} {median:>7.3f}s {median / kpt:>6.2f}x  {max(rss[tool]) // 1024} MB")
    ratio = statistics.median(times["fnrun render (builtin)"]) / kpt
    print(f"goal: builtin <= {GOAL:.2f}x kpt: {'PASS' if ratio <= GOAL else 'MISS'} ({ratio:.2f}x)")
    return 0 if ratio <= GOAL else 1


def _check_all_builtin(work: Path, template: Path, when: str) -> None:
    """Every step must have run builtin, before and after the timed runs: a catalog image built
    from other sources (another checkout's scripts/build_images.py) makes fnrun start containers,
    and the builtin column would time those."""
    target = work / f"check-{when}"
    shutil.copytree(template, target)
    finished = timed([*TOOLS["fnrun render (builtin)"](target), "--results-format", "json"], work)
    steps = json.loads(finished.stdout)["items"]
    if len(steps) != 5 or not all(step.get("builtin") for step in steps):
        raise BenchError(f"{when} the runs, not every step ran builtin (stale images? "
                         "scripts/build_images.py --only set-labels set-namespace require-resource-limits check-service-selectors)")


def _same_resources(a: Path, b: Path) -> str | None:
    for path in sorted(a.glob("*.yaml")):
        if list(yaml.safe_load_all(path.read_text())) != list(yaml.safe_load_all((b / path.name).read_text())):
            return path.name
    return None


if __name__ == "__main__":
    sys.exit(main())
