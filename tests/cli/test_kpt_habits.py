"""What a kpt user's fingers already type works: no DIR means `.`, `-i`, `-h`, `-o stdout|unwrap|DIR`
on run as on render, `--exec "./fn arg1 arg2"`, short image names with a prefix, `--allow-exec` on
both commands. Each row of the table of kpt habits, through the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import deployment, fnrun, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}
LABEL_STEP = """\
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
  - image: {image}
    configMap:
      team: web
"""


def _labels(path: Path) -> dict:
    return load(path)["metadata"].get("labels") or {}


def _kpt_package(root: Path, image: str = "fnrun-test/label:v1") -> Path:
    return write_package(root, {"Kptfile": LABEL_STEP.format(image=image), "deploy.yaml": deployment("web")})


def test_no_directory_means_the_current_one_for_run_and_render(tmp_path: Path) -> None:
    plain = write_package(tmp_path / "plain", {"deploy.yaml": deployment("web")})
    ran = fnrun("run", "-i", "fnrun-test/label:v1", "--", "team=web", cwd=plain, env=PLAIN)
    assert ran.code == 0, ran
    assert _labels(plain / "deploy.yaml") == {"team": "web"}

    package = _kpt_package(tmp_path / "kpt")
    rendered = fnrun("render", cwd=package, env=PLAIN)
    assert rendered.code == 0, rendered
    assert _labels(package / "deploy.yaml") == {"team": "web"}
    assert fnrun("render", "--check", cwd=package, env=PLAIN).code == 0


def test_h_is_help_on_every_command() -> None:
    for command in ([], ["run"], ["render"], ["list"], ["cache"]):
        result = fnrun(*command, "-h")
        assert result.code == 0, result
        assert result.stdout.startswith("Usage: fnrun"), result.stdout


@pytest.mark.parametrize("command", ["run", "render"])
def test_o_stdout_unwrap_and_dir_on_run_as_on_render(tmp_path: Path, command: str) -> None:
    package = _kpt_package(tmp_path / "pkg")
    args = [command, str(package)] + (["-i", "fnrun-test/label:v1", "--", "team=web"] if command == "run" else [])
    before = snapshot(package)

    wrapped = fnrun(*args[:2], "-o", "stdout", *args[2:], env=PLAIN)
    assert wrapped.code == 0, wrapped
    listed = fast.load(wrapped.stdout, "stdout")
    assert listed["kind"] == "ResourceList"
    assert {"team": "web"} in [item["metadata"].get("labels") for item in listed["items"]]

    unwrapped = fnrun(*args[:2], "-o", "unwrap", *args[2:], env=PLAIN)
    assert unwrapped.code == 0, unwrapped
    documents = fast.load_all(unwrapped.stdout, "stdout")
    # render and run's --image function read the Kptfile as a resource (kpt fn render and fn eval do)
    assert {d["kind"] for d in documents} == {"Kptfile", "Deployment"}
    assert all("ResourceList" != d["kind"] for d in documents)

    out = tmp_path / f"{command}-out"
    written = fnrun(*args[:2], "-o", str(out), *args[2:], env=PLAIN)
    assert written.code == 0, written
    assert _labels(out / "deploy.yaml") == {"team": "web"}
    assert snapshot(package) == before  # out of place: the package is left as it was


@pytest.mark.parametrize("command", ["run", "render"])
def test_exclude_local_config_gives_what_a_cluster_should_get(tmp_path: Path, command: str) -> None:
    package = _kpt_package(tmp_path / "pkg")
    (package / "setters.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\n  annotations:\n    config.kubernetes.io/local-config: "true"\n'
    )
    extra = ["-i", "fnrun-test/label:v1", "--", "team=web"] if command == "run" else []
    result = fnrun(command, str(package), "-o", "unwrap", "--exclude-local-config", *extra, env=PLAIN)
    assert result.code == 0, result
    assert [d["kind"] for d in fast.load_all(result.stdout, "stdout")] == ["Deployment"]


def test_exec_takes_a_command_line_with_arguments_as_kpt_does(tmp_path: Path) -> None:
    script = tmp_path / "label-fn"
    script.write_text(
        f"#!{sys.executable}\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\nkey, value = sys.argv[1], sys.argv[2]\n"
        "for item in rl['items']:\n    item['metadata'].setdefault('labels', {})[key] = value\nyaml.safe_dump(rl, sys.stdout)\n"
    )
    script.chmod(0o755)
    package = write_package(tmp_path / "pkg", {"deploy.yaml": deployment("web")})
    refused = fnrun("run", str(package), "--exec", f"{script} tier 'front end'", env=PLAIN)
    assert refused.code == 2 and "--allow-exec" in refused.stderr, refused
    result = fnrun("run", str(package), "--exec", f"{script} tier 'front end'", "--allow-exec", env=PLAIN)
    assert result.code == 0, result
    assert _labels(package / "deploy.yaml") == {"tier": "front end"}


def test_short_image_names_take_the_prefix_on_run_as_on_render(tmp_path: Path) -> None:
    plain = write_package(tmp_path / "plain", {"deploy.yaml": deployment("web")})
    by_flag = fnrun("run", str(plain), "-i", "label:v1", "--image-prefix", "fnrun-test", "--", "team=web", env=PLAIN)
    assert by_flag.code == 0, by_flag
    assert _labels(plain / "deploy.yaml") == {"team": "web"}
    by_env = fnrun("run", str(plain), "-i", "label:v1", "--", "team=api", env={**PLAIN, "KPT_IMAGE_PREFIX": "fnrun-test/"})
    assert by_env.code == 0, by_env
    assert _labels(plain / "deploy.yaml") == {"team": "api"}
    # without a prefix a short name is kpt's catalog's, not Docker Hub's library
    missing = fnrun("run", str(plain), "-i", "label:v1", "--image-pull-policy", "never", "--", "team=x", env=PLAIN)
    assert missing.code == 4 and "ghcr.io/kptdev/krm-functions-catalog/label:v1" in missing.stderr, missing


@pytest.mark.parametrize("spelling", ["--allow-exec", "--enable-exec"])
def test_allow_exec_is_spelt_alike_on_run_and_render(tmp_path: Path, spelling: str) -> None:
    script = tmp_path / "identity-fn"
    script.write_text("#!/bin/sh\nexec cat\n")
    script.chmod(0o755)
    package = write_package(
        tmp_path / "pkg",
        {"Kptfile": f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - exec: {script}\n", "deploy.yaml": deployment("web")},
    )
    assert fnrun("render", str(package), spelling, env=PLAIN).code == 0
    assert fnrun("run", str(package), "--exec", str(script), spelling, env=PLAIN).code == 0
    refused = fnrun("render", str(package), env=PLAIN)
    assert refused.code == 2 and "--allow-exec" in refused.stderr, refused
