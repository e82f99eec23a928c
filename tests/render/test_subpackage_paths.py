"""A subpackage's step sees paths relative to its package and what it creates stays there; a new
resource without a path goes to its function config's directory. Checked against kpt itself when
it is installed (exec functions, so no image is needed)."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from testing.in_process import fnrun_here
from testing.pipeline_helpers import as_data, write_package

KPT = shutil.which("kpt")

# Adds a ConfigMap named by its config (at the config's `path`, or without a path) unless one of
# that name is among its items; with `record: "yes"` its data lists the paths it was handed.
FUNCTION = '''
import sys
from ruamel.yaml import YAML
yaml = YAML(typ="safe", pure=True)
rl = yaml.load(sys.stdin)
cfg = rl.get("functionConfig") or {}
data = cfg.get("data") or {}
items = rl.get("items") or []
def path(o):
    return ((o.get("metadata") or {}).get("annotations") or {}).get("config.kubernetes.io/path", "")
if not any((i.get("metadata") or {}).get("name") == data["name"] for i in items):
    meta = {"name": data["name"]}
    if data.get("path"):
        meta["annotations"] = {"config.kubernetes.io/path": data["path"]}
    made = {"config": path(cfg)}
    if data.get("record") == "yes":
        made["seen"] = ",".join(sorted(path(i) for i in items))
    items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": made})
rl["items"] = items
yaml.dump(rl, sys.stdout)
'''


def _files(function: Path, case: str) -> dict[str, str]:
    """`chained`: two steps of sub/ add the same item at generated/cm.yaml (the second must find
    it); `configpath`: a step of sub/ with `configPath: cfgdir/fn-1.yaml` adds one without a path."""
    add = f"- exec: {function}\n  configMap: {{name: made, path: generated/cm.yaml, record: 'yes'}}\n"
    steps = add * 2 if case == "chained" else f"- exec: {function}\n  configPath: cfgdir/fn-1.yaml\n"
    return {
        "Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\n",
        "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
        "sub/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\npipeline:\n  mutators:\n"
        + "".join("  " + line + "\n" for line in steps.splitlines()),
        "sub/b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n",
        "sub/cfgdir/fn-1.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-1\n  annotations:\n"
        "    config.kubernetes.io/local-config: 'true'\ndata:\n  name: pathless\n",
    }


def _package(tmp_path: Path, case: str) -> tuple[Path, dict[str, str]]:
    function = tmp_path / "fn.py"
    function.write_text(f"#!{sys.executable}\n{FUNCTION}")
    function.chmod(0o755)
    files = _files(function, case)
    return write_package(tmp_path / "fnrun" / "pkg", files), files


def _load(path: Path) -> dict:
    return YAML(typ="safe", pure=True).load(io.StringIO(path.read_text()))


def test_subpackage_items_are_package_relative_and_new_ones_stay_and_chain(tmp_path: Path) -> None:
    root, _ = _package(tmp_path, "chained")
    result = fnrun_here("render", str(root), "--allow-exec", "--no-status", "-q")
    assert result.code == 0, result.stderr
    # made once: the second step found it among its items, at a path relative to sub/
    assert _load(root / "sub" / "generated" / "cm.yaml")["data"] == {"config": "", "seen": "Kptfile,b.yaml,cfgdir/fn-1.yaml"}
    assert not (root / "generated").exists()


def test_pathless_new_resource_goes_to_its_configs_directory(tmp_path: Path) -> None:
    root, _ = _package(tmp_path, "configpath")
    result = fnrun_here("render", str(root), "--allow-exec", "--no-status", "-q")
    assert result.code == 0, result.stderr
    # the config, too, is handed with its path relative to sub/
    assert _load(root / "sub" / "cfgdir" / "configmap_pathless.yaml")["data"] == {"config": "cfgdir/fn-1.yaml"}
    assert sorted(p.name for p in (root / "sub").iterdir()) == ["Kptfile", "b.yaml", "cfgdir"]


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
@pytest.mark.parametrize("case", ["chained", "configpath"])
def test_subpackage_paths_as_kpt(tmp_path: Path, case: str) -> None:
    root, files = _package(tmp_path, case)
    kpt_root = write_package(tmp_path / "kpt" / "pkg", files)
    assert KPT is not None
    by_kpt = subprocess.run([KPT, "fn", "render", str(kpt_root), "--allow-exec"], capture_output=True, text=True, timeout=300)
    assert by_kpt.returncode == 0, by_kpt.stderr
    result = fnrun_here("render", str(root), "--allow-exec", "--no-status", "-q")
    assert result.code == 0, result.stderr
    assert as_data(root) == as_data(kpt_root)
