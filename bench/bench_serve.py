"""`fnrun run --server` against `kpt fn eval` in one run, and a load profile of `fnrun serve`.

1. One identity function over a 4-resource package, interleaved, medians of fresh runs:
   `fnrun run DIR --image IMAGE --server unix:SOCK`, as users type it, against `kpt fn eval DIR
   --image IMAGE`, with plain `fnrun run` (no server) for reference. Three servers, started by
   this bench and warmed with one call each: one as `fnrun serve` starts (its result cache on),
   one with --no-cache, and one with --no-cache whose `.frames` socket the bench removed (the
   client speaks gRPC, as to any other function runner; to the others it speaks fnrun's framing,
   no grpcio). The headline is the edit loop: the first server, each run's package edited first
   (a new value), so every call misses the cache and reaches the warm container. Also: the same
   input to it (a cache hit), and to the --no-cache servers. The server's log says, per call,
   whether its cache answered; the bench checks it answered as planned. Beside them, the library's
   entry point called directly by `python -c`, and bare clients of each transport. Target: the
   edit loop <= 0.35x kpt's median. Each run gets a fresh copy of the package and must leave it
   byte-identical (the image echoes stdin).
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
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_run
from bench_run import BenchError, Series, fnrun_command, fresh_copy, measure, row, same_tree, timed
from gen_package import generate

IMAGE = "fnrun-test/identity:v1"
LOAD_IMAGES = ("fnrun-test/identity:v1", "fnrun-test/label:v1")
SERVER_TARGET = 0.35  # fnrun run --server / kpt fn eval, 4 resources (bench/README.md, bench_serve.py)
LABEL_KEY = "bench-call"


# ------------------------------------------------------------------------------------ the server


class Served:
    """A `fnrun serve` on a unix socket of its own, and a channel to it; `cache`: its result cache
    on, as `fnrun serve` starts (in a directory of its own), else --no-cache; `grpc_only`: its
    framed socket removed, so fnrun's client speaks gRPC to it."""

    def __init__(self, tmp: Path, parallel: int | None, name: str = "serve", grpc_only: bool = False, cache: bool = False) -> None:
        import grpc

        from orchestrator.runtimes.remote import frames, wire

        self.address = f"unix:{tmp / (name + '.sock')}"
        self.log = tmp / f"{name}.log"
        extra = ["--parallel", str(parallel)] if parallel else []
        command = [*fnrun_command(), "serve", "--address", self.address, *([] if cache else ["--no-cache"]), "--image-pull-policy", "never", *extra]
        env = {**bench_run.child_env(), "FNRUN_CACHE_DIR": str(tmp / f"{name}-cache")}  # never the user's own cache
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.channel = grpc.insecure_channel(self.address)
        self.messages, services = wire.modules()
        self.stub = services.FunctionEvaluatorStub(self.channel)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            self.stop()
            raise BenchError(f"fnrun serve did not listen within 60 s:\n{self.tail()}") from None
        framed = str(tmp / (name + ".sock")) + frames.SUFFIX
        if grpc_only:
            Path(framed).unlink()
        elif not Path(framed).exists():
            self.stop()
            raise BenchError(f"fnrun serve made no framed socket at {framed}:\n{self.tail()}")

    def call(self, body: bytes, image: str) -> bytes:
        answer = self.stub.EvaluateFunction(self.messages.EvaluateFunctionRequest(resource_list=body, image=image), timeout=300)
        return bytes(answer.resource_list)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def calls_since(self, offset: int) -> tuple[list[str], int]:
        """The server's call lines logged since `offset` (one per call, `(cached)` on a result-cache
        hit; logged before the answer is sent), and the log's end."""
        with open(self.log, "rb") as log:
            log.seek(offset)
            new = log.read()
        return [line for line in new.decode(errors="replace").splitlines() if line.startswith("fnrun serve: ")], offset + len(new)

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


def remove_leftovers(pid: int) -> list[str]:
    """Remove the containers the server `pid` made that still exist (it labels each with its pid); their ids."""
    import docker

    from orchestrator.runtimes.container.settings import LABEL_PID

    client = docker.from_env().api
    left = [c["Id"][:12] for c in client.containers(all=True, filters={"label": f"{LABEL_PID}={pid}"})]
    for ident in left:
        client.remove_container(ident, force=True)
    return left


# ------------------------------------------------------------------------- 1: side by side with kpt


