"""`fnrun render` side by side with `kpt fn render`, in one run (the rows fnrun
can run today):

1. pipe10: a 10-function Kptfile pipeline of one image over a small package;
2. mono20: a root package with 20 subpackages, one function each;
3. one function over 4 resources (no image called twice: no warm container);
4. the same subpackages again with nothing changed and the result cache warm: the rendered package rendered
   once more to fill the cache with what it sends, then timed (a CI gate re-rendering an
   unchanged repository on every push); kpt has no cache and renders again in full.

Both tools render fresh copies of the same package with the same local image
(`fnrun/set-labels:v1`, a different label per step, so every step changes something) and
`--image-pull-policy never`; runs are interleaved. fnrun runs with `--no-builtin --no-cache`, so it
runs the same functions kpt does (bench_builtin.py measures the in-process path), and with its
default --jobs. By default an image a render calls more than once serves every call from one warm
container (orchestrator.runtimes.container.warm); a `--no-warm` column shows a container per call,
started ahead and run at once where independent. Medians of --runs; peak RSS from wait4. The
goals are the product's; this bench exits 1 when one is missed, 2 when a run fails.

Two floors. The exec floor is the least a tool that keeps a container warm and starts each call
through the engine's exec can do: one container start (bare_run.BareRun) plus each call as a bare
`docker exec` of the image's entrypoint in a running container (warm_floor.bare_exec), one after
the other. fnrun's warm calls do not use the engine's exec (the container's PID 1 forks them,
or the image's Python fork server does), so they can run below it. Last, per call: a warm call
through fnrun against that bare exec, in the same container.

The cold floor is what no tool that starts these containers can beat on this machine: the
case's containers (10 or 20) each created, attached, started, fed a ResourceList, waited for and
removed through the docker SDK (bare_run.BareRun, fnrun's sandbox) from 4 threads at once, with the
client made beforehand and nothing else done — not even the pipeline's step-after-step order. A
goal whose seconds are below the floor can only be met by not starting containers (the cache, the
builtin catalog).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_run import BareRun
from bench_run import fnrun_command, rounds_main, timed
from warm_floor import per_call

IMAGE = "fnrun/set-labels:v1"
GOALS = {"pipeline": 0.25, "subpackages": 0.2, "single": 0.55, "warm": 0.1}
RESOURCE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"


def kptfile(name: str, steps: list[str]) -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
    if steps:
        text += "pipeline:\n  mutators:\n" + "".join(f"  - image: {IMAGE}\n    configMap:\n      {s}: \"yes\"\n" for s in steps)
    return text


def pipeline_package(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(kptfile("pipeline", [f"step{n}" for n in range(10)]))
    for n in range(4):
        (root / f"r{n}.yaml").write_text(RESOURCE.format(name=f"r{n}"))


def single_package(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(kptfile("single", ["only"]))
    for n in range(4):
        (root / f"r{n}.yaml").write_text(RESOURCE.format(name=f"r{n}"))


def subpackages_package(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(kptfile("root", []))
    for n in range(20):
        sub = root / f"sub{n:02d}"
        sub.mkdir()
        (sub / "Kptfile").write_text(kptfile(f"sub{n:02d}", [f"in-sub{n:02d}"]))
        (sub / "cm.yaml").write_text(RESOURCE.format(name=f"cm{n}"))


def render(tool: str, template: Path, work: Path, cache_dir: Path, keep: bool = False) -> tuple[float, int, Path]:
    """tool: kpt, fnrun, or fnrun-cold (fnrun --no-warm)."""
    target = work / f"{tool}-{template.name}"
    if not keep:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(template, target)
    if tool == "kpt":
        finished = timed(["kpt", "fn", "render", str(target), "--image-pull-policy", "never"], work)
    else:
        os.environ["FNRUN_CACHE_DIR"] = str(cache_dir)
        flags = (["--no-warm"] if tool == "fnrun-cold" else []) + ([] if keep else ["--no-cache"])  # keep: the cache cases
        finished = timed([*fnrun_command(), "render", str(target), "--image-pull-policy", "never", "--no-builtin", "-q", *flags], work)
    return finished.seconds, finished.rss_kib, target


CONTAINERS = {"pipeline": 10, "subpackages": 20, "single": 1}
FLOOR_INPUT = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + RESOURCE.format(name="cm").replace("\n", "\n  ").rstrip()
               + "\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fc\n  data:\n    step: \"yes\"\n").encode()


def container_floor(count: int) -> float:
    """Seconds for `count` bare container runs of IMAGE from 4 threads (module docstring)."""
    bare = BareRun(IMAGE, FLOOR_INPUT)
    bare.min_output = 1
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: bare(), range(count)))
    return time.perf_counter() - started


def warm_floor(count: int, exec_seconds: float) -> float:
    """One bare container run plus `count` bare execs (module docstring)."""
    bare = BareRun(IMAGE, FLOOR_INPUT)
    bare.min_output = 1
    started = time.perf_counter()
    bare()
    return time.perf_counter() - started + count * exec_seconds


def main(argv: list[str] | None = None) -> int:
    return rounds_main("bench_render", __doc__ or "", bench, argv)


def bench(work: Path, runs: int) -> int:
    templates = {"pipeline": work / "t" / "pipeline", "subpackages": work / "t" / "subpackages", "single": work / "t" / "single"}
    pipeline_package(templates["pipeline"])
    subpackages_package(templates["subpackages"])
    single_package(templates["single"])
    os.chmod(work, 0o755)  # /local of the calls: readable by the sandbox user, as a package usually is
    warm_call, bare_exec = per_call(IMAGE, FLOOR_INPUT, templates["pipeline"])
    times: dict[tuple[str, str], list[float]] = {}
    rss: dict[tuple[str, str], list[int]] = {}
    for run in range(runs):
        for case, template in templates.items():
            for tool in ("fnrun", "kpt", "fnrun-cold"):
                cold_cache = work / f"cache-{case}-{run}-{tool}"
                seconds, kib, target = render(tool, template, work, cold_cache)
                times.setdefault((case, tool), []).append(seconds)
                rss.setdefault((case, tool), []).append(kib)
            times.setdefault((case, "floor"), []).append(container_floor(CONTAINERS[case]))
            times.setdefault((case, "exec floor"), []).append(warm_floor(CONTAINERS[case], bare_exec))
            if case == "subpackages":  # the same again, nothing changed: fnrun's cache is warm
                cold_cache = work / f"cache-{case}-{run}-fnrun"
                render("fnrun", template, work, cold_cache, keep=True)  # what a rendered package sends is now cached
                for tool in ("fnrun", "kpt"):
                    seconds, kib, _ = render(tool, template, work, cold_cache, keep=True)
                    times.setdefault(("warm", tool), []).append(seconds)
                    rss.setdefault(("warm", tool), []).append(kib)
    print(f"{'case':<46} {'fnrun':>8} {'kpt':>8} {'ratio':>7} {'goal':>6}  peak RSS fnrun/kpt  {'no-warm':>8}  goal s / exec floor / cold floor")
    missed = 0
    labels = {
        "pipeline": "10 functions, one Kptfile, 4 resources",
        "subpackages": "root + 20 subpackages, one function each",
        "single": "one function, 4 resources",
        "warm": "the same again, nothing changed (cache warm)",
    }
    for case, label in labels.items():
        ours, theirs = statistics.median(times[(case, "fnrun")]), statistics.median(times[(case, "kpt")])
        ratio = ours / theirs
        goal = GOALS[case]
        status = "PASS" if ratio <= goal else "MISS"
        missed += status == "MISS"
        serial = times.get((case, "fnrun-cold"))
        serial_text = f"{statistics.median(serial):>7.2f}s" if serial else f"{'-':>8}"
        floor, lowest = times.get((case, "floor")), times.get((case, "exec floor"))
        floor_text = (f"{goal * theirs:.2f}s / {statistics.median(lowest):.2f}s / {statistics.median(floor):.2f}s" if floor and lowest
                      else f"{goal * theirs:.2f}s / - / -")
        if lowest and goal * theirs < statistics.median(lowest):
            floor_text += " (goal below the exec floor)"
        print(f"{label:<46} {ours:>7.2f}s {theirs:>7.2f}s {ratio:>6.2f}x {goal:>5.2f}x  "
              f"{max(rss[(case, 'fnrun')]) // 1024} MB / {max(rss[(case, 'kpt')]) // 1024} MB  {serial_text}  {floor_text}  {status}")
    print(f"per call in a warm container: fnrun {warm_call * 1000:.0f} ms, a bare docker exec of the entrypoint "
          f"{bare_exec * 1000:.0f} ms ({(warm_call - bare_exec) * 1000:+.0f} ms; medians)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
