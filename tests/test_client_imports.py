"""What `fnrun run --server unix:PATH` loads as users run it: the edit loop's client is a short
process, so whatever it imports is its time. By import sets, never timings (bench/bench_serve.py
times it): the CLI framework, grpcio and protobuf, the docker SDK, the engine's client, difflib
(only a diff needs it) and the lock's checks (only a package with a fnrun.lock) stay out; the
package is written as ever; and from its second run on, the dataclasses' methods come from the
code fnrun kept (orchestrator.methodcode), none compiled again."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, deployment, test_images, write_package  # noqa: F401 - fixture
from testing.serving import Server

LABEL = "fnrun-test/label:v1"
# Modules (or their packages) the client path must not load.
NEVER = ("typer", "click", "rich", "grpc", "google.protobuf", "docker", "difflib", "orchestrator.cli",
         "orchestrator.lock.pinning", "orchestrator.runtimes.container.imagestore", "orchestrator.runtimes.container.runtime",
         "orchestrator.yamlio.linematch")
# fnrun's own entry (orchestrator.__main__), as the `fnrun` script runs it; at the exit, what it
# loaded of NEVER and how many dataclass methods it compiled (rather than took from kept code).
PROBE = """
import dataclasses, os, sys
from orchestrator import __main__ as entry, launch
never = sys.argv[1].split(",")
def leave(code):
    loaded = sorted(n for n in never if n in sys.modules or any(m.startswith(n + ".") for m in sys.modules))
    kept = getattr(dataclasses, "exec", None)
    compiled = len(kept.new) if kept is not None and hasattr(kept, "new") else "not installed"
    sys.stdout.flush()
    print("probe:", ",".join(loaded) or "-", compiled, file=sys.stderr, flush=True)
    os._exit(code)
launch._leave = leave
sys.argv = ["fnrun", *sys.argv[2:]]
entry.main()
"""


@pytest.fixture(scope="module")
def server(test_images: None) -> Iterator[Server]:  # noqa: F811 - the fixture
    running = Server("--no-cache")
    yield running
    assert running.stop()[0] == 0


def client(args: list[str], bytecode: Path) -> tuple[int, str, str, str]:
    """`fnrun ARGS` through PROBE, writing bytecode (and kept code) under `bytecode` as an installed
    fnrun does: exit code, stderr, what it loaded of NEVER, and how many methods it compiled."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(bytecode), DOCKER_HOST="unix:///nonexistent/docker.sock",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", PROBE, ",".join(NEVER), *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    last = proc.stderr.splitlines()[-1] if proc.stderr else ""
    assert last.startswith("probe: "), proc.stderr
    _, loaded, compiled = last.split(" ")
    return proc.returncode, proc.stderr, loaded, compiled


def test_the_edit_loops_client_loads_only_what_it_uses(server: Server, tmp_path: Path) -> None:
    bytecode = tmp_path / "bytecode"
    for round_ in ("first", "second"):
        root = write_package(tmp_path / round_, {"app.yaml": deployment("web")})
        code, stderr, loaded, compiled = client(["run", str(root), "--image", LABEL, "--server", server.address, "--", f"round={round_}"],
                                                bytecode)
        assert code == 0, stderr
        assert f"round: {round_}" in (root / "app.yaml").read_text()
        assert loaded == "-", f"the client path loaded {loaded}"
        if round_ == "second":
            assert compiled == "0", "the second run compiled dataclass methods the first kept"
