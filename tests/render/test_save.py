"""`fnrun run --save`: the function lands in the Kptfile pipeline as kpt fn eval --save puts it
there (compared with kpt as data where kpt is installed), and only the entry's lines change."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")

KPTFILE = """\
# the package
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app  # its name
info:
  description: "an app"
pipeline:
  mutators:
    - image: fnrun/set-namespace:v1 # first step
      configMap:
        namespace: prod
"""
CONFIG = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\ndata:\n  tier: web\n"
LABEL = "fnrun-test/label:v1"


def _package(root: Path, kptfile: str = KPTFILE) -> Path:
    return write_package(root, {"Kptfile": kptfile, "web.yaml": deployment("web"), "cfg/labels.yaml": CONFIG})


def _kpt(root: Path, *args: str) -> None:
    """kpt fn eval --save on a copy (beta.56 wants --type spelled out)."""
    subprocess.run(["kpt", "fn", "eval", str(root), "--image-pull-policy", "never", "--save", *args], check=True, capture_output=True)


def _without_labels(text: str) -> str:
    """The Kptfile without the `labels:` block a labelling function adds to its metadata (the
    --image function gets the Kptfile as an item, as kpt fn eval's does)."""
    kept, inside = [], False
    for line in text.splitlines(keepends=True):
        if line == "  labels:\n":
            inside = True
            continue
        if inside and line.startswith("    "):
            continue
        inside = False
        kept.append(line)
    return "".join(kept)


def _with_type(args: tuple[str, ...]) -> tuple[str, ...]:
    return args if "-t" in args or "--type" in args else ("-t", "mutator", *args)


CASES = {
    "config-map": ("--image", LABEL, "--", "env=prod", "tier=web"),
    "config-path": ("--image", LABEL, "--fn-config", "{root}/cfg/labels.yaml"),
    "validator": ("--image", LABEL, "-t", "validator", "--", "env=prod"),
    "same-image-replaced": ("--image", "fnrun/set-namespace:v1", "--", "namespace=staging"),
    "selectors": (
        "--image", LABEL, "--match-kind", "Deployment", "--match-labels", "app=web", "--match-labels", "x=y",
        "--match-annotations", "a=b", "--exclude-name", "cm", "--exclude-namespace", "kube-system", "--", "env=prod",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_save_adds_only_the_entry_lines(tmp_path: Path, case: str) -> None:
    root = _package(tmp_path / "pkg")
    args = [a.format(root=root) for a in CASES[case]]
    result = fnrun("run", str(root), *args[:2], "--save", *args[2:])
    assert result.code == 0, result
    after = (root / "Kptfile").read_text()
    pipeline = load(root / "Kptfile")["pipeline"]
    if case == "same-image-replaced":
        assert pipeline == {"mutators": [{"image": "fnrun/set-namespace:v1", "configMap": {"namespace": "staging"}}]}
        assert after == KPTFILE.replace("namespace: prod", "namespace: staging")
        return
    assert _without_labels(after).startswith(KPTFILE)  # every byte kept (but the labels the function set on the Kptfile); the new entry's lines follow
    added = {
        "config-map": ("mutators", {"image": LABEL, "configMap": {"env": "prod", "tier": "web"}}),
        "config-path": ("mutators", {"image": LABEL, "configPath": "cfg/labels.yaml"}),
        "validator": ("validators", {"image": LABEL, "configMap": {"env": "prod"}}),
        "selectors": ("mutators", {
            "image": LABEL, "configMap": {"env": "prod"},
            "selectors": [{"kind": "Deployment", "labels": {"app": "web", "x": "y"}, "annotations": {"a": "b"}}],
            "exclude": [{"name": "cm", "namespace": "kube-system"}],
        }),
    }[case]
    assert pipeline[added[0]][-1] == added[1]
    if case != "selectors":  # (web.yaml has no `app: web` label: not selected)
        assert load(root / "web.yaml")["metadata"]["labels"]  # the function also ran


@pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")
@pytest.mark.parametrize("case", CASES)
def test_save_writes_the_pipeline_kpt_writes(tmp_path: Path, case: str) -> None:
    ours, theirs = _package(tmp_path / "ours"), _package(tmp_path / "theirs")
    args = CASES[case]
    assert fnrun("run", str(ours), *[a.format(root=ours) for a in args[:2]], "--save", *[a.format(root=ours) for a in args[2:]]).code == 0
    kpt_args = [a.format(root=theirs) for a in _with_type(args)]
    _kpt(theirs, *kpt_args)
    assert load(ours / "Kptfile")["pipeline"] == load(theirs / "Kptfile")["pipeline"]


def test_replaced_entry_is_the_new_one_whole(tmp_path: Path) -> None:
    """As kpt: the entry for the same image is replaced by the one just run, its old name too."""
    root = _package(tmp_path, KPTFILE.replace("    - image: fnrun/set-namespace:v1", "    - name: ns\n      image: fnrun/set-namespace:v1"))
    assert fnrun("run", str(root), "--image", "fnrun/set-namespace:v1", "--save", "--", "namespace=qa").code == 0
    assert load(root / "Kptfile")["pipeline"]["mutators"] == [{"image": "fnrun/set-namespace:v1", "configMap": {"namespace": "qa"}}]


def test_short_image_name_is_saved_in_full(tmp_path: Path) -> None:
    """`-i label:v1 --image-prefix fnrun-test` runs and records `fnrun-test/label:v1`: the Kptfile
    names what ran, whatever prefix the next run's environment has."""
    root = _package(tmp_path)
    result = fnrun("run", str(root), "-i", "label:v1", "--image-prefix", "fnrun-test", "--save", "--", "env=prod")
    assert result.code == 0, result
    assert load(root / "Kptfile")["pipeline"]["mutators"][-1] == {"image": LABEL, "configMap": {"env": "prod"}}


def test_tag_is_saved_beside_the_image(tmp_path: Path) -> None:
    root = _package(tmp_path)
    result = fnrun("run", str(root), "-i", "fnrun-test/label", "--tag", "v1", "--save", "--", "env=prod")
    assert result.code == 0, result
    assert load(root / "Kptfile")["pipeline"]["mutators"][-1] == {"image": "fnrun-test/label", "tag": "v1", "configMap": {"env": "prod"}}
    assert load(root / "web.yaml")["metadata"]["labels"]  # it ran


def test_exec_function_is_saved_as_typed(tmp_path: Path) -> None:
    root = _package(tmp_path)
    script = root / "fn.sh"
    script.write_text("#!/bin/sh\nexec cat\n")
    script.chmod(0o755)
    result = fnrun("run", str(root), "--exec", "./fn.sh", "--allow-exec", "--save", "--fn-config", str(root / "cfg/labels.yaml"), cwd=root)
    assert result.code == 0, result
    assert load(root / "Kptfile")["pipeline"]["mutators"][-1] == {"exec": "./fn.sh", "configPath": "cfg/labels.yaml"}


def test_config_path_is_relative_to_the_package_not_to_here(tmp_path: Path) -> None:
    """`fnrun run ./sub --fn-config ./sub/cfg/labels.yaml --save` from sub's parent."""
    root = _package(tmp_path / "sub")
    result = fnrun("run", "./sub", "-i", LABEL, "--fn-config", "./sub/cfg/labels.yaml", "--save", cwd=tmp_path)
    assert result.code == 0, result
    assert load(root / "Kptfile")["pipeline"]["mutators"][-1] == {"image": LABEL, "configPath": "cfg/labels.yaml"}
    assert load(root / "cfg/labels.yaml")["metadata"]["labels"]  # the config inside the package is an item too, as kpt fn eval -s hands it


def test_package_without_pipeline_gets_one(tmp_path: Path) -> None:
    kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bare\n"
    root = _package(tmp_path, kptfile)
    assert fnrun("run", str(root), "--image", LABEL, "--save", "--", "env=prod").code == 0
    after = (root / "Kptfile").read_text()
    assert after.startswith(kptfile)
    assert load(root / "Kptfile")["pipeline"] == {"mutators": [{"image": LABEL, "configMap": {"env": "prod"}}]}


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--image", LABEL, "--save", "-t", "checker"), "--type"),
        (("--image", LABEL, "--save", "--check"), "--save"),
        (("--image", LABEL, "--save", "--fn-config", "{outside}"), "inside the package"),
    ],
)
def test_bad_save_is_refused_before_anything_runs(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    root = _package(tmp_path / "pkg")
    (tmp_path / "outside.yaml").write_text(CONFIG)
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), *[a.format(outside=tmp_path / "outside.yaml") for a in args]), needle, code=2)
    assert snapshot(root) == before


