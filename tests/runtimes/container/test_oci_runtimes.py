"""--runtime / FNRUN_RUNTIME: function containers under another OCI runtime registered with the engine.

The tests start their own dockerd with runc, crun and gVisor's runsc registered (never the
machine's engine or its daemon.json) and run the sandbox probe under each.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from testing.engine_fixtures import copy_images, dockerd_service
from testing.pipeline_helpers import assert_one_line_error, fnrun, function_config, load, snapshot, write_package

# runsc's own network stack refuses a container without one in the root namespace: functions
# run with network none, so runsc is registered with --network=none (as README says).
RUNTIMES = {"crun": {"path": "/usr/bin/crun"}, "runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}}


@pytest.fixture(scope="module")
def engine(probe_image: str) -> Iterator[str]:
    root = Path(tempfile.mkdtemp(prefix="fnrun-dockerd-"))
    try:
        for host in dockerd_service(root, {k: v for k, v in RUNTIMES.items() if Path(v["path"]).exists()}):
            copy_images(docker.DockerClient(base_url=host, timeout=300), [probe_image])
            yield host
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_probe(root: Path, host: str, args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> dict[str, str]:
    write_package(root, {"p/fn.yaml": function_config("fnrun-test/probe:v1"), "p/notes.txt": "x\n"})
    result = fnrun("run", str(root), *args, env={"DOCKER_HOST": host, **(env or {})})
    if "cgroups in hybrid mode not supported" in result.stderr:
        pytest.skip(f"this host's cgroup layout stops the runtime: {result.stderr.strip()}")
    assert result.code == 0, result
    return load(root / "p/sandbox-probe_configmap.yaml")["data"]


@pytest.mark.parametrize("runtime", ["runc", "crun", "runsc"])
def test_the_sandbox_probe_runs_under_each_runtime(tmp_path: Path, engine: str, runtime: str) -> None:
    if runtime != "runc" and not Path(RUNTIMES[runtime]["path"]).exists():
        pytest.skip(f"{runtime} is not installed (.ci/setup installs it)")
    probe = run_probe(tmp_path, engine, ("--runtime", runtime))
    assert probe["uid"] == "65534" and int(probe["capEff"], 16) == 0
    assert probe["interfaces"] == "lo"
    assert probe["rootWritable"] == "false" and probe["localWritable"] == "false" and probe["tmpWritable"] == "true"
    assert probe["localListing"] == "fn.yaml,notes.txt"
    assert probe["nofile"] == "1024:1024"
    if runtime == "runsc":  # gVisor's kernel answers: no host seccomp filter inside, its own /proc
        assert probe["seccomp"] == "0"
    else:
        assert probe["noNewPrivs"] == "1" and probe["seccomp"] == "2"


def test_the_environment_variable_chooses_the_runtime(tmp_path: Path, engine: str) -> None:
    if not Path(RUNTIMES["runsc"]["path"]).exists():
        pytest.skip("runsc is not installed (.ci/setup installs it)")
    probe = run_probe(tmp_path, engine, env={"FNRUN_RUNTIME": "runsc"})
    assert probe["seccomp"] == "0"  # gVisor, where runc shows the host's seccomp filter (2)


def test_an_unregistered_runtime_is_one_line_naming_it(tmp_path: Path, engine: str) -> None:
    write_package(tmp_path, {"p/fn.yaml": function_config("fnrun-test/probe:v1")})
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--runtime", "kata", env={"DOCKER_HOST": engine})
    assert_one_line_error(result, "'kata'", "runc", "--runtime", code=4)  # the engine lacks it: the environment
    assert snapshot(tmp_path) == before


def test_doctor_lists_the_runtimes_this_engine_offers(engine: str) -> None:
    result = fnrun("doctor", "--runtime", "runsc", env={"DOCKER_HOST": engine})
    runtimes = [line for line in result.stdout.splitlines() if line.split()[1:2] == ["runtimes"]]
    assert runtimes[0].startswith("ok") and "crun" in runtimes[0] and "runsc" in runtimes[0] and "(default: runc)" in runtimes[0]
    assert f"at {engine} (local)" in result.stdout


@pytest.mark.parametrize("runtime", ["runc", "crun", "runsc"])
def test_a_warm_call_under_each_runtime_sees_what_a_fresh_container_sees(tmp_path: Path, engine: str, runtime: str) -> None:
    """Two probes of one image: the second runs where the first left traces, as under runc."""
    if runtime != "runc" and not Path(RUNTIMES[runtime]["path"]).exists():
        pytest.skip(f"{runtime} is not installed (.ci/setup installs it)")
    # a and b leave traces in the run's warm containers (one holds the next call ahead), c runs after them
    leave = function_config("fnrun-test/probe:v1", {"leave": "true"})
    files = {"a/fn.yaml": leave, "b/fn.yaml": leave, "c/fn.yaml": function_config("fnrun-test/probe:v1")}
    seen = {}
    for mode in ("1", "0"):
        root = write_package(tmp_path / f"warm-{mode}", files)
        result = fnrun("run", str(root), "--runtime", runtime, env={"DOCKER_HOST": engine, "FNRUN_WARM": mode})
        if "cgroups in hybrid mode not supported" in result.stderr:
            pytest.skip(f"this host's cgroup layout stops the runtime: {result.stderr.strip()}")
        assert result.code == 0, result
        seen[mode] = load(root / "c/sandbox-probe_configmap.yaml")["data"]
    assert seen["1"] == seen["0"]
    assert seen["1"]["tmpListing"] == "" and seen["1"]["strays"] == "0" and seen["1"]["localListing"] == "fn.yaml"
