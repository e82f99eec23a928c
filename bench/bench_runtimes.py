"""Container start under each OCI runtime: `fnrun run --runtime NAME` with runc, crun and runsc.

Runs against the engine DOCKER_HOST names (which must have the runtimes registered; see
bench/README.md for a private dockerd that has them) on a 4-resource package with the identity
image, interleaving the runtimes round by round. The image is copied from the machine's default
engine when the target lacks it. A runtime the engine does not offer, or that cannot run on this
host, is reported with its one-line error instead of a number. Exit 0 when every runtime offered ran.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_run import IMAGE, BenchError, Series, fnrun_step, measure, row
from gen_package import generate

RUNTIMES = ("runc", "crun", "runsc")
DEFAULT_ENGINE = "unix:///var/run/docker.sock"


def ensure_image(client: docker.DockerClient, image: str) -> None:
    try:
        client.api.inspect_image(image)
        return
    except docker.errors.ImageNotFound:
        pass
    source = docker.DockerClient(base_url=DEFAULT_ENGINE, timeout=300).api
    print(f"copying {image} from {DEFAULT_ENGINE}", file=sys.stderr)
    for _ in client.api.load_image(source.get_image(image)):
        pass


def runtime_step(template: Path, work: Path, image: str, runtime: str):
    inner = fnrun_step(template, work, image)

    def step(series: Series) -> None:
        os.environ["FNRUN_RUNTIME"] = runtime  # bench_run's children inherit the environment
        try:
            inner(series)
        finally:
            del os.environ["FNRUN_RUNTIME"]

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--image", default=IMAGE)
    args = parser.parse_args(argv)
    client = docker.from_env(timeout=300)
    offered = set(client.info().get("Runtimes") or {})
    ensure_image(client, args.image)
    with tempfile.TemporaryDirectory(prefix="fnrun-bench-") as tmp:
        small, work = Path(tmp) / "small", Path(tmp) / "work"
        work.mkdir()
        generate(small, 1, 4)
        steps, failed = [], {}
        for runtime in RUNTIMES:
            if runtime not in offered:
                failed[runtime] = f"not registered with the engine (it offers {', '.join(sorted(offered))})"
                continue
            step = runtime_step(small, work, args.image, runtime)
            try:
                step(Series("warm-up"))
            except BenchError as err:
                failed[runtime] = " ".join(str(err).split("\n")[1:]).strip()[-300:]
                continue
            steps.append((Series(f"fnrun run --runtime {runtime}, 4 resources"), step))
        measure(args.runs, steps)
    host = os.environ.get("DOCKER_HOST", DEFAULT_ENGINE)
    print(f"engine: {host}; {args.runs} rounds, seconds per run")
    print(f"{'':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3} {'RSS MiB':>7}")
    for series, _ in steps:
        print(row(series.name, series))
    for runtime, reason in failed.items():
        print(f"fnrun run --runtime {runtime}: cannot run here: {reason}")
    return 0 if len(steps) == len([r for r in RUNTIMES if r in offered]) and steps else 1


if __name__ == "__main__":
    sys.exit(main())
