"""`fnrun run`/`fnrun render` with `--server` carried out by the launcher without the CLI framework
(orchestrator.direct): the same stdout, stderr, exit code and package as the CLI's path
for the same command line, and typer, click, rich and orchestrator.cli never imported; what it cannot
read as the CLI would (--help, a value the CLI refuses) is the CLI's, as before. And the edit loop's
client loads only what it uses: import sets, never timings (bench/bench_serve.py times it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.launching import said
from testing.pipeline_helpers import REPO, deployment, snapshot, test_images, write_package  # noqa: F401 - fixture
from testing.serving import Server

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock", "FNRUN_DEBUG_LAUNCH": "1"}
LABEL = "fnrun-test/label:v1"
FRAMEWORK = ("typer", "click", "rich", "orchestrator.cli")
# What the edit loop's client (run --server over the framing) never loads: the CLI framework,
# grpcio and protobuf, the docker SDK and the engine's client, difflib (a diff's), the lock's checks
# (a package with a fnrun.lock's).
NEVER = (*FRAMEWORK, "grpc", "google.protobuf", "docker", "difflib", "orchestrator.lock.pinning", "orchestrator.runtimes.container.imagestore",
         "orchestrator.runtimes.container.runtime", "orchestrator.yamlio.linematch")
# fnrun's own entry (orchestrator.__main__) with the launcher's path without typer turned off, or
# not: either way, which of the watched modules it loaded, and how many dataclass methods it
# compiled rather than took from fnrun's kept code (orchestrator.methodcode), printed last on stderr.
PROBE = """
import dataclasses, os, sys
from orchestrator import __main__ as entry, launch
if sys.argv[1] == "cli":
    from orchestrator import direct
    direct.carried_out = lambda args, environ, early: None
watched = sys.argv[2].split(",")
def leave(code):
    loaded = sorted(n for n in watched if n in sys.modules or any(m.startswith(n + ".") for m in sys.modules))
    kept = getattr(dataclasses, "exec", None)
    sys.stdout.flush()
    print("probe: loaded", ",".join(loaded) or "-", "compiled", len(kept.new) if hasattr(kept, "new") else "-", file=sys.stderr, flush=True)
    os._exit(code)