def test_missing_kptfile_runs_and_skips_the_save(tmp_path: Path) -> None:
    """As kpt: the function runs and its changes land; only the save is skipped, with one line."""
    write_package(tmp_path, {"web.yaml": deployment("web")})
    result = fnrun("run", str(tmp_path), "--image", LABEL, "--save", "--", "a=b")
    assert result.code == 0, result
    assert "Kptfile" in result.stderr and "not recorded" in result.stderr
    assert load(tmp_path / "web.yaml")["metadata"]["labels"]  # it ran and was written
    assert not (tmp_path / "Kptfile").exists()


def test_failed_function_saves_nothing(tmp_path: Path) -> None:
    root = _package(tmp_path)
    before = snapshot(root)
    assert fnrun("run", str(root), "--image", "fnrun-test/fail:v1", "--save").code == 1
    assert snapshot(root) == before


def test_diff_shows_the_kptfile_lines(tmp_path: Path) -> None:
    root = _package(tmp_path)
    result = fnrun("run", str(root), "--image", LABEL, "--save", "--diff", "--", "env=prod")
    assert result.code == 0, result
    assert "+++ b/Kptfile" in result.stdout and f"+    - image: {LABEL}" in result.stdout


def test_crlf_kptfile_stays_crlf(tmp_path: Path) -> None:
    kptfile = "apiVersion: kpt.dev/v1\r\nkind: Kptfile\r\nmetadata:\r\n  name: crlf\r\n"
    root = _package(tmp_path, kptfile)
    (root / "Kptfile").write_bytes(kptfile.encode())
    assert fnrun("run", str(root), "--image", LABEL, "--save", "--", "env=prod").code == 0
    after = (root / "Kptfile").read_bytes()
    assert after.startswith(kptfile.encode()) and after.count(b"\n") == after.count(b"\r\n")
