"""`fnrun run --server` against `kpt fn eval` in one run, and a load profile of `fnrun serve`.

1. One identity function over a 4-resource package, interleaved, medians of fresh runs:
   `fnrun run DIR --image IMAGE --server unix:SOCK` against a `fnrun serve --no-cache` this bench
   started and warmed with one call, against `kpt fn eval DIR --image IMAGE`, with plain
   `fnrun run` (no server) for reference. Target: fnrun via the server <= 0.35x kpt's median.
   Both fnrun and the server run with --no-cache, so every round reaches a container (the same
   input every round would otherwise be a result-cache hit). Each run gets a fresh copy of the
   package and must leave it byte-identical (the image echoes stdin).
2. A load profile, no target: CLIENTS clients (processes, or threads with --threads) each make
   CALLS EvaluateFunction calls straight to the server, alternating fnrun-test/identity:v1 and
   fnrun-test/label:v1, each call with a ResourceList of its own; every answer must hold its own
   items (and, from label, its own label). Calls per second and latency p50/p90/p99.
3. The server is stopped with SIGTERM and must exit 0 leaving none of its containers.

Exit status: 0 the target met, 1 missed, 2 a run failed or the set-up is missing (no kpt, no image,
no engine, no grpcio).
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_run  # noqa: E402  (sibling scripts, not a package)
from bench_run import BenchError, Series, fnrun_command, fresh_copy, measure, row, same_tree, timed  # noqa: E402
from gen_package import generate  # noqa: E402

IMAGE = "fnrun-test/identity:v1"
LOAD_IMAGES = ("fnrun-test/identity:v1", "fnrun-test/label:v1")
SERVER_TARGET = 0.35  # fnrun run --server / kpt fn eval, 4 resources (issue 43)
LABEL_KEY = "bench-call"


# ------------------------------------------------------------------------------------ the server


class Served:
    """A `fnrun serve --no-cache` on a unix socket of its own, and a channel to it."""

    def __init__(self, tmp: Path, parallel: int | None) -> None:
        import grpc
        from orchestrator.runtimes.remote import wire

        self.address = f"unix:{tmp / 'serve.sock'}"
        self.log = tmp / "serve.log"
        extra = ["--parallel", str(parallel)] if parallel else []
        command = [*fnrun_command(), "serve", "--address", self.address, "--no-cache", "--image-pull-policy", "never", *extra]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, env=bench_run.child_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.channel = grpc.insecure_channel(self.address)
        self.messages, services = wire.modules()
        self.stub = services.FunctionEvaluatorStub(self.channel)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            self.stop()
            raise BenchError(f"fnrun serve did not listen within 60 s:\n{self.tail()}") from None

    def call(self, body: bytes, image: str) -> bytes:
        answer = self.stub.EvaluateFunction(self.messages.EvaluateFunctionRequest(resource_list=body, image=image), timeout=300)
        return bytes(answer.resource_list)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def stop(self) -> tuple[int, float]:
        """SIGTERM; (exit code, seconds to exit). Killed after 60 s (and then the code says so)."""
        self.channel.close()
        started = time.perf_counter()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode, time.perf_counter() - started


def leftovers(pid: int) -> list[str]:
    """Containers the server `pid` created that still exist (it labels each with its pid)."""
    import docker
    from orchestrator.runtimes.container.settings import LABEL_PID

    client = docker.from_env()
    return [c["Id"][:12] for c in client.api.containers(all=True, filters={"label": f"{LABEL_PID}={pid}"})]


def remove(ids: list[str]) -> None:
    import docker

    client = docker.from_env()
    for ident in ids:
        client.api.remove_container(ident, force=True)


# ------------------------------------------------------------------------- 1: side by side with kpt


def server_step(template: Path, work: Path, image: str, address: str) -> Callable[[Series], None]:
    """One `fnrun run --server` over a fresh copy; the copy must come back byte-identical."""

    def step(series: Series) -> None:
        package = fresh_copy(template, work)
        done = timed([*fnrun_command(), "run", str(package), "--image", image, "--server", address, "--no-cache"], work)
        difference = same_tree(template, package)
        if difference:
            raise BenchError(f"fnrun --server changed the package for an identity function: {difference}")
        series.times.append(done.seconds)
        inner = bench_run._INNER.search(done.stderr)
        if inner:
            series.inner.append(float(inner.group(1)))

    return step


# The least a Python client of the server does: a new interpreter, grpc, the .proto, one call.
BARE_CLIENT = (
    "import sys, grpc\nfrom orchestrator.runtimes.remote import wire\n"
    "messages, services = wire.modules()\n"
    "stub = services.FunctionEvaluatorStub(grpc.insecure_channel(sys.argv[1]))\n"
    "body = open(sys.argv[2], 'rb').read()\n"
    "answer = stub.EvaluateFunction(messages.EvaluateFunctionRequest(resource_list=body, image=sys.argv[3]), timeout=300)\n"
    "sys.exit(0 if answer.resource_list == body else 3)"
)


def command_step(command: list[str], work: Path) -> Callable[[Series], None]:
    """A reference process, timed as the tools are (it must exit 0)."""

    def step(series: Series) -> None:
        series.times.append(timed(command, work).seconds)

    return step


def kpt_only_times(template: Path, work: Path, image: str) -> Callable[[Series], None]:
    def step(series: Series) -> None:
        series.times.append(bench_run.run_kpt(template, work, image)[0])

    return step


def plain_step(template: Path, work: Path, image: str) -> Callable[[Series], None]:
    def step(series: Series) -> None:
        seconds, _, inner = bench_run.run_fnrun(template, work, image)
        series.times.append(seconds)
        if inner is not None:
            series.inner.append(inner)

    return step


# ------------------------------------------------------------------------------- 2: load profile


def call_body(tag: str) -> bytes:
    """A small ResourceList of its own: two Deployments named after the call, the label's value too."""
    items = "".join(
        f"- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: {tag}-{part} # call {tag}\n"
        f"  spec:\n    replicas: 1\n"
        for part in ("a", "b")
    )
    config = f"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n    {LABEL_KEY}: '{tag}'\n"
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}{config}".encode()


