"""fnrun as a user gets it: `python -m build` makes the sdist and the wheel; the wheel, installed
alone into a fresh virtualenv (not editable, nothing from the checkout on the path), reports the
version pyproject.toml gives, runs a catalog function in-process, builds fnrun's own images with
`fnrun images build` from what it ships, and runs them as containers. The GitHub Action's steps
run as written against that install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import docker
import pytest
import yaml

from testing.elf import MACHINES, elf
from testing.pipeline_helpers import REPO

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
REPOSITORY = f"fnrun-wheeltest-{os.getpid()}"



@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build` (the sdist, then the wheel from it) over a copy of the tracked files, so
    the checkout gets no build/ or egg-info of its own."""
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "-o", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def fresh(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with only the wheel installed as fnrun. Its dependencies come from this
    test environment's site-packages through a path entry, which puts their directory on sys.path
    without running its .pth files, so the checkout's editable install never loads."""
    root = tmp_path_factory.mktemp("venv") / "fresh"
    venv.create(root, with_pip=True)
    purelib = Path(subprocess.run([str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "zz-fnrun-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next(dist.glob("fnrun-*.whl"))
    installed = subprocess.run([str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    return root


def _user_env(fresh: Path, **more: str) -> dict[str, str]:
    """A user's environment: none of the suite's switches (FNRUN_BUILTIN=0, FNRUN_CACHE=0), no path
    into the checkout, fnrun found on PATH in the fresh virtualenv."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV", "GITHUB_ACTIONS") and not key.startswith("FNRUN_")}
    return {**env, "PATH": f"{fresh / 'bin'}{os.pathsep}{env['PATH']}", **more}


def _fnrun(fresh: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(fresh / "bin" / "fnrun"), *args], cwd=cwd, env=_user_env(fresh, **env),
                          capture_output=True, text=True, timeout=900)


def test_the_sdist_and_the_wheel_hold_what_a_user_needs(dist: Path) -> None:
    wheel = zipfile.ZipFile(next(dist.glob("fnrun-*.whl"))).namelist()
    assert f"fnrun-{VERSION}.dist-info/licenses/LICENSE" in wheel
    assert "functions/nginx-template.sh" in wheel and "orchestrator/cli/imagebuild.py" in wheel
    assert f"fnrun-{VERSION}.data/data/share/fnrun/Dockerfiles/fnrun-base.Dockerfile" in wheel
    assert not any(name.startswith(("tests/", "docs/", "bench/")) for name in wheel)
    metadata = zipfile.ZipFile(next(dist.glob("fnrun-*.whl"))).read(f"fnrun-{VERSION}.dist-info/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata
    with tarfile.open(next(dist.glob("fnrun-*.tar.gz"))) as sdist:
        names = sdist.getnames()
    assert f"fnrun-{VERSION}/LICENSE" in names and f"fnrun-{VERSION}/Dockerfiles/set-labels.Dockerfile" in names
    assert f"fnrun-{VERSION}/setup.py" in names and f"fnrun-{VERSION}/orchestrator/runtimes/container/warm/fnrun-warm.c" in names
    assert not any("/warm/bin/" in name or "_pb2" in name for name in names), "the sdist carries sources; its build makes the rest"


def test_the_wheel_ships_the_warm_helper_for_both_architectures_and_the_grpc_code(dist: Path) -> None:
    """Made by the build (setup.py, orchestrator/prebuilt.py): a static, executable helper
    per engine architecture, and the modules generated from evaluator.proto."""
    wheel = zipfile.ZipFile(next(dist.glob("fnrun-*.whl")))
    for arch, machine in MACHINES.items():
        name = f"orchestrator/runtimes/container/warm/bin/linux-{arch}/fnrun-warm"
        info = wheel.getinfo(name)
        assert (info.external_attr >> 16) & 0o111, f"{name} is executable"
        target = Path(wheel.extract(info, dist / "extracted"))
        assert elf(target) == (machine, False), f"{name}: linux/{arch}, static"
    names = wheel.namelist()
    assert {"orchestrator/runtimes/remote/evaluator_pb2.py", "orchestrator/runtimes/remote/evaluator_pb2_grpc.py"} <= set(names)
    assert "orchestrator/prebuilt.py" in names and "orchestrator/runtimes/remote/evaluator.proto" in names


def test_the_installed_wheel_is_not_the_checkout(fresh: Path, tmp_path: Path) -> None:
    where = subprocess.run([str(fresh / "bin" / "python"), "-c", "import orchestrator, functions; print(orchestrator.__file__); print(functions.__file__)"],
                           cwd=tmp_path, env=_user_env(fresh), capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(path).is_relative_to(fresh) for path in where), where
    done = _fnrun(fresh, tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"fnrun {VERSION}", done


def test_the_installed_wheel_uses_what_it_ships(fresh: Path, tmp_path: Path) -> None:
    """The helper for this engine and the generated gRPC code come from the install: nothing is
    compiled (no grpc_tools compiler imported, no helper built into the cache)."""
    cache = tmp_path / "cache"
    probe = ("import sys; from orchestrator.runtimes.remote import wire; from orchestrator.runtimes.container.warm import helper\n"
             "messages, services = wire.modules(); home, why = helper.helper_dir()\n"
             "print(messages.__file__); print(services.__file__); print(home / helper.NAME); print('grpc_tools.protoc' in sys.modules)")
    done = subprocess.run([str(fresh / "bin" / "python"), "-c", probe], cwd=tmp_path, env=_user_env(fresh, XDG_CACHE_HOME=str(cache)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    *files, compiled = done.stdout.split()
    assert all(Path(name).is_relative_to(fresh) for name in files), files
    assert compiled == "False" and not cache.exists()


def test_the_installed_wheel_runs_a_catalog_function_in_process(fresh: Path, tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    shutil.copytree(REPO / "samples" / "set-labels", package)
    # no engine at all: fnrun's catalog runs as builtin, from the installed code
    done = _fnrun(fresh, tmp_path, "run", str(package), DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    assert done.returncode == 0, done.stderr
    assert "builtin" in done.stderr
    assert "team: payments" in (package / "api.yaml").read_text()


def test_the_installed_wheel_builds_its_images_and_runs_them_in_containers(fresh: Path, tmp_path: Path) -> None:
    client = docker.from_env()
    try:
        built = _fnrun(fresh, tmp_path, "images", "build", "--repository", REPOSITORY, "--only", "set-labels", "--only", "nginx-template",
                       "--base-image", "fnrun/python-base:bookworm")
        assert built.returncode == 0, built.stderr
        assert f"{REPOSITORY}/set-labels:v1" in built.stderr and "images ready" in built.stderr
        package = tmp_path / "labels"
        shutil.copytree(REPO / "samples" / "set-labels", package)
        labels = _fnrun(fresh, tmp_path, "run", str(package), "--image", f"{REPOSITORY}/set-labels:v1", "--no-cache", "--", "team=web")
        assert labels.returncode == 0, labels.stderr
        assert "builtin" not in labels.stderr and "team: web" in (package / "api.yaml").read_text()
        nginx = tmp_path / "nginx"
        shutil.copytree(REPO / "samples" / "nginx", nginx)
        declaration = nginx / "nginx.yaml"
        declaration.write_text(declaration.read_text().replace("fnrun/nginx-template:v1", f"{REPOSITORY}/nginx-template:v1"))
        rendered = _fnrun(fresh, tmp_path, "run", str(nginx), "--no-cache")
        assert rendered.returncode == 0, rendered.stderr
        assert "replicas: 5" in (nginx / "my-instance_deployment.yaml").read_text()
    finally:
        for image in client.images.list(name=f"{REPOSITORY}/*"):
            for tag in image.tags:
                client.images.remove(tag, force=True)


def _action_steps() -> list[dict]:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    return [step for step in action["runs"]["steps"] if "run" in step]


def _run_step(step: dict, inputs: dict[str, str], runner: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A composite step as GitHub's runner runs it: `${{ inputs.X }}` filled into its env, the
    runner's variables set, `bash --noprofile --norc -eo pipefail`, the job's own PATH."""
    env = {}
    for key, value in (step.get("env") or {}).items():
        name = value.removeprefix("${{ inputs.").removesuffix(" }}")
        env[key] = inputs[name] if value.startswith("${{ inputs.") else value
    assert step["shell"] == "bash"
    job = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("FNRUN_")}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd,
                          env={**job, "GITHUB_ACTIONS": "true", **runner, **env}, capture_output=True, text=True, timeout=900)


def _outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's `name<<DELIMITER` blocks, as the runner reads them."""
    found: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        value = []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        found[name] = "\n".join(value)
    return found


ACTION_INPUTS = {"command": "run", "package": "deploy", "args": "", "install": "", "python": sys.executable}


def test_the_github_action_installs_from_the_lock_and_sets_its_outputs(dist: Path, tmp_path: Path) -> None:
    """The Action's two steps as the runner runs them: fnrun installed from the wheel into its own
    virtualenv with requirements-runtime.lock's hashes (the job's python3 and PATH untouched),
    drift annotated and reported in the outputs and the step summary, a quoted argument kept
    whole, a YAML list of arguments, a current package, and a wrong command."""
    shutil.copytree(REPO / "samples" / "set-labels", tmp_path / "deploy")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    summary = tmp_path / "summary.md"
    runner = {"RUNNER_TEMP": str(runner_temp), "GITHUB_ACTION_PATH": str(REPO), "GITHUB_STEP_SUMMARY": str(summary)}
    inputs = {**ACTION_INPUTS, "install": str(next(dist.glob("fnrun-*.whl")))}
    install, check = _action_steps()
    before = subprocess.run(["bash", "-c", "command -v python3; echo $PATH"], capture_output=True, text=True).stdout
    done = _run_step(install, inputs, {**runner, "GITHUB_OUTPUT": str(tmp_path / "install.out")}, tmp_path)
    assert done.returncode == 0 and f"fnrun {VERSION}" in done.stdout, done.stderr
    venv_root = runner_temp / "fnrun-action-venv"
    installed = subprocess.run([str(venv_root / "bin" / "python"), "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    def pin(line: str) -> str:  # name==version, the name as pip canonicalises it
        name, _, version = line.split(" ")[0].split(";")[0].partition("==")
        return f"{name.lower().replace('_', '-').replace('.', '-')}=={version}"

    locked = {pin(line) for line in (REPO / "requirements-runtime.lock").read_text().splitlines() if "==" in line}
    assert {pin(line) for line in installed.split() if "==" in line} <= locked | {f"fnrun=={VERSION}"}
    assert not any(line.lower().startswith(("pytest==", "hypothesis==", "mkdocs==")) for line in installed.split())
    assert subprocess.run(["bash", "-c", "command -v python3; echo $PATH"], capture_output=True, text=True).stdout == before

    def check_with(**changes: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        output = tmp_path / f"check-{len(list(tmp_path.glob('check-*')))}.out"
        result = _run_step(check, {**inputs, **changes}, {**runner, "GITHUB_OUTPUT": str(output)}, tmp_path)
        return result, _outputs(output)

    drift, outputs = check_with(args="--no-cache")
    assert drift.returncode == 3, drift.stderr
    assert "::error file=deploy/api.yaml" in drift.stderr
    assert outputs == {"changed": "true", "files": "deploy/api.yaml\ndeploy/reconcile.yaml", "exit-code": "3"}
    assert "::group::What would change" in drift.stdout and "+    team: payments" in drift.stdout
    assert "### fnrun run `deploy`: 2 files would change" in summary.read_text()

    (tmp_path / "labels config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\ndata:\n  team: ops\n")
    quoted, outputs = check_with(args="--image fnrun/set-labels:v1\n--no-cache --fn-config 'labels config.yaml'")
    assert quoted.returncode == 3 and "+    team: ops" in quoted.stdout, quoted.stderr
    listed, outputs = check_with(args="[--image, fnrun/set-labels:v1, --no-cache, --fn-config, labels config.yaml]")
    assert listed.returncode == 3 and "+    team: ops" in listed.stdout, listed.stderr

    assert subprocess.run([str(venv_root / "bin" / "fnrun"), "run", "deploy"], cwd=tmp_path, capture_output=True).returncode == 0
    current, outputs = check_with(args="--no-cache")
    assert current.returncode == 0 and outputs == {"changed": "false", "files": "", "exit-code": "0"}, current.stderr
    assert "### fnrun run `deploy`: up to date" in summary.read_text()

    wrong, outputs = check_with(command="eval")
    assert wrong.returncode == 2 and "command must be run or render" in wrong.stdout
    assert outputs["exit-code"] == "2"


def test_a_tracked_source_is_executable_exactly_when_it_starts_with_a_shebang() -> None:
    """The rule the wheel's image builds rely on to give back the modes pip drops."""
    tracked = subprocess.run(["git", "ls-files", "-s", "orchestrator", "functions"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for line in tracked.splitlines():
        mode, _, _, name = line.split(maxsplit=3)
        starts = (REPO / name).read_bytes()[:2] == b"#!"
        assert (mode == "100755") == starts, f"{name}: mode {mode}, {'a' if starts else 'no'} shebang"


HASHES = """
import json, sys, tempfile
from pathlib import Path
from orchestrator.imagebuild import engine, flow, sources
client, checkout, found = flow.connect(), Path(sys.argv[1]), {}
with tempfile.TemporaryDirectory() as tmp:
    root = sources.assemble(Path(tmp) / "context")
    for ours, theirs in zip(engine.catalog_targets(checkout), engine.catalog_targets(root)):
        found[ours.name] = [engine.input_hash(client, ours, checkout, sys.argv[2], checkout / "functions"),
                            engine.input_hash(client, theirs, root, sys.argv[2], root / "functions")]
print(json.dumps(found))
"""


def test_the_wheel_and_the_checkout_build_the_same_images(fresh: Path, tmp_path: Path) -> None:
    """`fnrun images build` from an installed wheel and scripts/build_images.py from the checkout
    hash the same inputs for every catalog image, so neither rebuilds what the other built."""
    import json

    done = subprocess.run([str(fresh / "bin" / "python"), "-c", HASHES, str(REPO), "fnrun/python-base:bookworm"], cwd=tmp_path,
                          env=_user_env(fresh), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    hashes = json.loads(done.stdout)
    assert "fnrun-base" in hashes and "set-labels" in hashes
    assert {name: pair[0] == pair[1] for name, pair in hashes.items()} == {name: True for name in hashes}
