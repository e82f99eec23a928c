"""`fnrun run DIR -i IMAGE --fn-config FILE` with FILE one of the package's files: the file is the
functionConfig and one of the items too, as kpt fn eval hands it over, so a function that
namespaces every resource namespaces its own config file as well. Side by side with the installed
kpt: in place, under selectors, from a subdirectory, on stdout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import fnrun, snapshot, write_package

pytestmark = pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")

IMAGE = "fnrun/set-namespace:v1"
CONFIG = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\ndata:\n  namespace: staging\n"
RESOURCES = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n---\n"
    "apiVersion: custom.io/v1\nkind: Custom\nmetadata:\n  name: custom\n"
)
_OURS = ("config.kubernetes.io/", "internal.config.kubernetes.io/")


def _plain(doc: dict) -> dict:
    """A resource without the path/index annotations (kpt and fnrun spell them in another order)."""
    meta = doc.get("metadata") or {}
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith(_OURS)}
    meta = {k: v for k, v in meta.items() if k != "annotations"} | ({"annotations": notes} if notes else {})
    return {**doc, "metadata": meta}


def _files(root: Path) -> dict[str, list]:
    return {p.relative_to(root).as_posix(): fast.load_all(p.read_text(), p.name) for p in sorted(root.rglob("*.yaml"))}


def _both(tmp_path: Path, config_at: str, *flags: str) -> tuple[Path, Path, subprocess.CompletedProcess, object]:
    files = {config_at: CONFIG, "resources.yaml": RESOURCES}
    ours, theirs = write_package(tmp_path / "ours", files), write_package(tmp_path / "theirs", files)
    kpt = subprocess.run(["kpt", "fn", "eval", str(theirs), "--image", IMAGE, "--image-pull-policy", "never", "--fn-config", str(theirs / config_at), *flags],
                         capture_output=True, text=True)
    assert kpt.returncode == 0, kpt.stderr
    result = fnrun("run", str(ours), "--image", IMAGE, "--image-pull-policy", "never", "--fn-config", str(ours / config_at), *flags)
    assert result.code == 0, result
    return ours, theirs, kpt, result


@pytest.mark.engine
@pytest.mark.parametrize(("config_at", "flags", "namespaced"), [
    ("config.yaml", (), {"config.yaml", "resources.yaml"}),
    ("fns/config.yaml", (), {"fns/config.yaml", "resources.yaml"}),
    ("config.yaml", ("--match-kind", "Deployment"), {"resources.yaml"}),
    ("config.yaml", ("--match-name", "config"), {"config.yaml"}),
    ("config.yaml", ("--exclude-kind", "ConfigMap"), {"resources.yaml"}),
])
def test_the_package_s_own_config_file_is_changed_as_kpt_changes_it(tmp_path: Path, config_at: str, flags: tuple[str, ...], namespaced: set[str]) -> None:
    ours, theirs, _, _ = _both(tmp_path, config_at, *flags)
    mine, kpts = _files(ours), _files(theirs)
    assert mine == kpts
    changed = {path for path, docs in mine.items() if any(d["metadata"].get("namespace") == "staging" for d in docs)}
    assert changed == namespaced


@pytest.mark.engine
def test_on_stdout_the_config_is_among_the_items_as_in_kpt(tmp_path: Path) -> None:
    ours, theirs, kpt, result = _both(tmp_path, "config.yaml", "-o", "stdout")
    mine, kpts = fast.load(result.stdout, "fnrun")["items"], fast.load(kpt.stdout, "kpt")["items"]
    assert [_plain(d) for d in mine] == [_plain(d) for d in kpts]
    assert mine[0]["metadata"]["name"] == "config" and mine[0]["metadata"]["namespace"] == "staging"
    assert _files(ours) == _files(theirs)  # neither wrote the package


@pytest.mark.engine
def test_fn_config_only_keeps_the_file_the_config_alone(tmp_path: Path) -> None:
    """kpt after 1.0.0-beta.56 keeps such a file out of the items; --fn-config-only asks for that."""
    root = write_package(tmp_path / "pkg", {"config.yaml": CONFIG, "resources.yaml": RESOURCES})
    before = snapshot(root)["config.yaml"]
    result = fnrun("run", str(root), "--image", IMAGE, "--image-pull-policy", "never", "--fn-config", str(root / "config.yaml"), "--fn-config-only")
    assert result.code == 0, result
    assert snapshot(root)["config.yaml"] == before
    assert all(d["metadata"]["namespace"] == "staging" for d in _files(root)["resources.yaml"])