def wrong_answer(answer: bytes, body: bytes, tag: str, image: str) -> str | None:
    """None when the answer holds this call's own items (and label, from the label image)."""
    import yaml

    if image.endswith("/identity:v1"):
        return None if answer == body else "identity's answer is not the request"
    items = (yaml.safe_load(answer) or {}).get("items") or []
    names = [item["metadata"]["name"] for item in items]
    if names != [f"{tag}-a", f"{tag}-b"]:
        return f"items {names} in the answer to {tag}"
    labels = [(item["metadata"].get("labels") or {}).get(LABEL_KEY) for item in items]
    return None if labels == [tag, tag] else f"labels {labels} in the answer to {tag}"


@dataclass
class Call:
    image: str
    started: float  # time.time(), to find the profile's span across processes
    seconds: float
    problem: str | None


def client_calls(address: str, client: int, calls: int, images: tuple[str, ...], start_at: float,
                 source: str | None) -> list[tuple[str, float, float, str | None]]:
    """One client: its own channel (its own connection), then `calls` calls, each checked after it is timed."""
    if source:
        sys.path.insert(0, source)
    import grpc
    from orchestrator.runtimes.remote import wire

    messages, services = wire.modules()
    channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    stub = services.FunctionEvaluatorStub(channel)
    grpc.channel_ready_future(channel).result(timeout=60)
    time.sleep(max(0.0, start_at - time.time()))
    done: list[tuple[str, float, float, str | None]] = []  # Call's fields: plain tuples cross processes
    for number in range(calls):
        image = images[(client + number) % len(images)]
        tag = f"c{client}-n{number}"
        body = call_body(tag)
        started, before = time.time(), time.perf_counter()
        try:
            answer = stub.EvaluateFunction(messages.EvaluateFunctionRequest(resource_list=body, image=image), timeout=300)
        except grpc.RpcError as err:
            done.append((image, started, time.perf_counter() - before, f"{err.code().name}: {err.details()}"))
            continue
        seconds = time.perf_counter() - before
        done.append((image, started, seconds, wrong_answer(bytes(answer.resource_list), body, tag, image)))
    channel.close()
    return done


