"""The pre-commit hook (`.pre-commit-hooks.yaml`, id fnrun-check) through the real `pre-commit` on a
temporary git repository, and the sample GitHub workflow's check step run as written.

pre-commit installs a `language: python` hook by creating a virtualenv and running
`pip install .` in a clone of the hook repository. To run offline and in seconds, the clone is
this working tree (committed into a scratch repository, so uncommitted changes are tested too),
and pip finds fnrun's dependencies already installed: PYTHONPATH points at links to this test
venv's packages (build tools left out, so the hook venv's own seeded setuptools builds fnrun),
with no index and no build isolation. fnrun itself is really built and installed into the hook's
environment, and `git commit` really runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import REPO, deployment, function_config, write_package

pytestmark = pytest.mark.usefixtures("test_images")
HOOK_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "Dockerfiles", ".pre-commit-hooks.yaml", "orchestrator", "functions")
NOT_DEPENDENCIES = ("setuptools", "pkg_resources", "_distutils_hack", "distutils-precedence.pth", "pip", "wheel", "__editable__", "fnrun", "orchestrator", "functions", "__pycache__")


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    identity = ["-c", "user.name=fnrun tests", "-c", "user.email=tests@fnrun.invalid", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    return subprocess.run(["git", *identity, *args], cwd=cwd, env=env, capture_output=True, text=True, check=check, timeout=600)


def _hook_repository(target: Path) -> str:
    """This working tree's hook sources as a git repository; returns its commit."""
    for name in HOOK_SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "hook sources")
    return _git(target, "rev-parse", "HEAD").stdout.strip()


def _dependencies(target: Path) -> Path:
    """Links to every package of this venv but the build tools and fnrun itself."""
    target.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(NOT_DEPENDENCIES):
            (target / entry.name).symlink_to(entry)
    return target


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GIT_", "VIRTUAL_ENV"))}
    env.update(
        PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
        PYTHONPATH=str(_dependencies(tmp_path / "deps")),
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip reads this the other way round: no build isolation
        GITHUB_ACTIONS="",
    )
    return env


def test_the_manifest_declares_fnrun_check() -> None:
    hooks = fast.load((REPO / ".pre-commit-hooks.yaml").read_text(), ".pre-commit-hooks.yaml")
    (hook,) = [h for h in hooks if h["id"] == "fnrun-check"]
    assert hook["entry"] == "fnrun run --check"
    assert hook["pass_filenames"] is False and hook["language"] == "python"
    assert hook["args"] == ["."]


def test_pre_commit_blocks_a_commit_of_an_unrendered_package(tmp_path: Path) -> None:
    rev = _hook_repository(tmp_path / "hooks")
    env = _offline_env(tmp_path)
    repo = tmp_path / "repo"
    write_package(repo, {"deploy/deploy.yaml": deployment("web"), "deploy/fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    config = f"repos:\n  - repo: {tmp_path / 'hooks'}\n    rev: {rev}\n    hooks:\n      - id: fnrun-check\n        args: [deploy/]\n"
    (repo / ".pre-commit-config.yaml").write_text(config)
    _git(repo, "init", "-q")
    _git(repo, "add", ".pre-commit-config.yaml")
    _git(repo, "commit", "-q", "-m", "pre-commit config")
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    _git(repo, "add", "deploy")
    blocked = _git(repo, "commit", "-m", "unrendered", env=env, check=False)
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode == 1, output
    assert "fnrun run --check" in output and "Failed" in output
    assert "+++ b/deploy/deploy.yaml\n" in output and "+  labels:\n+    team: web\n" in output
    assert "fnrun: error: deploy/: 1 file would change" in output
    assert "Traceback" not in output
    assert _git(repo, "rev-list", "--count", "HEAD").stdout.strip() == "1"  # nothing committed
    installed_fnrun = list((tmp_path / "pre-commit-home").glob("repo*/py_env-*/lib/python*/site-packages/orchestrator/cli/__init__.py"))
    assert installed_fnrun, "fnrun was not installed into the hook's environment"

    rendered = subprocess.run([sys.executable, "-m", "orchestrator", "run", "deploy/"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    _git(repo, "add", "deploy")
    passed = _git(repo, "commit", "-m", "rendered", env=env, check=False)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "fnrun run --check" in passed.stdout + passed.stderr and "Passed" in passed.stdout + passed.stderr

    (repo / "notes.txt").write_text("no YAML in this commit\n")
    _git(repo, "add", "notes.txt")
    skipped = _git(repo, "commit", "-m", "notes", env=env, check=False)
    assert skipped.returncode == 0 and "Skipped" in skipped.stdout + skipped.stderr


def test_the_sample_workflows_check_step_runs_as_written(tmp_path: Path) -> None:
    workflow = fast.load((REPO / "samples/ci/github-workflow.yaml").read_text(), "github-workflow.yaml")
    job = workflow["jobs"]["rendered"]
    step = next(s for s in job["steps"] if "fnrun run" in s.get("run", ""))
    write_package(tmp_path / job["env"]["PACKAGE"], {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    env = {**os.environ, **job["env"], "GITHUB_ACTIONS": "true", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def run_step() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    drift = run_step()
    assert drift.returncode == 3, drift
    assert "+++ b/deploy.yaml" in drift.stdout
    assert "::error file=deploy/deploy.yaml,line=5::fnrun run would change this file" in drift.stderr
    assert (tmp_path / "fnrun-results/results.yaml").exists()
    assert subprocess.run([sys.executable, "-m", "orchestrator", "run", "deploy/", "-q"], cwd=tmp_path, env=env).returncode == 0
    clean = run_step()
    assert clean.returncode == 0, clean
    assert clean.stdout == ""
