"""`fnrun render` against kpt: the same kpt packages rendered by `kpt fn render` and `fnrun render`
on copies, with the same local images, compared as data; and what render refuses, one line each."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import docker
import pytest

from pipeline_helpers import assert_one_line_error, fnrun, load, snapshot, test_images, write_package  # noqa: F401

KPT = shutil.which("kpt")
needs_kpt = pytest.mark.skipif(KPT is None, reason="kpt is not installed (the oracle these tests compare with)")


def kptfile(name: str, mutators: str = "", validators: str = "") -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
    if mutators or validators:
        text += "pipeline:\n"
    if mutators:
        text += "  mutators:\n" + mutators
    if validators:
        text += "  validators:\n" + validators
    return text


def cm(name: str, extra: str = "") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}  # {name}\n{extra}data:\n  k: v\n"


def as_data(root: Path) -> dict[str, list]:
    """Every YAML file and Kptfile as parsed documents (layout aside), with kpt's status left out."""
    from orchestrator.yamlio import fast

    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and (path.suffix in (".yaml", ".yml") or path.name == "Kptfile"):
            docs = [d for d in fast.load_all(path.read_text(), str(path)) if d is not None]
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "Kptfile":
                    doc.pop("status", None)
            found[path.relative_to(root).as_posix()] = docs
    return found


def render_both(package: Path, tmp_path: Path, *fnrun_args: str) -> tuple[subprocess.CompletedProcess[str], object, Path, Path]:
    ours, theirs = tmp_path / "fnrun", tmp_path / "kpt"
    shutil.copytree(package, ours)
    shutil.copytree(package, theirs)
    kpt = subprocess.run([KPT, "fn", "render", str(theirs), "--image-pull-policy", "never", *fnrun_args],
                         capture_output=True, text=True, timeout=300)
    result = fnrun("render", str(ours), "--image-pull-policy", "never", *fnrun_args)
    return kpt, result, ours, theirs


NESTED = {
    "Kptfile": kptfile("root", mutators=(
        "  - image: fnrun/set-labels:v1\n    configMap:\n      team: web\n    selectors:\n    - kind: ConfigMap\n    exclude:\n    - name: skip\n"
        "  - image: fnrun-test/generate:v1\n    configPath: gen-config.yaml\n"
    )),
    "gen-config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gen-config\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: made-by-root\n",
    "root.yaml": cm("root-cm") + "---\n" + cm("skip"),
    "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n",
    "apps/Kptfile": kptfile("apps", mutators="  - image: fnrun/set-namespace:v1\n    configMap:\n      namespace: apps\n"),
    "apps/a.yaml": cm("apps-cm"),
    "apps/db/Kptfile": kptfile("db", mutators="  - image: fnrun-test/delete:v1\n    configMap:\n      names: doomed\n"),
    "apps/db/db.yaml": cm("db-cm"),
    "apps/db/doomed.yaml": cm("doomed"),
    "other/Kptfile": kptfile("other", mutators="  - image: fnrun/set-namespace:v1\n    configMap:\n      namespace: other\n"),
    "other/o.yaml": cm("other-cm"),
}


