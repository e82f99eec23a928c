"""All or nothing: every way a function can fail leaves the package byte-identical."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.settings import LABEL_PID
from testing.pipeline_helpers import REPO, assert_one_line_error, deployment, fnrun, function_config, interrupt_when_running, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")


def _package(tmp_path: Path, *functions: str) -> dict:
    files = {"app/deploy.yaml": deployment("web", "comment"), "app/1-label.yaml": function_config("fnrun-test/label:v1", {"a": "b"}, name="label")}
    for number, config in enumerate(functions, 2):
        files[f"app/{number}-fn.yaml"] = config
    write_package(tmp_path, files)
    return snapshot(tmp_path)


@pytest.mark.parametrize(
    ("image", "data", "needle"),
    [
        ("fnrun-test/fail:v1", {"exitCode": "3"}, "exit code 3"),
        ("fnrun-test/garbage:v1", None, "invalid output"),
        ("fnrun-test/results:v1", {"severity": "error", "message": "bad thing"}, "1 error result"),
    ],
)
def test_a_failing_function_fails_the_run_and_writes_nothing(tmp_path: Path, image: str, data: dict | None, needle: str) -> None:
    before = _package(tmp_path, function_config(image, data, name="bad"))
    result = fnrun("run", str(tmp_path))
    assert_one_line_error(result, image, needle, code=1)
    assert snapshot(tmp_path) == before


def test_stderr_is_prefixed_with_the_function_name_and_results_are_printed(tmp_path: Path) -> None:
    _package(tmp_path, function_config("fnrun-test/results:v1", {"severity": "warning", "message": "heads up", "ref": "true"}, name="warn"))
    result = fnrun("run", str(tmp_path))
    assert result.code == 0, result
    assert "[fnrun-test/label:v1] " in result.stderr
    # the first item in the results function's scope is the label function's ConfigMap
    assert "warning: heads up (ConfigMap/label" in result.stderr


def test_defer_failure_runs_the_rest_then_fails(tmp_path: Path) -> None:
    failing = function_config("fnrun-test/fail:v1", name="first", extra="deferFailure: true\n")
    before = _package(tmp_path, failing, function_config("fnrun-test/results:v1", {"severity": "info", "message": "later ran"}, name="later"))
    results_dir = tmp_path.parent / f"{tmp_path.name}-results"
    result = fnrun("run", str(tmp_path), "--results-dir", str(results_dir))
    assert_one_line_error(result, "fnrun-test/fail:v1", code=1)
    assert "later ran" in result.stderr  # the function after the deferred failure still ran
    assert snapshot(tmp_path) == before
    report = load(results_dir / "results.yaml")
    assert report["kind"] == "FunctionResultList"
    assert [item.get("image") for item in report["items"]] == ["fnrun-test/label:v1", "fnrun-test/fail:v1", "fnrun-test/results:v1"]
    assert report["items"][1]["exitCode"] == 1
    assert report["items"][2]["results"] == [{"message": "later ran", "severity": "info"}]


def test_missing_image_is_one_line_naming_it(tmp_path: Path) -> None:
    before = _package(tmp_path, function_config("fnrun-test/does-not-exist:v9", name="missing"))
    result = fnrun("run", str(tmp_path), "--image-pull-policy", "never")
    assert_one_line_error(result, "fnrun-test/does-not-exist:v9", code=4)  # the machine lacks it: not bad input
    assert snapshot(tmp_path) == before


def test_timeout_kills_the_function_and_fails(tmp_path: Path) -> None:
    before = _package(tmp_path, function_config("fnrun-test/sleep:v1", {"seconds": "30"}, name="slow"))
    started = time.monotonic()
    result = fnrun("run", str(tmp_path), "--timeout", "2")
    assert time.monotonic() - started < 20
    assert_one_line_error(result, "fnrun-test/sleep:v1", code=1)
    assert snapshot(tmp_path) == before


def test_twins_changed_to_different_values_fail(tmp_path: Path) -> None:
    script = tmp_path.parent / f"{tmp_path.name}-twins.py"
    script.write_text(
        "#!/usr/bin/env python3\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\n"
        "a = rl['items'][0]['metadata']['annotations']\n"
        "a['config.kubernetes.io/path'] = 'one.yaml'\na['internal.config.kubernetes.io/path'] = 'two.yaml'\n"
        "yaml.safe_dump(rl, sys.stdout)\n"
    )
    script.chmod(0o755)
    write_package(tmp_path, {"d.yaml": deployment("d")})
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert_one_line_error(result, "one.yaml", "two.yaml", code=1)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ("a['config.kubernetes.io/path'] = 'moved/d.yaml'", "moved/d.yaml"),
        ("a['internal.config.kubernetes.io/path'] = 'moved/d.yaml'", "moved/d.yaml"),
    ],
)
def test_one_twin_changed_moves_the_resource(tmp_path: Path, change: str, where: str) -> None:
    script = tmp_path.parent / f"{tmp_path.name}-move.py"
    script.write_text(
        "#!/usr/bin/env python3\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\n"
        f"a = rl['items'][0]['metadata']['annotations']\n{change}\nyaml.safe_dump(rl, sys.stdout)\n"
    )
    script.chmod(0o755)
    write_package(tmp_path, {"d.yaml": deployment("d")})
    result = fnrun("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert result.code == 0, result
    assert not (tmp_path / "d.yaml").exists()
    assert load(tmp_path / where)["metadata"]["name"] == "d"


def test_a_path_escaping_the_package_fails(tmp_path: Path) -> None:
    script = tmp_path.parent / f"{tmp_path.name}-escape.py"
    script.write_text(
        "#!/usr/bin/env python3\nimport sys, yaml\nrl = yaml.safe_load(sys.stdin)\n"
        "for k in ('config.kubernetes.io/path', 'internal.config.kubernetes.io/path'):\n"
        "    rl['items'][0]['metadata']['annotations'][k] = '../escaped.yaml'\n"
        "yaml.safe_dump(rl, sys.stdout)\n"
    )
    script.chmod(0o755)
    write_package(tmp_path / "pkg", {"d.yaml": deployment("d")})
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path / "pkg"), "--exec", str(script), "--enable-exec")
    assert_one_line_error(result, "../escaped.yaml", code=1)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_fnrun_removes_the_container_and_writes_nothing(tmp_path: Path, signum: int) -> None:
    before = _package(tmp_path, function_config("fnrun-test/sleep:v1", {"seconds": "60"}, name="slow"))
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "run", str(tmp_path)], stderr=subprocess.PIPE, text=True, cwd=REPO)
    client = docker.from_env()
    stderr = interrupt_when_running(proc, {"label": [f"{LABEL_PID}={proc.pid}", "fnrun.function=fnrun-test/sleep:v1"]}, signum)
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    assert client.containers.list(all=True, filters={"label": f"{LABEL_PID}={proc.pid}"}) == []
    assert snapshot(tmp_path) == before
