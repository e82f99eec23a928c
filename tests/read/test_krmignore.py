"""`.krmignore`: kpt's gitignore-style file excludes paths from reading (`source`, `run`) and
fnrun never writes or deletes an excluded file. kpt itself is the oracle where it is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.run import resourcelist
from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, load, snapshot, write_package


def _config_map(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}  # {name}'s comment\n"


def _kptfile(name: str) -> str:
    return f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"


# A package exercising what kpt 1.0.0-beta.56 does with .krmignore: gitignore syntax (comments,
# directories, negation, anchoring, globs), patterns relative to their own package root, a
# subpackage answering only to its own file, a parent excluding a subpackage's whole directory,
# and a .krmignore in a plain directory not read at all.
PACKAGE = {
    ".krmignore": "# generated and scratch files\nscratch/\nneg/*\n!neg/keep.yaml\n/top-only.yaml\n*.yml\ny.yaml\ngone-pkg/\nplain/deep/c.yaml\n",
    "a.yaml": _config_map("a"),
    "top-only.yaml": _config_map("top-only"),
    "scratch/s.yaml": _config_map("scratch"),
    "neg/x.yaml": _config_map("neg-x"),
    "neg/keep.yaml": _config_map("neg-keep"),
    "anchored/top-only.yaml": _config_map("anchored-top-only"),
    "list.yml": _config_map("yml"),
    "y.yaml": _config_map("root-y"),
    "plain/y.yaml": _config_map("plain-y"),  # unanchored: any depth of the root package
    "plain/deep/c.yaml": _config_map("plain-deep-c"),
    "plain/deep/c2.yaml": _config_map("plain-deep-c2"),
    "plain/deep/.krmignore": "c2.yaml\n",  # not a package root: not read
    "sub/Kptfile": _kptfile("sub"),
    "sub/y.yaml": _config_map("sub-y"),  # the root's `y.yaml` stops at the subpackage
    "sub/own.yaml": _config_map("sub-own"),
    "sub/.krmignore": "own.yaml\n",
    "gone-pkg/Kptfile": _kptfile("gone"),
    "gone-pkg/z.yaml": _config_map("gone-z"),
    "x/nested/Kptfile": _kptfile("nested"),
    "x/nested/p.yaml": _config_map("nested-p"),
    "x/nested/q.yaml": _config_map("nested-q"),
    "x/nested/.krmignore": "q.yaml\n",
}
READ = ["a.yaml", "anchored/top-only.yaml", "neg/keep.yaml", "plain/deep/c2.yaml", "sub/y.yaml", "x/nested/p.yaml"]


def _paths(listing: str) -> list[str]:
    return sorted(item.path for item in resourcelist.decode(listing, "listing").items if item.data.get("kind") != "Kptfile")


def test_source_leaves_out_what_krmignore_excludes(tmp_path: Path) -> None:
    write_package(tmp_path, PACKAGE)
    result = fnrun_here("source", str(tmp_path))
    assert result.code == 0, result
    assert _paths(result.stdout) == READ


@pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")
def test_source_reads_the_same_files_as_kpt(tmp_path: Path) -> None:
    write_package(tmp_path, PACKAGE)
    kpt = subprocess.run(["kpt", "fn", "source", str(tmp_path)], capture_output=True, text=True, check=True)
    assert _paths(fnrun_here("source", str(tmp_path)).stdout) == _paths(kpt.stdout)


@pytest.mark.engine
def test_run_neither_sends_nor_touches_excluded_files(tmp_path: Path) -> None:
    write_package(tmp_path, PACKAGE)
    before = snapshot(tmp_path)
    result = fnrun_here("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--", "env=prod")
    assert result.code == 0, result
    after = snapshot(tmp_path)
    read_kptfiles = ["sub/Kptfile", "x/nested/Kptfile"]  # an --image function gets the Kptfiles read too, as kpt fn eval's
    for rel in PACKAGE:
        if rel in READ + read_kptfiles:
            assert load(tmp_path / rel)["metadata"]["labels"] == {"env": "prod"}, rel
        else:
            assert after[rel] == before[rel], rel  # bytes and mtime


@pytest.mark.engine
def test_deleting_everything_keeps_excluded_files(tmp_path: Path) -> None:
    write_package(tmp_path, {".krmignore": "keep/\n", "a.yaml": _config_map("a"), "keep/k.yaml": _config_map("k")})
    result = fnrun_here("run", str(tmp_path), "--image", "fnrun-test/delete:v1", "--", "names=a,k")
    assert result.code == 0, result
    assert not (tmp_path / "a.yaml").exists()
    assert (tmp_path / "keep/k.yaml").read_text() == _config_map("k")


@pytest.mark.engine
def test_function_output_into_an_excluded_path_is_refused(tmp_path: Path) -> None:
    write_package(tmp_path, {".krmignore": "*_configmap.yaml\n", "a.yaml": _config_map("a"), "made_configmap.yaml": "# mine\n"})
    before = snapshot(tmp_path)
    result = fnrun_here("run", str(tmp_path), "--image", "fnrun-test/generate:v1", "--", "name=made")
    assert_one_line_error(result, "made_configmap.yaml", ".krmignore", code=1)
    assert snapshot(tmp_path) == before


def test_sink_keeps_excluded_files_and_refuses_to_write_them(tmp_path: Path) -> None:
    write_package(tmp_path, {".krmignore": "local/\n", "a.yaml": _config_map("a"), "local/l.yaml": _config_map("l")})
    listing = fnrun_here("source", str(tmp_path)).stdout
    assert _paths(listing) == ["a.yaml"]
    before = snapshot(tmp_path)
    assert fnrun_here("sink", str(tmp_path), stdin=listing).code == 0
    assert snapshot(tmp_path) == before  # local/l.yaml is not "missing from the input"
    into_excluded = listing.replace("'a.yaml'", "'local/l.yaml'")
    assert_one_line_error(fnrun_here("sink", str(tmp_path), stdin=into_excluded), "local/l.yaml", "excluded by .krmignore", code=2)
    assert snapshot(tmp_path) == before


def test_subpackage_krmignore_is_named_in_the_error(tmp_path: Path) -> None:
    write_package(tmp_path, {"sub/Kptfile": _kptfile("sub"), "sub/.krmignore": "out/\n", "sub/a.yaml": _config_map("a")})
    listing = fnrun_here("source", str(tmp_path)).stdout.replace("'sub/a.yaml'", "'sub/out/a.yaml'")
    assert_one_line_error(fnrun_here("sink", str(tmp_path), stdin=listing), "sub/out/a.yaml", "sub/.krmignore", code=2)


def test_invalid_pattern_is_a_one_line_error(tmp_path: Path) -> None:
    write_package(tmp_path, {".krmignore": "!\n", "a.yaml": _config_map("a")})
    assert_one_line_error(fnrun_here("source", str(tmp_path)), ".krmignore", code=2)
