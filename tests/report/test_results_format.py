"""`--results-format text|json|yaml`: the run as one document on stdout, human lines on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}


def _package(root: Path, severity: str = "warning") -> Path:
    return write_package(
        root,
        {
            "app/deploy.yaml": deployment("web"),
            "app/1-label.yaml": function_config("fnrun-test/label:v1", {"team": "web"}, name="label"),
            "app/2-gen.yaml": function_config("fnrun-test/generate:v1", {"name": "made"}, name="gen"),
            "app/3-results.yaml": function_config(
                "fnrun-test/results:v1", {"severity": severity, "message": "look here", "file": "app/deploy.yaml", "path": "spec.replicas"}, name="res"
            ),
        },
    )


def test_json_carries_each_function_and_what_it_changed(tmp_path: Path) -> None:
    _package(tmp_path)
    result = fnrun("run", str(tmp_path), "--results-format", "json", env=PLAIN)
    assert result.code == 0, result
    doc = json.loads(result.stdout)
    assert (doc["apiVersion"], doc["kind"], doc["exitCode"]) == ("fnrun.dev/v1alpha1", "FunctionResultList", 0)
    assert "error" not in doc
    label, gen, res = doc["items"]
    assert label["image"] == "fnrun-test/label:v1" and label["declaredIn"] == "app/1-label.yaml"
    assert label["exitCode"] == 0 and isinstance(label["duration"], float) and label["duration"] > 0
    assert label["changes"] == {"added": 0, "changed": 3, "removed": 0}  # deploy.yaml and the two other configs
    assert gen["changes"] == {"added": 1, "changed": 0, "removed": 0}
    assert res["results"] == [{"message": "look here", "severity": "warning", "field": {"path": "spec.replicas"}, "file": {"path": "app/deploy.yaml"}}]
    summary = doc["summary"]
    assert summary["functions"] == 3 and summary["resourcesChanged"] == 4 and summary["written"] is True and summary["check"] is False
    assert summary["files"] == {"created": ["app/made_configmap.yaml"], "updated": ["app/2-gen.yaml", "app/3-results.yaml", "app/deploy.yaml"], "deleted": []}
    assert "diff" not in doc
    # the human lines are still on stderr
    assert "[ok] fnrun-test/label:v1" in result.stderr and "warning: look here" in result.stderr
    assert load(tmp_path / "app/deploy.yaml")["metadata"]["labels"] == {"team": "web"}


def test_yaml_is_the_same_document_and_results_dir_still_works(tmp_path: Path) -> None:
    _package(tmp_path / "a")
    _package(tmp_path / "b")
    as_json = json.loads(fnrun("run", str(tmp_path / "a"), "--results-format", "json", env=PLAIN).stdout)
    results_dir = tmp_path / "results"
    result = fnrun("run", str(tmp_path / "b"), "--results-format", "yaml", "--results-dir", str(results_dir), env=PLAIN)
    assert result.code == 0, result
    as_yaml = fast.load(result.stdout, "stdout")
    for doc in (as_json, as_yaml):
        doc["summary"].pop("duration")
        for item in doc["items"]:
            item.pop("duration")
    assert as_yaml == as_json
    saved = load(results_dir / "results.yaml")
    assert [item["image"] for item in saved["items"]] == ["fnrun-test/label:v1", "fnrun-test/generate:v1", "fnrun-test/results:v1"]


def test_text_lists_functions_results_and_summary(tmp_path: Path) -> None:
    _package(tmp_path)
    result = fnrun("run", str(tmp_path), "--results-format", "text", env=PLAIN)
    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0].startswith("[ok] fnrun-test/label:v1 (") and lines[0].endswith("s, 3 changed)")
    assert lines[1].startswith("[ok] fnrun-test/generate:v1 (") and lines[1].endswith("s, 1 added)")
    assert lines[3] == "  warning: look here (in app/deploy.yaml field spec.replicas)"
    assert lines[4].startswith("3 functions, 4 resources changed, 4 files written (1 created, 3 updated, 0 deleted, 1 unchanged) in ")
    assert "label: set 1 label" not in result.stdout  # functions' stderr is not a result


def test_a_failed_run_still_prints_its_document(tmp_path: Path) -> None:
    _package(tmp_path, severity="error")
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--results-format", "json", env=PLAIN)
    assert_one_line_error(result, "fnrun-test/results:v1", "1 error result", code=1)
    doc = json.loads(result.stdout)
    assert doc["exitCode"] == 1 and "1 error result" in doc["error"]
    assert doc["items"][2]["results"][0]["severity"] == "error"
    assert doc["items"][2]["error"] == "function fnrun-test/results:v1 reported 1 error result(s)"
    assert doc["summary"]["written"] is False
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_with_check_the_document_carries_the_diff(tmp_path: Path, fmt: str) -> None:
    _package(tmp_path / "doc")
    _package(tmp_path / "plain")
    before = snapshot(tmp_path / "doc")
    result = fnrun("run", str(tmp_path / "doc"), "--check", "--results-format", fmt, env=PLAIN)
    assert_one_line_error(result, "4 files would change", code=3)
    doc = json.loads(result.stdout) if fmt == "json" else fast.load(result.stdout, "stdout")
    plain = fnrun("run", str(tmp_path / "plain"), "--check", env=PLAIN)
    assert doc["diff"] == plain.stdout
    assert doc["exitCode"] == 3 and "would change" in doc["error"]
    assert doc["summary"]["check"] is True and doc["summary"]["written"] is False
    assert doc["summary"]["files"]["created"] == ["app/made_configmap.yaml"]
    assert snapshot(tmp_path / "doc") == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--results-format", "text", "--check"), "--results-format text"),
        (("--results-format", "text", "--diff"), "--results-format text"),
        (("--results-format", "json", "--output", "-"), "--results-dir"),
        (("--results-format", "xml"), "text, json, yaml"),
        (("--quiet", "--verbose"), "--quiet and --verbose"),
    ],
)
def test_combinations_that_would_mix_stdout_are_refused(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    _package(tmp_path)
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), *args, env=PLAIN)
    assert_one_line_error(result, needle, code=2)
    assert result.stdout == ""
    assert snapshot(tmp_path) == before
