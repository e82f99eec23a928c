"""`kpt fn eval` habits `fnrun run --image/--exec` keeps, each in a small package of its own (the
shapes of kpt's fn-eval suite, not its files): a bare --exec command found on PATH, a virtualenv's
interpreter run as written, --tag, the Kptfile and a kustomization handed to the function, YAML
that is not KRM refused, a function config without a name refused, `source | run - | sink`
carrying the Kptfile, and the Kptfile printed last."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
LABEL = "fnrun-test/label:v1"
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\n"
KUSTOMIZATION = "resources:\n- web.yaml\n"


def _labels(path: Path) -> dict:
    return (load(path).get("metadata") or {}).get("labels") or {}


def test_a_bare_exec_command_is_found_on_path(tmp_path: Path) -> None:
    """`--exec "sed -e s/a/b/"`: sed is PATH's, not a file next to the package."""
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web").replace("name: web", "name: old-web")})
    result = fnrun("run", str(root), "--exec", "sed -e 's/old-web/new-web/'", "--allow-exec", cwd=tmp_path)
    assert result.code == 0, result
    assert load(root / "web.yaml")["metadata"]["name"] == "new-web"


def test_a_bare_exec_command_not_on_path_is_one_line(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web")})
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), "--exec", "no-such-fn-command --flag", "--allow-exec"), "--exec no-such-fn-command", "PATH", code=2)
    assert snapshot(root) == before


def test_a_virtualenvs_interpreter_runs_as_written(tmp_path: Path) -> None:
    """`--exec "venv/bin/python fn.py"`: the venv's own python (its symlink not resolved), so the
    function sees the venv (sys.prefix is the venv's)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (tmp_path / "fn.py").write_text(
        "import sys\n"
        "text = sys.stdin.read()\n"
        "marker = 'in-venv' if sys.prefix != sys.base_prefix else 'system'\n"
        "sys.stdout.write(text.replace('name: web', 'name: web-' + marker, 1))\n"
    )
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web")})
    result = fnrun("run", str(root), "--exec", f"{venv}/bin/python fn.py", "--allow-exec", cwd=tmp_path)
    assert result.code == 0, result
    assert load(root / "web.yaml")["metadata"]["name"] == "web-in-venv"


@pytest.mark.parametrize("tag", ["v1", "^1", "~1.0 || >=1"])
def test_tag_picks_the_image_tag(tmp_path: Path, tag: str) -> None:
    """A literal --tag replaces the image's; a semver constraint picks the best local tag."""
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    result = fnrun("run", str(root), "-i", "fnrun-test/label", "--tag", tag, "--", "tier=web")
    assert result.code == 0, result
    assert _labels(root / "web.yaml") == {"tier": "web"}


def test_tag_no_local_image_meets_is_one_line(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), "-i", "fnrun-test/label", "--tag", "^7", "--", "tier=web"), "--tag ^7", "fnrun-test/label", code=2)
    assert snapshot(root) == before


def test_kptfile_and_kustomization_are_handed_to_the_function(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"Kptfile": KPTFILE, "kustomization.yaml": KUSTOMIZATION, "web.yaml": deployment("web")})
    result = fnrun("run", str(root), "-i", LABEL, "--", "tier=web")
    assert result.code == 0, result
    for name in ("Kptfile", "kustomization.yaml", "web.yaml"):
        assert _labels(root / name) == {"tier": "web"}, name
    assert (root / "kustomization.yaml").read_text().startswith("resources:\n- web.yaml\n")


def test_declared_functions_still_leave_the_kptfile_alone(tmp_path: Path) -> None:
    """Only the command line's function is kpt fn eval's; a declared one sees resources only."""
    declared = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
        "    config.kubernetes.io/function: |\n      container:\n        image: fnrun-test/label:v1\ndata:\n  tier: web\n"
    )
    root = write_package(tmp_path, {"Kptfile": KPTFILE, "fn.yaml": declared, "web.yaml": deployment("web"), "values.yaml": "replicas: 2\n"})
    result = fnrun("run", str(root))
    assert result.code == 0, result
    assert _labels(root / "web.yaml") == {"tier": "web"} and _labels(root / "Kptfile") == {}
    assert (root / "values.yaml").read_text() == "replicas: 2\n"


def test_yaml_that_is_not_krm_is_refused_with_its_file_named(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web"), "settings/values.yaml": "replicas: 2\n"})
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), "-i", LABEL, "--", "tier=web"), "settings/values.yaml", "not a KRM resource", code=2)
    assert snapshot(root) == before


def test_krmignore_is_the_way_past_yaml_that_is_not_krm(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web"), "values.yaml": "replicas: 2\n", ".krmignore": "values.yaml\n"})
    result = fnrun("run", str(root), "-i", LABEL, "--", "tier=web")
    assert result.code == 0, result
    assert _labels(root / "web.yaml") == {"tier": "web"}


def test_a_function_config_without_a_name_is_refused(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web")})
    config = tmp_path / "unnamed.yaml"
    config.write_text("apiVersion: v1\nkind: ConfigMap\ndata:\n  tier: web\n")
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), "-i", LABEL, "--fn-config", str(config)), "unnamed.yaml", "metadata.name", code=2)
    assert snapshot(root) == before


def test_source_run_sink_carries_the_kptfile(tmp_path: Path) -> None:
    """`fnrun source | fnrun run - -i … | fnrun sink out`: out/ is the whole package, Kptfile too."""
    root = write_package(tmp_path / "pkg", {"Kptfile": KPTFILE, "web.yaml": deployment("web")})
    listed = fnrun("source", str(root))
    assert listed.code == 0, listed
    assert [item["kind"] for item in yaml.safe_load(listed.stdout)["items"]] == ["Kptfile", "Deployment"]
    ran = fnrun("run", "-", "-i", LABEL, "--", "tier=web", stdin=listed.stdout)
    assert ran.code == 0, ran
    sunk = fnrun("sink", str(tmp_path / "out"), stdin=ran.stdout)
    assert sunk.code == 0, sunk
    assert _labels(tmp_path / "out/Kptfile") == {"tier": "web"} and _labels(tmp_path / "out/web.yaml") == {"tier": "web"}


def test_unwrapped_output_prints_the_kptfile_last(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"Kptfile": KPTFILE, "web.yaml": deployment("web")})
    result = fnrun("run", str(root), "-i", LABEL, "-o", "unwrap", "--", "tier=web")
    assert result.code == 0, result
    assert [doc["kind"] for doc in yaml.safe_load_all(result.stdout)] == ["Deployment", "Kptfile"]


def test_search_replace_with_no_config_changes_nothing_and_succeeds(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    before = snapshot(root)
    result = fnrun("run", str(root), "-i", "ghcr.io/kptdev/krm-functions-catalog/search-replace:latest", "--builtin-catalog")
    assert result.code == 0, result
    assert snapshot(root) == before
