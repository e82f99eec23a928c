"""`fnrun render --shard I/N` over a repository of kpt packages: each shard renders a disjoint,
deterministic share of the top-level packages, and all shards together equal a full render."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.select import shard
from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, snapshot, write_package


def repository(root: Path) -> Path:
    files: dict[str, str] = {}
    for number, name in enumerate(["alpha", "beta", "gamma", "delta", "epsilon"]):
        files[f"{name}/Kptfile"] = (
            f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n"
            f"  - image: fnrun/set-labels:v1\n    configMap:\n      package: {name}\n    exclude:\n    - kind: Kptfile\n"
        )
        for item in range(number + 1):  # packages of different sizes
            files[f"{name}/cm{item}.yaml"] = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-{item}\n"
    files["alpha/nested/Kptfile"] = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nested\n"
    files["alpha/nested/n.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nested\n"
    return write_package(root, files)


def changed(before: dict, after: dict) -> set[str]:
    return {path for path in after if before.get(path, (None,))[0] != after[path][0]}


def test_shards_are_disjoint_and_their_union_is_a_full_render(tmp_path: Path, test_images: None) -> None:
    template = repository(tmp_path / "repo")
    pristine = snapshot(template)
    full = tmp_path / "full"
    shutil.copytree(template, full)
    assert fnrun_here("render", str(full)).code == 0
    full_changes = changed(pristine, snapshot(full))
    assert len(full_changes) == 1 + 2 + 3 + 4 + 5 + 1  # every resource file, alpha/nested's too

    together = tmp_path / "together"
    shutil.copytree(template, together)
    seen: list[set[str]] = []
    for index in (1, 2, 3):
        alone = tmp_path / f"shard{index}"
        shutil.copytree(template, alone)
        result = fnrun_here("render", str(alone), "--shard", f"{index}/3")
        assert result.code == 0, result.stderr
        seen.append(changed(pristine, snapshot(alone)))
        assert fnrun_here("render", str(together), "--shard", f"{index}/3").code == 0
    assert all(seen)  # five packages over three shards: none idle
    assert sum(len(s) for s in seen) == len(set().union(*seen))  # disjoint
    assert set().union(*seen) == full_changes
    assert {p: c for p, (c, _) in snapshot(together).items()} == {p: c for p, (c, _) in snapshot(full).items()}


def test_a_share_is_deterministic_and_balanced_by_files() -> None:
    tops = ["a", "b", "c", "d", "e", "f"]
    weights = {"a": 10, "b": 1, "c": 1, "d": 5, "e": 4, "f": 1}
    shares = [shard.share(tops, weights, index, 3) for index in (1, 2, 3)]
    assert shares == [shard.share(list(reversed(tops)), weights, index, 3) for index in (1, 2, 3)]
    assert set().union(*shares) == set(tops) and sum(map(len, shares)) == len(tops)
    loads = sorted(sum(weights[t] for t in s) for s in shares)
    assert loads == [6, 6, 10]  # largest first, each to the lightest shard
    assert shard.top_level(["", "x", "x/y"]) == [""]
    assert shard.top_level(["a", "a/b", "c"]) == ["a", "c"]


@pytest.mark.parametrize("value", ["0/3", "4/3", "1", "a/b", "1/0"])
def test_a_bad_shard_is_one_line(value: str, tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    before = snapshot(repo)
    assert_one_line_error(fnrun_here("render", str(repo), "--shard", value), "--shard", code=2)
    assert snapshot(repo) == before