class Edits:
    """An edit loop's change between runs: each run's copy of the package gets a new value (its
    first Deployment's `replicas:`), so no run's input is one the server's result cache has seen."""

    def __init__(self) -> None:
        self.count = 0

    def apply(self, package: Path) -> None:
        self.count += 1
        first = sorted(package.rglob("*.yaml"))[0]
        text = first.read_text()
        start = text.index("\n  replicas: ") + 1
        end = text.index("\n", start)
        first.write_text(f"{text[:start]}  replicas: {100 + self.count}{text[end:]}")


@dataclass
class Answers:
    """How the server answered a series' runs: calls, and how many from its result cache."""

    calls: int = 0
    cached: int = 0


def server_step(template: Path, work: Path, image: str, served: Served, answers: Answers, edits: Edits | None = None) -> Callable[[Series], None]:
    """One `fnrun run DIR --image IMAGE --server ADDR`, as a user types it, over a fresh copy (edited
    first, with `edits`); the copy must come back byte-identical, and the server's log says whether
    it called the function or answered from its result cache."""

    def step(series: Series) -> None:
        package = fresh_copy(template, work)
        expected = template
        if edits is not None:
            edits.apply(package)
            expected = work / "expected"
            if expected.exists():
                shutil.rmtree(expected)
            shutil.copytree(package, expected, symlinks=True)
        offset = served.log.stat().st_size
        done = timed([*fnrun_command(), "run", str(package), "--image", image, "--server", served.address], work)
        difference = same_tree(expected, package)
        if difference:
            raise BenchError(f"fnrun --server changed the package for an identity function: {difference}")
        lines, _ = served.calls_since(offset)
        if len(lines) != 1:
            raise BenchError(f"the server logged {len(lines)} calls for one run: {lines}")
        answers.calls += 1
        answers.cached += "(cached)" in lines[0]
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


# The least a stdlib-only client of the framed socket does: a new interpreter, fnrun's framing, one
# call. frames.py is loaded by its path alone: importing it as orchestrator.runtimes.remote.frames
# would run the packages' __init__ modules (the runtimes' registry) first.
BARE_FRAMED = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('frames', sys.argv[4])\n"
    "frames = sys.modules['frames'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(frames)\n"
    "body = open(sys.argv[2], 'rb').read()\n"
    "answer = frames.call(frames.connect(sys.argv[1][len('unix:'):] + frames.SUFFIX), sys.argv[3], body, 1 << 30, 300)\n"
    "sys.exit(0 if answer.resource_list == body else 3)"
)

# `fnrun run DIR --image IMAGE --server ADDR --no-cache` by the library's entry point, as a launcher
# that skips the CLI framework would call it; leaving by os._exit as fnrun does.
LIBRARY = (
    "import os, sys\nfrom orchestrator import api\nfrom orchestrator.requests import Functions, RunRequest, Speed\n"
    "api.run(RunRequest(directory=sys.argv[1], functions=Functions(image=sys.argv[2]), speed=Speed(server=sys.argv[3], cache=False)))\n"
    "sys.stdout.flush(); sys.stderr.flush(); os._exit(0)"
)


def library_step(template: Path, work: Path, image: str, address: str) -> Callable[[Series], None]:
    """One library-entry run over a fresh copy; the copy must come back byte-identical."""

    def step(series: Series) -> None:
        package = fresh_copy(template, work)
        done = timed([sys.executable, "-c", LIBRARY, str(package), image, address], work)
        if same_tree(template, package):
            raise BenchError("the library-entry run changed the package for an identity function")
        series.times.append(done.seconds)

    return step


def timing(run: Callable[[], float]) -> Callable[[Series], None]:
    """A step recording what `run` returns: the seconds of one checked run (kpt, plain fnrun, a reference)."""
    return lambda series: series.times.append(run())


