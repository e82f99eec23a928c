"""A CI step can never pass by mistake, and what it prints can be acted on: each case with its
exact exit code (0 ok, 1 function, 2 input, 3 drift, 4 environment, 130/143 interrupted) and one
`fnrun: error:` line naming the file, resource or image."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import REPO, assert_one_line_error, deployment, fnrun, function_config, signal_when, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}
GITHUB = {"GITHUB_ACTIONS": "true"}
KPTFILE = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
{pipeline_key}:
  mutators:
  - image: fnrun-test/label:v1
    configMap:
      team: web
  validators:
  - image: fnrun-test/fail:v1
"""


def _kpt(root: Path, kptfile: str) -> Path:
    return write_package(root, {"Kptfile": kptfile, "deploy.yaml": deployment("web")})


def test_a_misspelt_top_level_field_is_refused_with_file_and_line_as_kpt_does(tmp_path: Path) -> None:
    package = _kpt(tmp_path / "pkg", KPTFILE.format(pipeline_key="pipelines"))
    before = snapshot(package)
    result = fnrun("render", str(package), env=PLAIN)
    assert_one_line_error(result, "Kptfile:5: field pipelines not found in type v1.KptFile", "did you mean pipeline?", code=2)
    assert snapshot(package) == before  # no Rendered: True, nothing written
    assert fnrun("render", str(package), "--check", env=PLAIN).code == 2


@pytest.mark.parametrize(
    ("kptfile", "needle"),
    [
        ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n  - image: x\n    configmap: {a: b}\n", "Kptfile:8: field configmap not found in type v1.Function (did you mean configMap?)"),
        ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutator: []\n", "Kptfile:6: field mutator not found in type v1.Pipeline"),
        ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\n  uid: x\n", "Kptfile:5: field uid not found in type yaml.ObjectMeta"),
        ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\ninfo:\n  emails: a@b\n", "Kptfile:6: cannot unmarshal !!str `a@b` into []string"),
        ("# header\n---\napiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n    image: x\n", "Kptfile:9: cannot unmarshal !!map into []v1.Function"),
        ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n  - image: Upper/Case:v1\n", "not a valid image reference"),
    ],
)
def test_kpt_s_schema_everywhere_with_the_line(tmp_path: Path, kptfile: str, needle: str) -> None:
    package = _kpt(tmp_path / "pkg", kptfile)
    assert_one_line_error(fnrun("render", str(package), env=PLAIN), needle, code=2)


def test_a_kptfile_kpt_accepts_renders(tmp_path: Path) -> None:
    kptfile = (
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: 1\n  labels:\n    a: true\n"
        "info:\n  description: yes\n  emails: [a@b]\n  readinessGates:\n  - conditionType: Ready\n"
        "upstream:\n  type: git\n  git: {repo: r, directory: /, ref: main}\n  updateStrategy: resource-merge\n"
        "upstreamLock:\n  type: git\n  git: {repo: r, directory: /, ref: main, commit: abc}\n"
        "inventory:\n  namespace: n\n  name: i\n  inventoryID: x\n"
        "pipeline:\n  mutators:\n  -\n  - image: fnrun-test/label:v1\n    configMap: {team: 7}\n    selectors:\n    - kind: Deployment\n"
        "status:\n  conditions:\n  - type: Rendered\n    status: \"True\"\n"
    )
    package = _kpt(tmp_path / "pkg", kptfile)
    result = fnrun("render", str(package), env=PLAIN)
    assert result.code == 0, result
    assert "team: '7'" in (package / "deploy.yaml").read_text()


def test_run_check_on_a_package_of_kptfile_pipelines_points_to_render(tmp_path: Path) -> None:
    package = _kpt(tmp_path / "pkg", KPTFILE.format(pipeline_key="pipeline"))
    result = fnrun("run", str(package), "--check", env=PLAIN)
    assert_one_line_error(result, "Kptfile pipelines have 2 steps", f"fnrun render {package} --check", code=2)


def test_pre_commit_hooks_cover_render() -> None:
    hooks = {h["id"]: h for h in fast.load((REPO / ".pre-commit-hooks.yaml").read_text(), "hooks")}
    assert hooks["fnrun-render-check"]["entry"] == "fnrun render --check"
    assert hooks["fnrun-render-check"]["pass_filenames"] is False