def _client_star(args: tuple[Any, ...]) -> list[tuple[str, float, float, str | None]]:
    return client_calls(*args)


def load(address: str, clients: int, calls: int, threads: bool) -> tuple[list[Call], float]:
    """Every client's calls, and the profile's span (first call's start to last call's end)."""
    source = str(bench_run.SOURCE) if bench_run.SOURCE else None
    start_at = time.time() + (2.0 if threads else 5.0)  # processes import grpc and read the .proto first
    jobs = [(address, client, calls, LOAD_IMAGES, start_at, source) for client in range(clients)]
    if threads:
        results: list[list[tuple[str, float, float, str | None]]] = [[] for _ in jobs]

        def run(index: int) -> None:
            results[index] = client_calls(*jobs[index])

        workers = [threading.Thread(target=run, args=(index,)) for index in range(len(jobs))]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    else:
        with multiprocessing.get_context("spawn").Pool(clients) as pool:
            results = pool.map(_client_star, jobs)
    every = [Call(*call) for result in results for call in result]
    if len(every) != clients * calls:
        raise BenchError(f"{len(every)} calls answered of {clients * calls}")
    span = max(c.started + c.seconds for c in every) - min(c.started for c in every)
    return every, span


def percentiles(seconds: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return cuts[49], cuts[89], cuts[98]


def load_table(every: list[Call], span: float, clients: int, calls: int, threads: bool) -> None:
    kind = "threads" if threads else "processes"
    print(f"\nload profile: {clients} clients ({kind}) x {calls} calls, EvaluateFunction straight to the server, {span:.2f} s")
    print(f"{'image':<28} {'calls':>6} {'calls/s':>8} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for image in (*LOAD_IMAGES, "all"):
        chosen = [c.seconds for c in every if image in ("all", c.image)]
        p50, p90, p99 = percentiles(chosen)
        print(f"{image:<28} {len(chosen):6d} {len(chosen) / span:8.1f} {p50 * 1000:8.0f} {p90 * 1000:8.0f} {p99 * 1000:8.0f} "
              f"{max(chosen) * 1000:8.0f}")


# ------------------------------------------------------------------------------------- the bench


def check_setup() -> None:
    if shutil.which("kpt") is None:
        raise BenchError("kpt is not on PATH")
    try:
        import grpc  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as err:
        raise BenchError(f"{err.name} is not installed (pip install 'fnrun[serve]')") from None
    for image in (IMAGE, *LOAD_IMAGES):
        bench_run.check_setup(image)


def bench(tmp: Path, args: argparse.Namespace) -> int:
    small, work = tmp / "small", tmp / "work"
    work.mkdir()
    generate(small, 1, 4)
    server = Served(tmp, args.parallel)
    failed: BaseException | None = None
    try:
        return side_by_side(small, work, server, args)
    except BaseException as err:
        failed = err
        raise
    finally:
        code, seconds = server.stop()
        left = leftovers(server.proc.pid)
        remove(left)
        print(f"\nserver stopped by SIGTERM: exit {code} in {seconds:.2f} s; its containers left: {len(left)}")
        if failed is None and (code != 0 or left):
            raise BenchError(f"the server exited {code} and left {left}:\n{server.tail()}")


def side_by_side(small: Path, work: Path, server: Served, args: argparse.Namespace) -> int:
    warm = Series("warm-up")
    server_step(small, work, args.image, server.address)(warm)  # the first call starts the warm container
    print(f"warm-up call through the server: {warm.times[0]:.3f}s", file=sys.stderr)
    through, kpt, plain = Series("fnrun --server 4"), Series("kpt 4"), Series("fnrun 4")
    client, interpreter = Series("grpc client process"), Series("python -c pass")
    stdin_file = work.parent / "small.resourcelist.yaml"
    stdin_file.write_bytes(bench_run.resource_list(small))
    print(f"4 resources, {args.runs} rounds (fnrun: {' '.join(fnrun_command())})", file=sys.stderr)
    measure(args.runs, [(through, server_step(small, work, args.image, server.address)),
                        (kpt, kpt_only_times(small, work, args.image)),
                        (plain, plain_step(small, work, args.image)),
                        (client, command_step([sys.executable, "-c", BARE_CLIENT, server.address, str(stdin_file), args.image], work)),
                        (interpreter, command_step([sys.executable, "-c", "pass"], work))])
    every: list[Call] = []
    span = 0.0
    if args.calls:
        for image in LOAD_IMAGES:  # each image's first container, not part of the profile
            body = call_body("warm")
            problem = wrong_answer(server.call(body, image), body, "warm", image)
            if problem:
                raise BenchError(f"{image}: {problem}")
        warmed, _ = load(server.address, args.clients, 2, args.threads)  # the server starts up to --parallel containers an image
        if any(c.problem for c in warmed):
            raise BenchError(f"warm-up: {next(c.problem for c in warmed if c.problem)}")
        print(f"load: {args.clients} clients x {args.calls} calls", file=sys.stderr)
        every, span = load(server.address, args.clients, args.calls, args.threads)
    print()
    print(f"{'4 resources (wall seconds)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3}")
    for label, series in [("fnrun run --server (process, end to end)", through), ("kpt fn eval", kpt),
                          ("fnrun run, no server (process, end to end)", plain),
                          ("bare gRPC client: new python, grpc, .proto, one call", client),
                          ("python -c pass (this interpreter's start and exit)", interpreter),
                          ("the call through the server, as fnrun reports it", Series("inner", through.inner))]:
        if series.times:
            print(row(label, series)[:-8])  # no RSS: wait4's peak of a forked child counts this bench's own pages
    print("(fnrun and the server both with --no-cache: every round reaches a container; the server was\n"
          f" warmed by one call first, {warm.times[0]:.3f} s)")
    if every:
        load_table(every, span, args.clients, args.calls, args.threads)
        wrong = [c.problem for c in every if c.problem]
        if wrong:
            raise BenchError(f"{len(wrong)} of {len(every)} calls answered wrong, first: {wrong[0]}")
        print(f"every one of the {len(every)} answers held its own items")
    ratio = through.median / kpt.median
    print()
    print(f"{'PASS' if ratio <= SERVER_TARGET else 'FAIL'}: 4 resources, fnrun --server / kpt: {ratio:.2f}x "
          f"(target <= {SERVER_TARGET:.2f}x); without the server {plain.median / kpt.median:.2f}x")
    return 0 if ratio <= SERVER_TARGET else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds side by side (default 7)")
    parser.add_argument("--clients", type=int, default=8, help="load profile: clients at once (default 8)")
    parser.add_argument("--calls", type=int, default=50, help="load profile: calls per client (default 50; 0: no profile)")
    parser.add_argument("--threads", action="store_true", help="load profile: clients as threads of this process, not processes")
    parser.add_argument("--parallel", type=int, help="the server's --parallel (its default: 4 containers per image)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--source", type=Path, help="run fnrun from this source tree (PYTHONPATH), not the installed one")
    args = parser.parse_args(argv)
    if args.source is not None:
        bench_run.SOURCE = args.source.resolve()
        sys.path.insert(0, str(bench_run.SOURCE))
    try:
        check_setup()
        with tempfile.TemporaryDirectory(prefix="fnrun-serve-") as tmp:  # under /tmp: a unix socket path must stay short
            return bench(Path(tmp), args)
    except BenchError as err:
        print(f"bench_serve: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
