"""A kpt user's command words lead to fnrun's: `fnrun eval` and `fnrun fn render` answer with the
command to type (their own arguments kept, quoted for a shell), and kpt's deprecated
`--include-meta-resources` does nothing but say so. Through the real CLI."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from testing.io_helpers import REPO, fnrun_here

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "cm.yaml").write_text(CONFIGMAP)
    return root


@pytest.mark.parametrize(
    ("typed", "instead"),
    [
        (["eval", "{root}", "-i", "set-namespace:v0.4", "--", "namespace=a b"], ["run", "{root}", "-i", "set-namespace:v0.4", "--", "namespace=a b"]),
        (["fn", "eval", "{root}", "--image", "x"], ["run", "{root}", "--image", "x"]),
        (["fn", "render", "{root}"], ["render", "{root}"]),
        (["fn", "source", "{root}"], ["source", "{root}"]),
    ],
)
def test_kpt_command_words_name_the_command_to_type(tmp_path: Path, typed: list[str], instead: list[str]) -> None:
    root = _package(tmp_path)
    result = fnrun_here(*[word.format(root=root) for word in typed])
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    suggested = lines[0].rsplit(": ", 1)[1]
    assert shlex.split(suggested) == ["fnrun", *[word.format(root=root) for word in instead]]
    assert (root / "cm.yaml").read_text() == CONFIGMAP


@pytest.mark.engine
def test_the_suggested_eval_command_runs(tmp_path: Path) -> None:
    root = _package(tmp_path)
    hint = fnrun_here("eval", str(root), "-i", "fnrun/set-namespace:v1", "--", "namespace=prod").stderr.decode()
    words = shlex.split(hint.strip().rsplit(": ", 1)[1])
    result = fnrun_here(*words[1:])
    assert result.returncode == 0, result.stderr
    assert "namespace: prod" in (root / "cm.yaml").read_text()


@pytest.mark.engine
def test_include_meta_resources_is_a_noted_no_op(tmp_path: Path) -> None:
    root = _package(tmp_path)
    (root / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    for name in ("cm.yaml", "Kptfile"):
        (plain / name).write_bytes((root / name).read_bytes())
    with_flag = fnrun_here("run", str(root), "-i", "fnrun/set-namespace:v1", "--include-meta-resources", "--", "namespace=prod")
    without = fnrun_here("run", str(plain), "-i", "fnrun/set-namespace:v1", "--", "namespace=prod")
    assert with_flag.returncode == 0 == without.returncode, with_flag.stderr
    notes = [line for line in with_flag.stderr.decode().splitlines() if "--include-meta-resources" in line]
    assert notes == ["fnrun: note: --include-meta-resources does nothing: the Kptfile and kustomization files are items already"]
    for name in ("cm.yaml", "Kptfile"):
        assert (root / name).read_bytes() == (plain / name).read_bytes()
    assert "namespace: prod" in (root / "cm.yaml").read_text()


def test_an_unknown_word_is_still_click_s_own_error(tmp_path: Path) -> None:
    result = fnrun_here("evaluate")
    assert result.returncode == 2
    assert "No such command 'evaluate'" in result.stderr.decode()


def test_source_fn_config_hands_a_function_its_config_through_a_pipe(tmp_path: Path) -> None:
    """kpt's `fn source --fn-config FILE | FUNCTION | fn sink`: the list carries FILE's resource
    as functionConfig (comments kept), and a function reading it changes the package."""
    root = _package(tmp_path)
    config = tmp_path / "labels.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels # for set-labels\ndata:\n  team: web\n")
    listed = fnrun_here("source", str(root), "--fn-config", str(config))
    assert listed.returncode == 0, listed.stderr
    text = listed.stdout.decode()
    assert text.endswith("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: labels # for set-labels\n  data:\n    team: web\n")
    changed = subprocess.run([sys.executable, "-m", "functions.set_labels"], input=listed.stdout, capture_output=True, cwd=REPO, timeout=60)
    assert changed.returncode == 0, changed.stderr
    assert fnrun_here("sink", str(root), stdin=changed.stdout).returncode == 0
    assert (root / "cm.yaml").read_text() == CONFIGMAP + "  labels:\n    team: web\n"


@pytest.mark.parametrize("content", [None, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"])
def test_source_with_a_bad_fn_config_prints_nothing(tmp_path: Path, content: str | None) -> None:
    root = _package(tmp_path)
    config = tmp_path / "config.yaml"
    if content is not None:
        config.write_text(content)
    result = fnrun_here("source", str(root), "--fn-config", str(config))
    assert result.returncode == 2 and result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and str(config) in lines[0], lines
