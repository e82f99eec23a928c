"""`fnrun run --match-*/--exclude-*`: the function sees only the selected resources, the others
pass through untouched — as `kpt fn eval` selects (compared with kpt as data where installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.read.package import parse_stream
from orchestrator.run import resourcelist
from testing.pipeline_helpers import assert_one_line_error, fnrun, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")

PACKAGE = {
    "web.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web  # the front end
  labels:
    app: web
    tier: front
  annotations:
    team: a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  namespace: default
  labels:
    app: web
""",
    "db/db.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  namespace: data
  labels:
    app: db
""",
    "svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n",
}
ALL = ["Deployment/web", "ConfigMap/web", "Deployment/db", "Service/svc"]

# flags → the resources the function is sent (what kpt 1.0.0-beta.56 sends)
CASES: dict[str, tuple[tuple[str, ...], list[str]]] = {
    "kind": (("--match-kind", "Deployment"), ["Deployment/web", "Deployment/db"]),
    "label": (("--match-labels", "app=web"), ["Deployment/web", "ConfigMap/web"]),
    "labels-all-hold": (("--match-labels", "app=web", "--match-labels", "tier=front"), ["Deployment/web"]),
    "comma-is-part-of-the-value": (("--match-labels", "app=web,tier=front"), []),
    "excludes-all-hold": (("--exclude-kind", "Deployment", "--exclude-name", "web"), ["ConfigMap/web", "Deployment/db", "Service/svc"]),
    "namespace-exact": (("--match-namespace", "default"), ["ConfigMap/web"]),
    "match-and-exclude": (("--match-name", "web", "--exclude-kind", "ConfigMap"), ["Deployment/web"]),
    "annotation": (("--match-annotations", "team=a"), ["Deployment/web"]),
    "api-version": (("--match-api-version", "v1"), ["ConfigMap/web", "Service/svc"]),
    "last-single-flag-wins": (("--match-kind", "Deployment", "--match-kind", "ConfigMap"), ["ConfigMap/web"]),
    "exclude-labels": (("--exclude-labels", "app=web", "--exclude-labels", "tier=front"), ["ConfigMap/web", "Deployment/db", "Service/svc"]),
}


def _resources(root: Path) -> dict[str, dict]:
    """Every resource of the package by KIND/NAME, as data."""
    found = {}
    for path in sorted(root.rglob("*.yaml")):
        for resource in parse_stream(path.read_text(), str(path)):
            found[_key(resource.data)] = resource.data
    return found


def _key(data: dict) -> str:
    return f"{data['kind']}/{data['metadata']['name']}"


def _labelled(root: Path) -> list[str]:
    return [key for key, data in _resources(root).items() if (data["metadata"].get("labels") or {}).get("selected") == "yes"]


@pytest.mark.parametrize("case", CASES)
def test_only_selected_resources_reach_the_function(tmp_path: Path, case: str) -> None:
    flags, expected = CASES[case]
    root = write_package(tmp_path, PACKAGE)
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", "fnrun-test/label:v1", *flags, "--", "selected=yes")
    assert result.code == 0, result
    assert sorted(_labelled(root)) == sorted(expected)
    after = snapshot(root)
    for rel in PACKAGE:  # a file whose resources were all left out keeps its bytes and mtime
        if not any(key in expected for key in _keys_in(PACKAGE[rel])):
            assert after[rel] == before[rel], rel


def _keys_in(content: str) -> list[str]:
    return [_key(r.data) for r in parse_stream(content, "package")]


@pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")
@pytest.mark.parametrize("case", CASES)
def test_selection_agrees_with_kpt_fn_eval(tmp_path: Path, case: str) -> None:
    flags, _expected = CASES[case]
    ours, theirs = write_package(tmp_path / "ours", PACKAGE), write_package(tmp_path / "theirs", PACKAGE)
    assert fnrun("run", str(ours), "--image", "fnrun-test/label:v1", *flags, "--", "selected=yes").code == 0
    subprocess.run(
        ["kpt", "fn", "eval", str(theirs), "--image", "fnrun-test/label:v1", "--image-pull-policy", "never", *flags, "--", "selected=yes"],
        check=True, capture_output=True,
    )
    assert _resources(ours) == _resources(theirs)


@pytest.mark.parametrize(
    "image, flags, args",
    [
        ("fnrun-test/delete:v1", ("--match-kind", "ConfigMap"), ("names=web",)),  # only the selected `web` goes
        ("fnrun-test/generate:v1", ("--match-kind", "Service"), ("name=made",)),  # new resources join the package
    ],
)
def test_deletions_and_additions_follow_kpt(tmp_path: Path, image: str, flags: tuple[str, ...], args: tuple[str, ...]) -> None:
    root = write_package(tmp_path / "ours", PACKAGE)
    assert fnrun("run", str(root), "--image", image, *flags, "--", *args).code == 0
    got = _resources(root)
    if image.endswith("delete:v1"):
        assert "Deployment/web" in got and "ConfigMap/web" not in got
    else:
        assert got["ConfigMap/made"]["data"] == {"generatedBy": "fnrun-test/generate"} and set(ALL) <= set(got)
    if shutil.which("kpt") is not None:
        theirs = write_package(tmp_path / "theirs", PACKAGE)
        subprocess.run(["kpt", "fn", "eval", str(theirs), "--image", image, "--image-pull-policy", "never", *flags, "--", *args], check=True, capture_output=True)
        assert got == _resources(theirs)


def test_stdin_run_selects_too(tmp_path: Path) -> None:
    root = write_package(tmp_path, PACKAGE)
    listing = fnrun("source", str(root)).stdout
    result = fnrun("run", "-", "--image", "fnrun-test/label:v1", "--match-kind", "Service", "--", "selected=yes", stdin=listing)
    assert result.code == 0, result
    items = resourcelist.decode(result.stdout, "out").items
    assert [_key(i.data) for i in items if (i.data["metadata"].get("labels") or {}).get("selected")] == ["Service/svc"]
    assert len(items) == 4


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--image", "fnrun-test/label:v1", "--match-labels", "app"), "--match-labels"),
        (("--image", "fnrun-test/label:v1", "--exclude-annotations", "=x"), "--exclude-annotations"),
        (("--match-kind", "Deployment"), "--image"),
    ],
)
def test_bad_selection_is_a_one_line_error(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    root = write_package(tmp_path, PACKAGE)
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), *args), needle, code=2)
    assert snapshot(root) == before
