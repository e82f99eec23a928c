"""The library page's example is code users copy: it must run as written and do what the page
says, against a real package (the set-labels sample, with a Kptfile whose pipeline labels it)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO

pytestmark = pytest.mark.usefixtures("test_images")
PAGE = REPO / "docs" / "reference" / "library.md"
KPTFILE = """apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: my-package
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
  - image: fnrun/set-labels:v1
    configMap:
      tier: backend
"""


def test_the_library_example_runs_as_written(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) == 1, "the page has one example; this test runs it"
    package = tmp_path / "my-package"
    shutil.copytree(REPO / "samples" / "set-labels", package, ignore=shutil.ignore_patterns("fn-config.yaml"))
    (package / "Kptfile").write_text(KPTFILE)
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "3 resources changed; ['api.yaml', 'reconcile.yaml'] written",
        "3 files would change: 2",  # --check: the pipeline's label would change both files
    ]
    assert "team: web" in (package / "api.yaml").read_text()
    assert "tier: backend" not in (package / "api.yaml").read_text()  # the check wrote nothing


def test_the_library_example_does_not_take_a_failure_for_drift(tmp_path: Path) -> None:
    """A package the render refuses (no Kptfile: exit 2) is reported as a failure, not as files
    that would change; a package already rendered is "up to date"."""
    example = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)[0]
    package = tmp_path / "my-package"
    shutil.copytree(REPO / "samples" / "set-labels", package, ignore=shutil.ignore_patterns("fn-config.yaml"))
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("2 failed: ") and "Kptfile" in last, done.stdout
    (package / "Kptfile").write_text(KPTFILE.replace("tier: backend", "team: web"))  # what the example's run sets
    subprocess.run([sys.executable, "-m", "orchestrator", "render", str(package)], capture_output=True, timeout=300, check=True)
    again = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.stdout.splitlines()[-1] == "up to date", again.stdout