launch._leave = leave
sys.argv = ["fnrun", *sys.argv[3:]]
entry.main()
"""


@pytest.fixture(scope="module")
def server(test_images: None) -> Iterator[Server]:  # noqa: F811 - the fixture
    """One server for the module (pytest ends it after the last test, whatever their outcome)."""
    running = Server("--no-cache")
    yield running
    assert running.stop()[0] == 0


def probe(way: str, args: list[str], cwd: Path, watched: tuple[str, ...] = FRAMEWORK, bytecode: Path | None = None) -> tuple[int, str, list[str], str, str]:
    """`fnrun ARGS` by `way` (served: as users run it; cli: the launcher's path without typer off):
    exit code, stdout, fnrun's own stderr lines, which of `watched` it imported, and how many
    dataclass methods it compiled. `bytecode`: written there, as an installed fnrun writes it."""
    env = {**os.environ, **NO_ENGINE, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    proc = subprocess.run([sys.executable, "-c", PROBE, way, ",".join(watched), *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=env)
    lines = said(proc.stderr)
    assert lines and lines[-1].startswith("probe: loaded "), proc.stderr
    loaded, _, compiled = lines[-1].removeprefix("probe: loaded ").split(" ")
    return proc.returncode, proc.stdout, lines[:-1], loaded, compiled


def both(tmp_path: Path, files: dict[str, str], args: list[str], in_package: bool = False) -> tuple[tuple, tuple, str]:
    """The command line run both ways, each over a fresh copy of the package: (code, stdout,
    stderr, files after) for each, and what the served way imported of the CLI framework."""
    results, loaded = [], ""
    for way in ("served", "cli"):
        root = write_package(tmp_path / way / "pkg", files)
        given = [str(root) if arg == "PKG" else arg for arg in args]
        code, stdout, lines, imported, _ = probe(way, given, root if in_package else REPO)
        if way == "served":
            loaded = imported
        stderr = [line.replace(str(root), "PKG") for line in lines]
        results.append((code, stdout.replace(str(root), "PKG"), stderr, {p: b for p, (b, _) in snapshot(root).items()}))
        shutil.rmtree(tmp_path / way)
    return results[0], results[1], loaded


PACKAGE = {"app.yaml": deployment("web", "the front end")}


def test_a_successful_run_is_the_same_without_the_cli_framework(server: Server, tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, ["run", "PKG", "--image", LABEL, "--server", server.address, "--diff", "--", "tier=web"])
    assert served == cli
    assert served[0] == 0 and "tier: web" in served[1] and "tier: web" in served[3]["app.yaml"].decode()
    assert loaded == "-"


def test_kpts_habit_of_no_directory_before_the_function_arguments(server: Server, tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, ["run", "-i", LABEL, f"--server={server.address}", "-q", "--", "tier=here"], in_package=True)
    assert served == cli and served[0] == 0 and "tier: here" in served[3]["app.yaml"].decode()
    assert loaded == "-"


def test_a_render_is_the_same_without_the_cli_framework(server: Server, tmp_path: Path) -> None:
    files = {
        "Kptfile": f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - image: {LABEL}\n    configMap:\n      tier: one\n",
        "app.yaml": deployment("web"),
    }
    served, cli, loaded = both(tmp_path, files, ["render", "PKG", "--server", server.address])
    assert served == cli and served[0] == 0 and "tier: one" in served[3]["app.yaml"].decode()
    assert loaded == "-"


def test_a_failing_function_is_the_same_without_the_cli_framework(server: Server, tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, ["run", "PKG", "--image", "fnrun-test/fail:v1", "--server", server.address])
    assert served == cli and served[0] == 1
    assert [line for line in served[2] if line.startswith("fnrun: error:")] and served[3] == {"app.yaml": PACKAGE["app.yaml"].encode()}
    assert loaded == "-"


def test_an_unreachable_server_is_the_same_without_the_cli_framework(tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, ["run", "PKG", "--image", LABEL, "--server", f"unix:{tmp_path / 'nobody.sock'}"])
    assert served == cli and served[0] == 4
    assert len([line for line in served[2] if line.startswith("fnrun: error:")]) == 1 and "Traceback" not in "".join(served[2])
    assert served[3] == {"app.yaml": PACKAGE["app.yaml"].encode()}
    assert loaded == "-"


def test_a_bad_value_the_library_refuses_is_the_same_without_the_cli_framework(tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, ["run", "PKG", "--image", LABEL, "--server", "unix:/nowhere", "--memory", "lots"])
    assert served == cli and served[0] == 2 and "--memory 'lots'" in served[2][-1]
    assert loaded == "-"


@pytest.mark.parametrize("args", [
    ["run", "PKG", "--image", LABEL, "--server", "unix:/nowhere", "--timeout", "soon"],  # the CLI's parser refuses it
    ["run", "PKG", "--image", LABEL, "--server", "unix:/nowhere", "--help"],
    ["render", "PKG", "extra", "--server", "unix:/nowhere"],
    ["run", "PKG", "--image", LABEL, "--server", "unix:/nowhere", "-qv"],  # short switches run together
])
def test_what_it_cannot_read_as_the_cli_would_is_the_clis(args: list[str], tmp_path: Path) -> None:
    served, cli, loaded = both(tmp_path, PACKAGE, args)
    assert served == cli
    assert "typer" in loaded.split(",") and "orchestrator.cli" in loaded.split(",")
    assert (served[0] == 0) == ("--help" in args)


def test_the_edit_loops_client_loads_only_what_it_uses(server: Server, tmp_path: Path) -> None:
    """And from its second run on, no dataclass method is compiled again."""
    for round_ in ("first", "second"):
        root = write_package(tmp_path / round_, PACKAGE)
        code, _, lines, loaded, compiled = probe("served", ["run", str(root), "--image", LABEL, "--server", server.address, "--", f"round={round_}"],
                                                 REPO, NEVER, tmp_path / "bytecode")
        assert code == 0, lines
        assert f"round: {round_}" in (root / "app.yaml").read_text()
        assert loaded == "-", f"the client path loaded {loaded}"
    assert compiled == "0", "the second run compiled dataclass methods the first kept"
