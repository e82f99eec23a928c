"""What a warm call costs against the least the engine's exec can do to run a function process in
a running container: a bare `docker exec` of the image's own entrypoint through the docker SDK.

`bare_exec` creates the exec with stdin attached, sends the ResourceList, half-closes, reads the
output to EOF and asks for the exit code: nothing else. `warm_call` is one call through fnrun's
warm runtime (orchestrator.runtimes.container.warm): /local, the helper's clean-up, the call over
the container's attach stream (forked by the image's Python fork server where it has one), the
bounded pumps. Both run in the same warm container, interleaved. bench_render.py uses the bare
exec for its exec floor: one container start plus the calls as bare execs, nothing run at once.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from orchestrator.runtimes.container.runtime import ContainerRuntime, api_client
from orchestrator.runtimes.container.warm.plan import plan
from orchestrator.runtimes.container.warm.pool import WarmPool
from orchestrator.runtimes.container.warm.runtime import WarmRuntime
from orchestrator.runtimes.protocol import Invocation, Sandbox


def bare_exec(api, container_id: str, argv: tuple[str, ...], stdin: bytes) -> float:  # api: docker's APIClient
    started = time.perf_counter()
    exec_id = api.exec_create(container_id, list(argv), stdin=True, stdout=True, stderr=True)["Id"]
    sock = api.exec_start(exec_id, socket=True)
    raw = getattr(sock, "_sock", sock)
    raw.sendall(stdin)
    raw.shutdown(1)
    while raw.recv(65536):
        pass
    while api.exec_inspect(exec_id)["Running"]:
        time.sleep(0.001)
    sock.close()
    return time.perf_counter() - started


def per_call(image: str, stdin: bytes, local_dir: Path, calls: int = 10) -> tuple[float, float]:
    """Medians of (a warm call, a bare exec of the same entrypoint) in one warm container, seconds."""
    call = Invocation(name=image, image=image, local_dir=local_dir, sandbox=Sandbox(image_pull_policy="never"))
    found = plan(call)
    if isinstance(found, str):
        raise RuntimeError(f"no warm container for {image}: {found}")
    pool = WarmPool()
    runtime = WarmRuntime(pool, ContainerRuntime())
    warm_times, bare_times = [], []
    try:
        runtime.run(call, stdin)  # starts the container
        api = api_client()
        for _ in range(calls):
            started = time.perf_counter()
            answered = runtime.run(call, stdin)
            warm_times.append(time.perf_counter() - started)
            if answered.exit_code != 0 or not answered.stdout:
                raise RuntimeError(f"a warm call of {image} failed (exit code {answered.exit_code}): {answered.stderr[-500:]}")
            held = pool.acquire(found)
            assert held is not None
            try:
                bare_times.append(bare_exec(api, held.container_id, found.argv, stdin))
            finally:
                pool.release(held)
    finally:
        pool.close()
    return statistics.median(warm_times), statistics.median(bare_times)
