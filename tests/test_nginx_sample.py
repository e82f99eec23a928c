"""samples/nginx end to end: `fnrun run` on a copy of the sample, through the real
fnrun/nginx-template:v1 image (functions/nginx-template.sh wrapped by `fnrun wrap`), writes the
walkthrough's Deployment and Service, changes nothing on a second run, and reconciles an edit to
the Nginx resource as a one-line change that keeps the user's own edits."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.pipeline_helpers import REPO, fnrun, snapshot

pytestmark = pytest.mark.engine  # the walkthrough's image is built and run

SAMPLE = REPO / "samples" / "nginx"
GOLDEN = REPO / "tests" / "fixtures" / "nginx"
IMAGE = "fnrun/nginx-template:v1"
DEPLOYMENT, SERVICE = "my-instance_deployment.yaml", "my-instance_service.yaml"

LABELS = {"app": "nginx", "instance": "my-instance"}
# The walkthrough's expected outputs (functions-docs-godoc.txt, FunctionsImplLong), as values.
WALKTHROUGH = {
    DEPLOYMENT: {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "my-instance", "labels": LABELS},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.7.9", "ports": [{"containerPort": 80}]}]},
            },
        },
    },
    SERVICE: {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "my-instance", "labels": LABELS},
        "spec": {"ports": [{"port": 80, "targetPort": 80, "name": "http"}], "selector": LABELS},
    },
}


@pytest.fixture(scope="session")
def nginx_image() -> str:
    """The image, built from this checkout (a no-op when it is up to date)."""
    proc = subprocess.run(
        [sys.executable, "scripts/build_images.py", "--only", "nginx-template"], cwd=REPO, capture_output=True, text=True, timeout=1200
    )
    if proc.returncode != 0:
        pytest.fail(f"building {IMAGE} failed (scripts/build_images.py --only nginx-template):\n{proc.stdout}{proc.stderr}")
    return IMAGE


@pytest.fixture
def package(tmp_path: Path, nginx_image: str) -> Path:
    root = tmp_path / "nginx"
    shutil.copytree(SAMPLE, root)
    return root


def run(package: Path) -> None:
    result = fnrun("run", str(package))
    assert result.code == 0, result
    assert "Traceback" not in result.stderr


def test_the_sample_declares_the_walkthrough_resource() -> None:
    nginx = yaml.safe_load((SAMPLE / "nginx.yaml").read_text())
    assert nginx["apiVersion"] == "example.com/v1beta1" and nginx["kind"] == "Nginx"
    assert nginx["metadata"]["name"] == "my-instance" and nginx["spec"] == {"replicas": 5}
    annotations = nginx["metadata"]["annotations"]
    assert annotations["config.kubernetes.io/local-config"] == "true"
    assert yaml.safe_load(annotations["config.kubernetes.io/function"]) == {"container": {"image": IMAGE}}


def test_first_run_writes_the_walkthroughs_deployment_and_service(package: Path) -> None:
    nginx_before = (package / "nginx.yaml").read_bytes()
    run(package)
    assert sorted(p.name for p in package.iterdir()) == ["README.md", DEPLOYMENT, SERVICE, "nginx.yaml"]
    for name, expected in WALKTHROUGH.items():
        written = (package / name).read_bytes()
        assert yaml.safe_load(written) == expected, name
        assert written == (GOLDEN / name).read_bytes(), name
    assert (package / "nginx.yaml").read_bytes() == nginx_before


def test_a_second_run_changes_nothing(package: Path) -> None:
    run(package)
    before = snapshot(package)
    run(package)
    assert snapshot(package) == before  # bytes and mtimes


def test_editing_replicas_changes_exactly_that_line_of_the_deployment(package: Path) -> None:
    run(package)
    before = snapshot(package)
    nginx = package / "nginx.yaml"
    nginx.write_text(nginx.read_text().replace("replicas: 5", "replicas: 3"))
    run(package)
    old, new = before[DEPLOYMENT][0].decode().splitlines(), (package / DEPLOYMENT).read_text().splitlines()
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    assert len(old) == len(new) and changed == [("  replicas: 5", "  replicas: 3")]
    assert snapshot(package)[SERVICE] == before[SERVICE]


def test_the_users_own_edits_to_generated_files_survive(package: Path) -> None:
    run(package)
    deployment = package / DEPLOYMENT
    edited = deployment.read_text().replace("spec:\n  replicas: 5\n", "spec:\n  # scaled by nginx.yaml\n  replicas: 5\n  minReadySeconds: 10\n")
    deployment.write_text(edited)
    run(package)
    assert deployment.read_text() == edited
    nginx = package / "nginx.yaml"
    nginx.write_text(nginx.read_text().replace("replicas: 5", "replicas: 2"))
    run(package)
    assert deployment.read_text() == edited.replace("replicas: 5", "replicas: 2")


def test_a_deleted_generated_file_comes_back(package: Path) -> None:
    run(package)
    (package / SERVICE).unlink()
    deployment = snapshot(package)[DEPLOYMENT]
    run(package)
    assert (package / SERVICE).read_bytes() == (GOLDEN / SERVICE).read_bytes()
    assert snapshot(package)[DEPLOYMENT] == deployment


def test_a_bad_value_is_the_templates_one_line_error_and_nothing_is_written(package: Path) -> None:
    nginx = package / "nginx.yaml"
    nginx.write_text(nginx.read_text().replace("replicas: 5", "replicas: lots"))
    before = snapshot(package)
    result = fnrun("run", str(package))
    assert result.code == 1, result
    assert "nginx-template: spec.replicas must be a whole number, got 'lots'" in result.stderr
    assert "nginx-template.sh exited with code 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(package) == before
