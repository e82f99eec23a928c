"""GitHub Actions: groups per function, results as `::error file=PATH,line=N::` annotations on the
line where their resource starts (PATH relative to the repository root, the working directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, write_package

pytestmark = pytest.mark.usefixtures("test_images")
GITHUB = {"GITHUB_ACTIONS": "true"}

MULTI = """\
# two resources, and a document that is not one
---
kind: Note
text: not a resource (no apiVersion)
---

# the first resource
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: second
"""


def _repository(root: Path, severity: str) -> Path:
    """A repository whose package lives in deploy/; the results function reports one result per
    item of checks/ (two resources of multi.yaml), naming that file."""
    data = {"severity": severity, "message": "50% off: bad, really", "file": "checks/multi.yaml", "ref": "true", "count": "2"}
    write_package(
        root / "deploy",
        {
            "app/deploy.yaml": deployment("web"),
            "app/fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"}),
            "checks/multi.yaml": MULTI,
            "checks/results.yaml": function_config("fnrun-test/results:v1", data, name="res"),
        },
    )
    return root


def test_results_become_annotations_on_the_resources_lines(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "warning")
    result = fnrun("run", "deploy", cwd=repo, env=GITHUB)
    assert result.code == 0, result
    lines = result.stderr.splitlines()
    # results of item 0 and 1 of checks/: the first resource starts on line 8, the second on 13
    assert "::warning file=deploy/checks/multi.yaml,line=8::50%25 off: bad, really (1/2)" in lines
    assert "::warning file=deploy/checks/multi.yaml,line=13::50%25 off: bad, really (2/2)" in lines


def test_each_function_is_a_group_holding_its_stderr_and_none_is_empty(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "info")
    result = fnrun("run", "deploy", cwd=repo, env=GITHUB)
    assert result.code == 0, result
    lines = result.stderr.splitlines()
    label = lines.index("::group::fnrun-test/label:v1 (app/fn.yaml)")
    assert lines[label + 1] == "[fnrun-test/label:v1] label: set 1 label(s) on 1 resource(s)"
    assert lines[label + 2] == "::endgroup::"
    assert lines[label + 3].startswith("[ok] fnrun-test/label:v1 (")
    # the results function prints nothing on stderr: no group for it
    assert not any(line.startswith("::group::fnrun-test/results:v1") for line in lines)
    assert lines.count("::group::fnrun-test/label:v1 (app/fn.yaml)") == lines.count("::endgroup::") == 1
    assert "  info: 50% off: bad, really (1/2) (ConfigMap/first in checks/multi.yaml)" in lines  # info is a plain line
    assert not any(line.startswith(("::warning", "::error")) for line in lines)


def test_error_results_fail_the_run_as_error_annotations(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "error")
    result = fnrun("run", "deploy", cwd=repo, env=GITHUB)
    assert_one_line_error(result, "fnrun-test/results:v1", "2 error result", code=1)
    assert "::error file=deploy/checks/multi.yaml,line=8::50%25 off: bad, really (1/2)" in result.stderr.splitlines()


def test_check_drift_is_annotated_on_the_first_changed_line(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "info")
    result = fnrun("run", "deploy", "--check", cwd=repo, env=GITHUB)
    assert result.code == 3, result
    # deploy.yaml gets its labels after line 4 (`  name: web  # keep me`)
    assert "::error file=deploy/app/deploy.yaml,line=5::fnrun run would change this file" in result.stderr.splitlines()


def test_other_ci_systems_get_plain_lines(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "warning")
    result = fnrun("run", "deploy", cwd=repo, env={"GITHUB_ACTIONS": "", "CI": "true", "GITLAB_CI": "true"})
    assert result.code == 0, result
    assert "::" not in result.stderr.replace("fnrun-test/", "")
    assert "  warning: 50% off: bad, really (1/2) (ConfigMap/first in checks/multi.yaml)" in result.stderr.splitlines()