def test_drift_exits_3_and_a_failing_function_1_under_check(tmp_path: Path) -> None:
    drift = write_package(tmp_path / "drift", {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    assert_one_line_error(fnrun("run", str(drift), "--check", env=PLAIN), "would change", code=3)
    failing = write_package(tmp_path / "fail", {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/fail:v1", {"message": "no"})})
    assert_one_line_error(fnrun("run", str(failing), "--check", env=PLAIN), "fnrun-test/fail:v1", code=1)


def test_the_hint_after_a_failed_check_keeps_the_flags(tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web")})
    result = fnrun("run", str(package), "--check", "-i", "fnrun-test/label:v1", "--no-cache", "--", "team=web", env=PLAIN)
    assert_one_line_error(result, f"run `fnrun run {package} -i fnrun-test/label:v1 --no-cache -- team=web` to write them", code=3)


def test_a_missing_image_exits_4_naming_the_image_and_the_declaring_file(tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web"), "app/fn.yaml": function_config("fnrun-test/not-built:v1")})
    result = fnrun("run", str(package), "--image-pull-policy", "never", env=PLAIN)
    assert_one_line_error(result, "app/fn.yaml", "fnrun-test/not-built:v1", code=4)
    kpt = _kpt(tmp_path / "kpt", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n  - image: fnrun-test/not-built:v1\n")
    assert_one_line_error(fnrun("render", str(kpt), "--image-pull-policy", "never", env=PLAIN), "Kptfile", "fnrun-test/not-built:v1", code=4)


def test_a_dns_failure_is_the_environment_not_the_package(tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web")})
    result = fnrun("run", str(package), "-i", "registry.invalid/some/fn:v1", env=PLAIN)
    assert_one_line_error(result, "registry.invalid/some/fn:v1", code=4)


def test_no_engine_is_the_environment(tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web")})
    result = fnrun("run", str(package), "-i", "fnrun-test/label:v1", "--no-cache", env={**PLAIN, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert_one_line_error(result, "cannot reach the container engine", code=4)


def test_check_diff_applies_from_the_repository_root(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    package = write_package(repo / "deploy" / "app", {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    check = fnrun("run", str(package), "--check", env=PLAIN)  # from anywhere: the diff is the repository's
    assert check.code == 3, check
    assert "+++ b/deploy/app/deploy.yaml" in check.stdout
    inside = subprocess.run(["git", "apply", "--check", "-v", "-"], cwd=package, input=check.stdout, capture_output=True, text=True)
    assert inside.returncode == 0 and "Skipped" not in inside.stderr, inside.stderr  # from inside the package too
    applied = subprocess.run(["git", "apply", "-v", "-"], cwd=repo, input=check.stdout, capture_output=True, text=True)
    assert applied.returncode == 0 and "Applied patch deploy/app/deploy.yaml cleanly" in applied.stderr, applied.stderr
    assert fnrun("run", str(package), "--check", env=PLAIN).code == 0  # what git applied is the render


def test_github_annotates_a_yaml_syntax_error_with_the_repository_path(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_package(repo / "deploy", {"broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [x\n", "fn.yaml": function_config("fnrun-test/label:v1")})
    (repo / ".git").mkdir()
    result = fnrun("run", "deploy", env=GITHUB, cwd=repo)
    assert_one_line_error(result, "broken.yaml", code=2)
    annotations = [line for line in result.stderr.splitlines() if line.startswith("::error")]
    assert len(annotations) == 1 and annotations[0].startswith("::error file=deploy/broken.yaml,line="), result.stderr
    assert "::group::" not in result.stderr


def test_github_annotates_a_kptfile_error_on_its_line(tmp_path: Path) -> None:
    package = _kpt(tmp_path / "pkg", KPTFILE.format(pipeline_key="pipelines"))
    result = fnrun("render", "pkg", env=GITHUB, cwd=tmp_path)
    assert "::error file=pkg/Kptfile,line=5::Kptfile:5: field pipelines not found" in result.stderr, result.stderr
    assert result.code == 2 and package.exists()


def test_plain_render_output_names_each_steps_package_and_a_failure_is_said_once(tmp_path: Path) -> None:
    root = write_package(
        tmp_path / "pkg",
        {
            "Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\npipeline:\n  validators:\n  - image: fnrun-test/fail:v1\n    configMap: {message: broken}\n",
            "sub/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\npipeline:\n  mutators:\n  - image: fnrun-test/label:v1\n    configMap: {team: web}\n",
            "sub/deploy.yaml": deployment("web"),
        },
    )
    result = fnrun("render", str(root), "--no-status", env=PLAIN)
    assert_one_line_error(result, "fnrun-test/fail:v1", code=1)
    lines = result.stderr.splitlines()
    assert any(line.startswith("[ok] fnrun-test/label:v1 (sub/Kptfile, ") for line in lines), lines
    failed = [line for line in lines if line.startswith("[failed] fnrun-test/fail:v1 (Kptfile, ")]
    assert len(failed) == 1 and "exit code" not in failed[0], lines  # the reason is in the closing line only
    assert sum("exit code" in line for line in lines) == 1, lines


@pytest.mark.parametrize(("signum", "code", "said"), [(signal.SIGINT, 130, "fnrun: interrupted; nothing was written"), (signal.SIGTERM, 143, "fnrun: interrupted (SIGTERM); nothing was written")])
def test_an_interrupted_run_says_so_and_exits_130_or_143(tmp_path: Path, signum: int, code: int, said: str) -> None:
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/sleep:v1", {"seconds": "60"})})
    before = snapshot(package)
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", str(package), "--no-cache"],
        stderr=subprocess.PIPE, text=True, env={**os.environ, **PLAIN}, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    rest = signal_when(proc, "sleeping", signum)
    assert proc.returncode == code, rest
    assert said in rest.splitlines(), rest
    assert "Traceback" not in rest and "exit code 137" not in rest, rest
    assert snapshot(package) == before
