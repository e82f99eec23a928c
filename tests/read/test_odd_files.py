"""Odd files never stop a run of declared functions. YAML that is not KRM (Helm values, Chart.yaml,
a top-level list), that uses an application tag (mkdocs' `!!python/name:`), or that has a
duplicate key is left byte-identical with a warning naming it, in `source`, `sink` and `run`
(`run --image`, like `kpt fn eval`, refuses YAML that is not KRM: tests/cli/test_kpt_eval_habits.py); a resource
with a duplicate key is an error only where a function would receive it. `fnrun render` hands a
kustomization file to its functions as `kpt fn render` does (checked against kpt itself)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from orchestrator.read.notices import Note
from orchestrator.run import pipes
from testing.io_helpers import assert_one_line_error, fnrun_here, pipe, snapshot, write_files

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"
ODD = {
    "values.yaml": "replicaCount: 1\nimage:\n  repository: nginx\n",
    "chart/Chart.yaml": "apiVersion: v2\nname: mychart\nversion: 0.1.0\n",
    "playbook.yml": "- hosts: all\n  tasks: []\n",
    "mkdocs.yml": "site_name: x\nmarkdown_extensions:\n  - pymdownx.superfences:\n      custom_fences:\n        - name: mermaid\n          format: !!python/name:pymdownx.superfences.fence_code_format\n",
    "values-dup.yaml": "a: 1\nb: 2\na: 3\n",
    "mixed.yaml": "# header\nfoo: bar\n---\n" + CM.format(name="mixed") + "---\nlast: [1, 2]\n",
}
DUP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: \"1\"\n  a: \"2\"\n"


def _warnings(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if line.startswith("fnrun: warning: ")]


def _package(root: Path, extra: dict[str, str] | None = None) -> Path:
    return write_files(root, {"cm.yaml": CM.format(name="cm"), **ODD, **(extra or {})})


def test_source_leaves_odd_files_out_with_one_line_each_and_one_summary(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg", {"app/dup.yaml": DUP})
    result = fnrun_here("source", str(root))
    assert result.returncode == 0, result.stderr
    listing = yaml.safe_load(result.stdout)
    assert [item["metadata"]["name"] for item in listing["items"]] == ["cm", "mixed"]
    warnings = _warnings(result.stderr)
    assert result.stderr.decode().count("\n") == len(warnings) == 4, result.stderr
    assert "app/dup.yaml:7: duplicate key 'a'" in warnings[0]
    assert "mkdocs.yml:6: application tag !!python/name:pymdownx.superfences.fence_code_format" in warnings[1]
    assert "values-dup.yaml:3: duplicate key 'a'" in warnings[2]
    assert "4 files hold YAML that is not a KRM resource (first: chart/Chart.yaml)" in warnings[3]


def test_source_sink_in_place_and_into_a_package_with_odd_files(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg", {"app/dup.yaml": DUP})
    before = snapshot(root)
    result = pipe(root, root)
    assert result.returncode == 0, result.stderr
    assert snapshot(root) == before
    sunk = fnrun_here("sink", str(root), stdin=fnrun_here("source", str(root)).stdout)
    assert sunk.returncode == 0 and snapshot(root) == before
    assert any("app/dup.yaml:7" in line for line in _warnings(sunk.stderr))  # the package's odd file, named


def test_two_process_source_carries_the_helpers_notes(tmp_path: Path) -> None:
    """A big package is read on two processes; what the helper left out is still reported."""
    files = {f"d{n:03}/cm.yaml": CM.format(name=f"c{n}") for n in range(130)}
    files.update({f"d{n:03}/values.yaml": "x: 1\n" for n in (30, 60, 90)})
    files["d040/dup.yaml"] = DUP
    root = write_files(tmp_path / "pkg", files)
    notes: list[Note] = []
    listing = "".join(pipes.source_chunks(root, parallel=True, notes=notes))
    assert listing == "".join(pipes.source_chunks(root, parallel=False))
    assert [(n.path, n.line, n.problem is not None) for n in notes] == [
        ("d030/values.yaml", 1, False),
        ("d040/dup.yaml", 7, True),
        ("d060/values.yaml", 1, False),
        ("d090/values.yaml", 1, False),
    ]


@pytest.mark.engine
def test_run_leaves_odd_files_byte_identical(tmp_path: Path) -> None:
    declared = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
        "    config.kubernetes.io/function: |\n      container:\n        image: fnrun-test/label:v1\ndata:\n  team: web\n"
    )
    root = _package(tmp_path / "pkg", {"fn.yaml": declared})
    before = snapshot(root)
    result = fnrun_here("run", str(root))
    assert result.returncode == 0, result.stderr
    after = snapshot(root)
    for name in ODD:
        if name != "mixed.yaml":
            assert after[name].content == before[name].content, name
    mixed = (root / "mixed.yaml").read_text()
    assert mixed.startswith("# header\nfoo: bar\n---\n") and mixed.endswith("---\nlast: [1, 2]\n") and "team: web" in mixed
    assert len(_warnings(result.stderr)) == 3  # mkdocs.yml, values-dup.yaml, and the summary


@pytest.mark.engine
def test_a_duplicate_key_in_a_resource_a_function_receives_is_an_error(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg", {"app/dup.yaml": DUP})
    before = snapshot(root)
    alone = write_files(tmp_path / "alone", {"cm.yaml": CM.format(name="cm"), "app/dup.yaml": DUP})
    stderr = assert_one_line_error(fnrun_here("run", str(alone), "--image", "fnrun-test/label:v1", "--", "team=web"), "app/dup.yaml:7: duplicate key 'a'", "fnrun-test/label:v1")
    assert "ambiguous" in stderr and "leave it out in .krmignore: add the line /app/dup.yaml to" in stderr
    refused = fnrun_here("run", str(root), "--image", "fnrun-test/label:v1", "--", "team=web")  # with the YAML that is not KRM, in one error
    assert refused.returncode == 2 and refused.stderr.decode().count("fnrun: error: ") == 1
    assert refused.stderr.decode().startswith(f"fnrun: error: {root}/app/dup.yaml:7: duplicate key 'a' in a resource function fnrun-test/label:v1 would receive, and 6 more files (7 in all)")
    assert snapshot(root) == before


@pytest.mark.engine
def test_a_duplicate_key_outside_every_functions_scope_is_left_alone(tmp_path: Path) -> None:
    """The function declared in app/ sees app/ only; other/dup.yaml is left as it is."""
    declared = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
        "    config.kubernetes.io/function: |\n      container:\n        image: fnrun-test/label:v1\ndata:\n  team: web\n"
    )
    root = write_files(tmp_path / "pkg", {"app/fn.yaml": declared, "app/cm.yaml": CM.format(name="cm"), "other/dup.yaml": DUP})
    result = fnrun_here("run", str(root))
    assert result.returncode == 0, result.stderr
    assert "team: web" in (root / "app/cm.yaml").read_text()
    assert (root / "other/dup.yaml").read_text() == DUP
    assert any("other/dup.yaml:7: duplicate key 'a'" in line for line in _warnings(result.stderr))


@pytest.mark.engine
def test_a_selector_that_leaves_the_duplicate_out_runs(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"cm.yaml": CM.format(name="cm"), "dup.yaml": DUP})
    result = fnrun_here("run", str(root), "--match-name", "cm", "--image", "fnrun-test/label:v1", "--", "team=web")
    assert result.returncode == 0, result.stderr
    assert (root / "dup.yaml").read_text() == DUP and "team: web" in (root / "cm.yaml").read_text()


@pytest.mark.engine
def test_truly_unparseable_yaml_in_scope_is_still_an_error(tmp_path: Path) -> None:
    root = _package(tmp_path / "pkg", {"bad.yaml": "apiVersion: v1\nkind: A\ndata: [x\n"})
    before = snapshot(root)
    refused = fnrun_here("run", str(root), "--image", "fnrun-test/label:v1", "--", "team=web")  # with the YAML that is not KRM, in one error
    assert refused.returncode == 2 and refused.stderr.decode().count("fnrun: error: ") == 1
    assert refused.stderr.decode().startswith(f"fnrun: error: {root}/bad.yaml:4: not YAML (") and "and 6 more files (7 in all)" in refused.stderr.decode()
    assert snapshot(root) == before
    alone = write_files(tmp_path / "alone", {"cm.yaml": CM.format(name="cm"), "bad.yaml": "apiVersion: v1\nkind: A\ndata: [x\n"})
    assert_one_line_error(fnrun_here("run", str(alone), "--image", "fnrun-test/label:v1", "--", "team=web"), "bad.yaml:4:", "add the line /bad.yaml to")


KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n    - image: fnrun/set-labels:v1\n      configMap:\n        tier: backend\n"
KUSTOMIZATION = "# kustomization.yaml contents\nresources:\n- cm.yaml\n"


def _kpt() -> str:
    kpt = shutil.which("kpt")
    if kpt is None:
        pytest.skip("kpt is not installed")
    return kpt


def _data(path: Path) -> list:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


@pytest.mark.engine
def test_render_hands_a_kustomization_to_the_functions_as_kpt_does(tmp_path: Path) -> None:
    files = {"Kptfile": KPTFILE, "kustomization.yaml": KUSTOMIZATION, "cm.yaml": CM.format(name="cm"), "sub/Kustomization.yaml": "kind: Kustomization\nresources: []\n"}
    ours, theirs = write_files(tmp_path / "ours", files), write_files(tmp_path / "theirs", files)
    result = fnrun_here("render", str(ours), "--image-pull-policy", "never", "--no-status")
    assert result.returncode == 0, result.stderr
    kpt = subprocess.run([_kpt(), "fn", "render", str(theirs), "--image-pull-policy", "never"], capture_output=True)
    assert kpt.returncode == 0, kpt.stderr
    for name in ("kustomization.yaml", "cm.yaml", "sub/Kustomization.yaml"):
        assert _data(ours / name) == _data(theirs / name), name
    assert _data(ours / "kustomization.yaml")[0]["metadata"]["labels"] == {"tier": "backend"}
    assert (ours / "kustomization.yaml").read_text().startswith(KUSTOMIZATION)  # the rest of the file is its own


@pytest.mark.engine
def test_render_refuses_other_yaml_that_is_not_krm_as_kpt_does(tmp_path: Path) -> None:
    files = {"Kptfile": KPTFILE, "cm.yaml": CM.format(name="cm"), "values.yaml": "replicaCount: 1\n"}
    ours, theirs = write_files(tmp_path / "ours", files), write_files(tmp_path / "theirs", files)
    before = snapshot(ours)
    assert_one_line_error(fnrun_here("render", str(ours), "--image-pull-policy", "never"), "values.yaml:1: not a KRM resource")
    assert snapshot(ours) == before
    kpt = subprocess.run([_kpt(), "fn", "render", str(theirs), "--image-pull-policy", "never"], capture_output=True)
    assert kpt.returncode != 0 and b"values.yaml" in kpt.stderr


@pytest.mark.engine
def test_render_duplicate_key_in_a_received_resource_is_an_error(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"Kptfile": KPTFILE, "cm.yaml": CM.format(name="cm"), "dup.yaml": DUP})
    before = snapshot(root)
    assert_one_line_error(fnrun_here("render", str(root), "--image-pull-policy", "never", "--no-status"), "dup.yaml:7: duplicate key 'a'")
    assert snapshot(root) == before


def test_kpt_source_with_odd_files_into_fnrun_sink(tmp_path: Path) -> None:
    """`kpt fn source` lists odd files verbatim (a duplicate key, an application tag). Into the
    same package they are left as they are; into a new directory each is written as its own text,
    never re-rendered from a guessed value, with a warning naming it."""
    root = _package(tmp_path / "pkg", {"app/dup.yaml": DUP})
    listing = subprocess.run([_kpt(), "fn", "source", str(root)], capture_output=True, check=True).stdout
    before = snapshot(root)
    in_place = fnrun_here("sink", str(root), stdin=listing)
    assert in_place.returncode == 0, in_place.stderr
    assert snapshot(root) == before
    fresh = fnrun_here("sink", str(tmp_path / "new"), stdin=listing)
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "new/app/dup.yaml").read_text() == DUP
    assert "format: !!python/name:pymdownx.superfences.fence_code_format" in (tmp_path / "new/mkdocs.yml").read_text()
    assert (tmp_path / "new/values-dup.yaml").read_text() == ODD["values-dup.yaml"]
    warned = _warnings(fresh.stderr)
    assert any("app/dup.yaml:7: duplicate key 'a' (an item of stdin)" in line for line in warned), warned
    assert any(line.startswith("fnrun: warning: mkdocs.yml:6: application tag") for line in warned), warned


def test_render_refuses_a_kptfile_with_a_duplicate_key(tmp_path: Path) -> None:
    """kpt refuses it too ("Kptfile ... can't be read"): a pipeline cannot be guessed."""
    kptfile = KPTFILE.replace("  name: app\n", "  name: app\n  name: other\n")
    root = write_files(tmp_path / "pkg", {"Kptfile": kptfile, "cm.yaml": CM.format(name="cm")})
    before = snapshot(root)
    assert_one_line_error(fnrun_here("render", str(root), "--image-pull-policy", "never"), "Kptfile:5: duplicate key 'name'")
    assert snapshot(root) == before


def test_a_function_declaration_with_a_duplicate_key_is_an_error(tmp_path: Path) -> None:
    """Left alone, its function would silently not run: refused instead, naming the line."""
    declared = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
        "    config.kubernetes.io/function: |\n      container:\n        image: fnrun-test/label:v1\ndata:\n  team: web\n  team: ops\n"
    )
    root = write_files(tmp_path / "pkg", {"app/fn.yaml": declared, "app/cm.yaml": CM.format(name="cm")})
    before = snapshot(root)
    assert_one_line_error(fnrun_here("run", str(root)), "app/fn.yaml:11: duplicate key 'team' in a resource that declares a function")
    assert snapshot(root) == before
