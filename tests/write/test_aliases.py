"""YAML aliases through catalog functions and the write-back, with real files through the CLI.

Where a file writes `labels: &labels` and `matchLabels: *labels`, one value sits in two places. A
catalog function changes only the places it means to (set-labels leaves selectors and
nodeSelectors alone), never another place through the alias; the write-back writes the values the
function returned, keeping an alias whose places still agree and writing out the value where they
now differ. fnrun's own catalog runs as its image (`--no-builtin`) and in-process; kpt's catalog
builtins with `--builtin-catalog`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testing.pipeline_helpers import fnrun, load

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: pinned
  labels: &labels # the pods' labels
    app: pinned
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      nodeSelector: *labels
      containers:
      - name: app
        image: nginx
        resources:
          limits: &limits
            cpu: 200m
          requests: *limits
"""
NOTES = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
  annotations: &notes
    owner: web
data: *notes
"""
SIZED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: sized
  annotations:
    fnrun.dev/tshirt-size: medium
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        resources:
          limits: &limits
            cpu: 200m
          requests: *limits
"""
WAYS = {"image": (["--no-builtin", "--no-cache"], {}), "builtin": ([], {"FNRUN_BUILTIN": "1"})}


def package(tmp_path: Path, **files: str) -> Path:
    root = tmp_path / "pkg"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for name, text in files.items():
        (root / f"{name}.yaml").write_text(text)
    return root


def run(root: Path, image: str, *args: str, env: dict[str, str] | None = None) -> None:
    result = fnrun("run", str(root), "--image", image, *args, env=env)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("way", sorted(WAYS))
def test_set_labels_leaves_selectors_reached_through_an_alias_alone(tmp_path: Path, catalog_images: tuple[str, ...], way: str) -> None:
    flags, env = WAYS[way]
    root = package(tmp_path, workload=WORKLOAD, notes=NOTES)
    run(root, "fnrun/set-labels:v1", *flags, "--", "color=blue", env=env)
    # metadata.labels and the pod template's labels agree: still one anchor and its alias; the
    # selector and the nodeSelector keep the old value, written out; untouched anchors stay.
    assert (root / "workload.yaml").read_text() == WORKLOAD.replace(
        "    app: pinned\nspec:", "    app: pinned\n    color: blue\nspec:").replace(
        "    matchLabels: *labels\n", "    matchLabels:\n      app: pinned\n").replace(
        "      nodeSelector: *labels\n", "      nodeSelector:\n        app: pinned\n")
    assert (root / "notes.yaml").read_text() == NOTES.replace("data: *notes", "  labels:\n    color: blue\ndata: *notes")


@pytest.mark.parametrize("way", sorted(WAYS))
def test_tshirt_size_writes_out_requests_that_no_longer_equal_limits(tmp_path: Path, catalog_images: tuple[str, ...], way: str) -> None:
    flags, env = WAYS[way]
    root = package(tmp_path, sized=SIZED, workload=WORKLOAD)
    run(root, "fnrun/tshirt-size:v1", *flags, env=env)
    assert (root / "sized.yaml").read_text() == SIZED.replace(
        "            cpu: 200m\n          requests: *limits\n",
        "            cpu: 500m\n            memory: 1Gi\n          requests:\n            cpu: 250m\n            memory: 512Mi\n")
    assert (root / "workload.yaml").read_text() == WORKLOAD  # no size asked for: not a byte changes


def test_kpt_set_labels_changes_selectors_too_and_keeps_the_alias_there(tmp_path: Path) -> None:
    """kpt's set-labels does label selectors (and pod templates), so those places still agree with
    the anchor; a nodeSelector it does not touch gets the old value written out."""
    root = package(tmp_path, workload=WORKLOAD, notes=NOTES)
    run(root, "gcr.io/kpt-fn/set-labels:v0.1", "--builtin-catalog", "--", "color=blue")
    assert (root / "workload.yaml").read_text() == WORKLOAD.replace(
        "    app: pinned\nspec:", "    app: pinned\n    color: blue\nspec:").replace(
        "      nodeSelector: *labels\n", "      nodeSelector:\n        app: pinned\n")
    data = load(root / "notes.yaml")
    assert data["data"] == {"owner": "web"} and data["metadata"]["labels"] == {"color": "blue"}


def test_kpt_set_annotations_leaves_data_that_aliases_the_annotations_alone(tmp_path: Path) -> None:
    root = package(tmp_path, workload=WORKLOAD, notes=NOTES)
    run(root, "gcr.io/kpt-fn/set-annotations:v0.1", "--builtin-catalog", "--", "color=blue")
    assert (root / "notes.yaml").read_text() == NOTES.replace("    owner: web\ndata: *notes", "    owner: web\n    color: blue\ndata:\n  owner: web")
    data = load(root / "workload.yaml")
    assert data["spec"]["selector"]["matchLabels"] == {"app": "pinned"} == data["spec"]["template"]["spec"]["nodeSelector"]


@pytest.mark.parametrize("properties", ["&notes", "!!map &notes"])
def test_fnrun_never_stamps_its_annotations_through_an_alias(tmp_path: Path, properties: str) -> None:
    """fnrun's own path annotations go into an item's text; where `annotations:` is an anchor,
    lines written into it would show up in `data: *notes` for every function."""
    root = package(tmp_path, notes=NOTES.replace("&notes", properties))
    result = fnrun("source", str(root))
    assert result.code == 0, result.stderr
    items = __import__("yaml").safe_load(result.stdout)["items"]
    assert items[0]["data"] == {"owner": "web"}
    assert items[0]["metadata"]["annotations"]["config.kubernetes.io/path"] == "notes.yaml"


@pytest.mark.parametrize("way", sorted(WAYS))
def test_set_namespace_through_a_scalar_alias(tmp_path: Path, catalog_images: tuple[str, ...], way: str) -> None:
    flags, env = WAYS[way]
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: where\n  namespace: &ns old\ndata:\n  home: *ns\n"
    root = package(tmp_path, where=text)
    run(root, "fnrun/set-namespace:v1", *flags, "--", "namespace=zzz", env=env)
    data = load(root / "where.yaml")
    assert data["metadata"]["namespace"] == "zzz" and data["data"] == {"home": "old"}