@needs_kpt
def test_nested_subpackages_selectors_configs_deletions_and_generated_files_match_kpt(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", NESTED)
    kpt, result, ours, theirs = render_both(package, tmp_path)
    assert kpt.returncode == 0, kpt.stderr
    assert result.code == 0, result.stderr
    # New resources get files as `fnrun run` names them (<name>_<kind>.yaml, the nginx walkthrough's
    # convention); kpt names them <kind>_<name>.yaml. Everything else is the same.
    theirs_data = as_data(theirs)
    theirs_data["made-by-root_configmap.yaml"] = theirs_data.pop("configmap_made-by-root.yaml")
    assert as_data(ours) == theirs_data
    assert not (ours / "apps" / "db" / "doomed.yaml").exists()
    assert "fnrun render:" in result.stderr


@needs_kpt
def test_short_image_names_take_the_catalog_prefix_or_the_given_one(tmp_path: Path, test_images: None) -> None:
    engine = docker.from_env()
    engine.images.get("fnrun/set-labels:v1").tag("ghcr.io/kptdev/krm-functions-catalog/fnrun-render-test", "latest")
    engine.images.get("fnrun/set-labels:v1").tag("gcr.io/kpt-fn/fnrun-render-test", "latest")  # kpt beta.56's prefix; 1.0 moved to ghcr
    engine.images.get("fnrun/set-labels:v1").tag("registry.example/fns/fnrun-render-test", "v9")
    package = write_package(tmp_path / "pkg", {
        "Kptfile": kptfile("p", mutators="  - image: fnrun-render-test\n    configMap:\n      team: short\n"),
        "a.yaml": cm("a"),
    })
    kpt, result, ours, theirs = render_both(package, tmp_path)
    assert kpt.returncode == 0 and result.code == 0, (kpt.stderr, result.stderr)
    assert as_data(ours) == as_data(theirs)
    assert load(ours / "a.yaml")["metadata"]["labels"] == {"team": "short"}

    prefixed = write_package(tmp_path / "prefixed", {
        "Kptfile": kptfile("p", mutators="  - image: fnrun-render-test:v9\n    configMap:\n      team: prefixed\n"),
        "a.yaml": cm("a"),
    })
    result = fnrun("render", str(prefixed), "--image-pull-policy", "never", "--image-prefix", "registry.example/fns")
    assert result.code == 0, result.stderr
    assert load(prefixed / "a.yaml")["metadata"]["labels"] == {"team": "prefixed"}
    missing = fnrun("render", str(prefixed), "--image-pull-policy", "never")
    assert_one_line_error(missing, "ghcr.io/kptdev/krm-functions-catalog/fnrun-render-test:v9", "not present", code=2)


def test_a_validator_that_changes_anything_fails_and_nothing_is_written(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {
        "Kptfile": kptfile("p", validators="  - image: fnrun/set-labels:v1\n    configMap:\n      sneaky: yes\n"),
        "a.yaml": cm("a"),
    })
    before = snapshot(package)
    result = fnrun("render", str(package))
    assert_one_line_error(result, "validator fnrun/set-labels:v1 changed the package", code=1)
    assert snapshot(package) == before


def test_a_failing_step_writes_nothing(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {
        "Kptfile": kptfile("p", mutators="  - image: fnrun/set-namespace:v1\n    configMap:\n      namespace: x\n  - image: fnrun-test/fail:v1\n"),
        "sub/Kptfile": kptfile("sub", mutators="  - image: fnrun/set-namespace:v1\n    configMap:\n      namespace: y\n"),
        "a.yaml": cm("a"),
        "sub/b.yaml": cm("b"),
    })
    before = snapshot(package)
    result = fnrun("render", str(package))
    assert_one_line_error(result, "fnrun-test/fail:v1", code=1)
    assert snapshot(package) == before


@pytest.mark.parametrize(("files", "needles"), [
    ({"a.yaml": cm("a")}, ("not a kpt package", "no Kptfile")),
    ({"Kptfile": kptfile("p", mutators="  - image: x\n    bogus: 1\n")}, ("Kptfile: pipeline.mutators[0]", "unknown field 'bogus'")),
    ({"Kptfile": kptfile("p", mutators="  - image: x\n    exec: ./y\n")}, ("Kptfile: pipeline.mutators[0]", "exactly one of image and exec")),
    ({"Kptfile": kptfile("p", mutators="  - image: x\n    configPath: nowhere.yaml\n")}, ("configPath nowhere.yaml", "no resource")),
    ({"sub/Kptfile": kptfile("s", mutators="  - exec: ./fn.sh\n"), "Kptfile": kptfile("p")}, ("exec function ./fn.sh needs --enable-exec",)),
    ({"Kptfile": kptfile("p", mutators="  - image: x\n    selectors:\n    - kinds: [A]\n")}, ("selectors[0]", "unknown selector field", "kinds")),
])
def test_bad_packages_are_one_line_errors_before_anything_runs(files: dict[str, str], needles: tuple[str, ...], tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", files)
    before = snapshot(package)
    assert_one_line_error(fnrun("render", str(package)), *needles, code=2)
    assert snapshot(package) == before


def test_exec_steps_run_with_allow_exec_and_output_goes_to_stdout(tmp_path: Path) -> None:
    package = write_package(tmp_path / "pkg", {
        "Kptfile": kptfile("p", mutators="  - exec: ./fn.sh\n"),
        "a.yaml": cm("a"),
        "fn.sh": "#!/bin/sh\nsed 's/k: v/k: rendered/'\n",
    })
    (package / "fn.sh").chmod(0o755)
    before = snapshot(package)
    result = fnrun("render", str(package), "--allow-exec", "-o", "stdout")
    assert result.code == 0, result.stderr
    assert "k: rendered" in result.stdout and "kind: ResourceList" in result.stdout
    assert snapshot(package) == before


@needs_kpt
def test_the_sample_kpt_package_renders_like_kpt_and_then_is_a_fixed_point(tmp_path: Path, test_images: None) -> None:
    from pipeline_helpers import REPO

    kpt, result, ours, theirs = render_both(REPO / "samples" / "kpt-package", tmp_path)
    assert kpt.returncode == 0 and result.code == 0, (kpt.stderr, result.stderr)
    assert as_data(ours) == as_data(theirs)
    assert load(ours / "apps" / "cart" / "deployment.yaml")["metadata"] == {"name": "cart", "namespace": "cart", "labels": {"team": "shop"}}
    text = (ours / "apps" / "cart" / "deployment.yaml").read_text()
    assert text.count("# The cart service.") == 1 and "replicas: 2  # two is enough for the demo" in text  # kpt repeats the head comment
    again = fnrun("render", str(ours), "--check")
    assert again.code == 0, again.stderr