# Where one `fnrun run --server`'s time goes: the real command as orchestrator.__main__ starts it,
# its stages stamped from inside (imports made explicit in fnrun's own order, then api.run, the
# runtime's call and its wire.modules wrapped); the stamps go to the bench through a pipe, since
# fnrun leaves by os._exit.
STAMPED = """import json, os, sys, time
s = {"start": time.time()}
from orchestrator import methodcode, stops; found = stops.start_command(); kept = methodcode.install(); s["kept"] = time.time()
import orchestrator.launch; s["launch"] = time.time()
import orchestrator.api, orchestrator.run.pipeline; s["api"] = time.time()
from orchestrator.runtimes import remote; from orchestrator.runtimes.remote import wire
def wrap(owner, name, before, after, first=None):
    real = getattr(owner, name)
    def stamped(*a, **k):
        s[before] = time.time()
        if first: __import__(first); s[first] = time.time()
        out = real(*a, **k); s[after] = time.time(); return out
    setattr(owner, name, stamped)
wrap(orchestrator.api, "run", "api in", "api out")
wrap(remote.RemoteRuntime, "run", "call in", "call out")
wrap(wire, "modules", "modules in", "modules out", first="grpc")
leave = os._exit
def stamp_exit(code):
    s["exit"] = time.time(); os.write(int(os.environ["STAMP_FD"]), json.dumps(s).encode()); leave(code)
os._exit = stamp_exit
orchestrator.launch.main(sys.argv[1:], handlers=found, kept=kept)
"""
STAGES = (  # (label, from stamp, to stamp); "spawn" and "reaped" are the bench's
    ("interpreter start (spawn to the first line)", "spawn", "start"),
    ("stops noted, the kept dataclass code read (methodcode)", "start", "kept"),
    ("import orchestrator.launch (the launcher)", "kept", "launch"),
    ("import orchestrator.api, run.pipeline (the library)", "launch", "api"),
    ("the launcher reads the command line, builds the request", "api", "api in"),
    ("api.run up to the call: read the package, plan", "api in", "call in"),
    ("import grpc (grpc.aio, asyncio with it)", "modules in", "grpc"),
    ("wire.modules(): grpc_tools compiles the .proto", "grpc", "modules out"),
    ("the call over gRPC: channel, connect, EvaluateFunction", "modules out", "call out"),
    ("the call, whole (framed: connect, frames, the answer)", "call in", "call out"),
    ("after the call: merge, check, summary", "call out", "exit"),
    ("exit (os._exit to reaped)", "exit", "reaped"),
)


