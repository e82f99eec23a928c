"""`fnrun run DIR --shard I/N`: each shard runs the declared functions of a
disjoint, deterministic share of DIR's kpt packages; all shards together equal a full run."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_render_shard import changed

from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, function_config, snapshot, write_package

LABEL = "fnrun-test/label:v1"


def repository(root: Path) -> Path:
    files: dict[str, str] = {}
    for number, name in enumerate(["alpha", "beta", "gamma", "delta"]):
        files[f"{name}/Kptfile"] = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
        files[f"{name}/fn.yaml"] = function_config(LABEL, {"package": name}, name=f"fn-{name}")
        for item in range(number + 1):
            files[f"{name}/cm{item}.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{item}\n"
    files["alpha/nested/Kptfile"] = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nested\n"
    files["alpha/nested/fn.yaml"] = function_config(LABEL, {"nested": "yes"}, name="fn-nested")
    files["alpha/nested/n.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n"
    return write_package(root, files)


def test_run_shards_are_disjoint_and_together_a_full_run(tmp_path: Path, test_images: None) -> None:
    template = repository(tmp_path / "repo")
    pristine = snapshot(template)
    full = tmp_path / "full"
    shutil.copytree(template, full)
    assert fnrun_here("run", str(full)).code == 0
    seen: set[str] = set()
    together = tmp_path / "together"
    shutil.copytree(template, together)
    for index in (1, 2, 3):
        alone = tmp_path / f"shard{index}"
        shutil.copytree(template, alone)
        result = fnrun_here("run", str(alone), "--shard", f"{index}/3")
        assert result.code == 0, result.stderr
        mine = changed(pristine, snapshot(alone))
        assert not mine & seen  # disjoint
        seen |= mine
        assert fnrun_here("run", str(together), "--shard", f"{index}/3").code == 0
    assert seen == changed(pristine, snapshot(full))
    assert {p: v[0] for p, v in snapshot(together).items()} == {p: v[0] for p, v in snapshot(full).items()}


def test_a_function_outside_every_package_cannot_be_sharded(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo")
    write_package(root, {"common/fn.yaml": function_config(LABEL, {"x": "y"}, name="loose")})
    assert_one_line_error(fnrun_here("run", str(root), "--shard", "1/2"), "common/fn.yaml", "outside every kpt package", code=2)
    assert_one_line_error(fnrun_here("run", str(root), "--shard", "1/2", "--image", LABEL), "--shard", code=2)
    assert_one_line_error(fnrun_here("run", "-", "--shard", "1/2", stdin="items: []\n"), "--shard", code=2)