def stages(template: Path, work: Path, image: str, address: str, rounds: int) -> list[Series]:
    """Each stage of `rounds` stamped runs (fresh copies; the package must come back unchanged)."""
    import json
    import os

    series = [Series(label) for label, _, _ in STAGES] + [Series("total")]
    for _ in range(rounds):
        package = fresh_copy(template, work)
        read_end, write_end = os.pipe()
        command = [sys.executable, "-c", STAMPED, "run", str(package), "--image", image, "--server", address, "--no-cache"]
        spawn = time.time()
        process = subprocess.Popen(command, cwd=work, env={**bench_run.child_env(), "STAMP_FD": str(write_end)}, pass_fds=(write_end,),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as stamps_pipe:
            stamps = stamps_pipe.read()
        code = process.wait()
        stamp = {"spawn": spawn, "reaped": time.time(), **(json.loads(stamps) if stamps else {})}
        if code != 0 or "exit" not in stamp or same_tree(template, package):
            raise BenchError(f"a stamped fnrun run --server exited {code} or changed the package")
        for one, (_, start, end) in zip(series, STAGES):
            if start in stamp and end in stamp:  # the framed client has no grpc stages
                one.times.append(stamp[end] - stamp[start])
        series[-1].times.append(stamp["reaped"] - spawn)
    return series


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


Answered = tuple[str, float, float, str | None]  # a Call's fields: plain tuples cross processes


@dataclass
class Call:
    image: str
    started: float  # time.time(), to find the profile's span across processes
    seconds: float
    problem: str | None


def client_calls(address: str, client: int, calls: int, images: tuple[str, ...], start_at: float,
                 source: str | None) -> list[Answered]:
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
    done: list[Answered] = []
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


def _client_star(args: tuple[Any, ...]) -> list[Answered]:
    return client_calls(*args)


def load(address: str, clients: int, calls: int, threads: bool) -> tuple[list[Call], float]:
    """Every client's calls, and the profile's span (first call's start to last call's end)."""
    source = str(bench_run.SOURCE) if bench_run.SOURCE else None
    start_at = time.time() + (2.0 if threads else 5.0)  # processes import grpc and read the .proto first
    jobs = [(address, client, calls, LOAD_IMAGES, start_at, source) for client in range(clients)]
    executor: Executor = (ThreadPoolExecutor(clients) if threads
                          else ProcessPoolExecutor(clients, mp_context=multiprocessing.get_context("spawn")))
    with executor:
        results = list(executor.map(_client_star, jobs))
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


def check_setup(image: str) -> None:
    if shutil.which("kpt") is None:
        raise BenchError("kpt is not on PATH")
    try:
        import grpc  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as err:
        raise BenchError(f"{err.name} is not installed (pip install 'fnrun[serve]')") from None
    for each in (image, *LOAD_IMAGES):
        bench_run.check_setup(each)


def bench(tmp: Path, args: argparse.Namespace) -> int:
    small, work = tmp / "small", tmp / "work"
    work.mkdir()
    generate(small, 1, 4)
    servers: list[Served] = []
    try:
        servers.append(Served(tmp, args.parallel, name="edit", cache=True))
        servers.append(Served(tmp, args.parallel))
        servers.append(Served(tmp, args.parallel, name="grpc", grpc_only=True))
        result = side_by_side(small, work, servers, args)
    finally:
        problems = []
        for each in servers:
            code, seconds = each.stop()
            left = remove_leftovers(each.proc.pid)
            print(f"\nserver {each.address} stopped by SIGTERM: exit {code} in {seconds:.2f} s; its containers left: {len(left)}")
            if code != 0 or left:
                problems.append(f"the server at {each.address} exited {code} and left {left}:\n{each.tail()}")
    if problems:
        raise BenchError("\n".join(problems))
    return result


def load_profile(server: Served, args: argparse.Namespace) -> tuple[list[Call], float]:
    """The measured calls, after each image's first container and a burst of two calls a client
    (the server starts up to --parallel containers an image; those starts are not the profile)."""
    for image in LOAD_IMAGES:
        body = call_body("warm")
        problem = wrong_answer(server.call(body, image), body, "warm", image)
        if problem:
            raise BenchError(f"{image}: {problem}")
    warmed, _ = load(server.address, args.clients, 2, args.threads)
    if any(c.problem for c in warmed):
        raise BenchError(f"warm-up: {next(c.problem for c in warmed if c.problem)}")
    print(f"load: {args.clients} clients x {args.calls} calls", file=sys.stderr)
    return load(server.address, args.clients, args.calls, args.threads)


def side_by_side(small: Path, work: Path, servers: list[Served], args: argparse.Namespace) -> int:
    """`servers`: one with its result cache (the edit loop's, and the cache hit), one with
    --no-cache, one with --no-cache spoken to over gRPC."""
    cached_server, server, grpc_server = servers
    warm = Series("warm-up")
    for each in servers:  # each server's first call starts its warm container (and fills the cache for the hit row)
        server_step(small, work, args.image, each, Answers())(warm)
    print(f"warm-up calls through the servers: {', '.join(f'{t:.3f}s' for t in warm.times)}", file=sys.stderr)
    edit_loop, hit, through = Series("fnrun --server edit loop 4"), Series("fnrun --server cache hit 4"), Series("fnrun --server 4")
    over_grpc, library = Series("fnrun --server gRPC 4"), Series("library entry 4")
    kpt, plain = Series("kpt 4"), Series("fnrun 4")
    client, framed, interpreter = Series("grpc client process"), Series("framed client process"), Series("python -c pass")
    answers = {name: Answers() for name in ("edit", "hit", "no-cache", "grpc")}
    stdin_file = work.parent / "small.resourcelist.yaml"
    stdin_file.write_bytes(bench_run.resource_list(small))
    bare_client = [sys.executable, "-c", BARE_CLIENT, grpc_server.address, str(stdin_file), args.image]
    from orchestrator.runtimes.remote import frames

    bare_framed = [sys.executable, "-c", BARE_FRAMED, server.address, str(stdin_file), args.image, frames.__file__]
    print(f"4 resources, {args.runs} rounds (fnrun: {' '.join(fnrun_command())})", file=sys.stderr)
    measure(args.runs, [(edit_loop, server_step(small, work, args.image, cached_server, answers["edit"], Edits())),
                        (hit, server_step(small, work, args.image, cached_server, answers["hit"])),
                        (through, server_step(small, work, args.image, server, answers["no-cache"])),
                        (over_grpc, server_step(small, work, args.image, grpc_server, answers["grpc"])),
                        (library, library_step(small, work, args.image, server.address)),
                        (kpt, timing(lambda: bench_run.run_kpt(small, work, args.image)[0])),
                        (plain, timing(lambda: bench_run.run_fnrun(small, work, args.image)[0])),
                        (client, timing(lambda: timed(bare_client, work).seconds)),
                        (framed, timing(lambda: timed(bare_framed, work).seconds)),
                        (interpreter, timing(lambda: timed([sys.executable, "-c", "pass"], work).seconds))])
    misses = {name: each.calls - each.cached for name, each in answers.items()}
    if answers["edit"].cached or answers["no-cache"].cached or answers["grpc"].cached or misses["hit"]:
        raise BenchError(f"the servers' result caches answered other than planned: {answers}")
    split = stages(small, work, args.image, server.address, args.stages) if args.stages else []
    every, span = load_profile(server, args) if args.calls else ([], 0.0)
    print()
    print(f"{'4 resources (wall seconds)':<56} {'median':>8} {'min':>8} {'max':>8} {'n':>3}")
    for label, series in [("fnrun run --server unix:, edit loop (framed; cache miss)", edit_loop),
                          ("fnrun run --server unix:, same input (framed; cache hit)", hit),
                          ("fnrun run --server unix:, --no-cache server (framed)", through),
                          ("fnrun run --server unix:, --no-cache server (gRPC)", over_grpc),
                          ("library entry by python -c (framed, --no-cache server)", library),
                          ("kpt fn eval", kpt),
                          ("fnrun run, no server (process, end to end)", plain),
                          ("bare gRPC client: new python, grpc, .proto, one call", client),
                          ("bare framed client: new python, frames, one call", framed),
                          ("python -c pass (this interpreter's start and exit)", interpreter),
                          ("the call through the server, as fnrun reports it", Series("inner", edit_loop.inner))]:
        if series.times:
            print(row(label, series)[:-8])  # no RSS: wait4's peak of a forked child counts this bench's own pages
    print("(the server's log, per row: edit loop {e.calls} calls, {e.cached} from the result cache; same input {h.calls}, {h.cached};\n"
          " --no-cache servers {n.calls} and {g.calls}, none from a cache. Edit loop: the server as `fnrun serve` starts, its cache\n"
          " on, each run's package edited first (a new replicas value), so every call reaches the warm container, as in an\n"
          " edit loop; same input: the package as the warm-up left it, answered from the server's result cache. Each\n"
          f" server was warmed by one call first, {' and '.join(f'{t:.3f} s' for t in warm.times)})"
          .format(e=answers["edit"], h=answers["hit"], n=answers["no-cache"], g=answers["grpc"]))
    if split:
        print(f"\nwhere fnrun run --server's time goes, framed ({args.stages} stamped runs; medians of each stage apart, so they need not add up)")
        for one in split:
            if one.times:
                print(row(one.name, one)[:-8])
    if every:
        load_table(every, span, args.clients, args.calls, args.threads)
        wrong = [c.problem for c in every if c.problem]
        if wrong:
            raise BenchError(f"{len(wrong)} of {len(every)} calls answered wrong, first: {wrong[0]}")
        print(f"every one of the {len(every)} answers held its own items")
    ratio = edit_loop.median / kpt.median
    print()
    print(f"same input, a cache hit {hit.median / kpt.median:.2f}x; a --no-cache server {through.median / kpt.median:.2f}x, over gRPC "
          f"{over_grpc.median / kpt.median:.2f}x; the library entry (no CLI framework) {library.median / kpt.median:.2f}x; "
          f"without the server {plain.median / kpt.median:.2f}x")
    print(f"{'PASS' if ratio <= SERVER_TARGET else 'FAIL'}: 4 resources, fnrun --server in an edit loop (framed, cache miss) / kpt: {ratio:.2f}x "
          f"(target <= {SERVER_TARGET:.2f}x)")
    return 0 if ratio <= SERVER_TARGET else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="rounds side by side (default 7)")
    parser.add_argument("--clients", type=int, default=8, help="load profile: clients at once (default 8)")
    parser.add_argument("--calls", type=int, default=50, help="load profile: calls per client (default 50; 0: no profile)")
    parser.add_argument("--threads", action="store_true", help="load profile: clients as threads of this process, not processes")
    parser.add_argument("--stages", type=int, default=7, help="stamped runs splitting fnrun run --server's time (default 7; 0: none)")
    parser.add_argument("--parallel", type=int, help="the server's --parallel (its default: 4 containers per image)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--source", type=Path, help="run fnrun from this source tree (PYTHONPATH), not the installed one")
    args = parser.parse_args(argv)
    if args.source is not None:
        bench_run.SOURCE = args.source.resolve()
        sys.path.insert(0, str(bench_run.SOURCE))
    try:
        check_setup(args.image)
        with tempfile.TemporaryDirectory(prefix="fnrun-serve-") as tmp:  # under /tmp: a unix socket path must stay short
            return bench(Path(tmp), args)
    except BenchError as err:
        print(f"bench_serve: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
