"""fnrun's own catalog images run in-process (orchestrator/runtimes/host/builtin.py).

Through the real CLI on copies of samples/: the builtin leaves byte-identical files and the same
results as the image (run with --no-builtin), is marked as builtin in the display and the results,
gives way to the container when the image's source-hash label is not the installed code's, and is
held to the same timeout and --max-output cap as any function. The suite turns builtins off
(conftest.py), so each run here turns them on with FNRUN_BUILTIN=1."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.host.sources import CATALOG as BUILTIN_CATALOG, SOURCE_HASH_LABEL, source_hash
from testing.catalog import CATALOG, EXEC_CASES, VALIDATORS, Edit, copy_sample, image
from testing.pipeline_helpers import REPO, Result, assert_one_line_error, fnrun, load, snapshot

ON = {"FNRUN_BUILTIN": "1"}


def run(package: Path, *extra: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[Result, list[dict]]:
    """`fnrun run DIR` with the package's own declaration; the run's result items."""
    results = package.parent / f"{package.name}-results"
    result = fnrun("run", str(package), "--results-dir", str(results), *extra, env={**ON, **(env or {})}, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    items = load(results / "results.yaml")["items"] if (results / "results.yaml").exists() else []
    return result, items


def contents(package: Path) -> dict[str, bytes]:
    return {rel: content for rel, (content, _) in snapshot(package).items()}


def test_catalog_is_what_the_dockerfiles_run() -> None:
    """Every Dockerfile whose ENTRYPOINT is `python3 -m functions.<module>` is in the builtin
    catalog under its tag, with that module, and nothing else is."""
    entrypoints = {}
    for dockerfile in (REPO / "Dockerfiles").glob("*.Dockerfile"):
        found = re.search(r'ENTRYPOINT \["python3", "-m", "(functions\.\w+)"\]', dockerfile.read_text())
        if found:
            entrypoints[f"fnrun/{dockerfile.name.removesuffix('.Dockerfile')}:v1"] = found.group(1)
    assert entrypoints == BUILTIN_CATALOG
    assert set(BUILTIN_CATALOG) == {image(name) for name in CATALOG}


def test_handover_modules_are_catalog_modules() -> None:
    """The handover list names catalog modules only (inject-sidecar, which copies commented
    nodes out of its config, is not among them)."""
    from orchestrator.runtimes.host.builtin import HANDOVER

    assert HANDOVER < set(BUILTIN_CATALOG.values())
    assert "functions.inject_sidecar" not in HANDOVER


def test_images_carry_the_installed_source_hash(catalog_images: tuple[str, ...]) -> None:
    client = docker.from_env()
    for tag, module in BUILTIN_CATALOG.items():
        assert client.images.get(tag).labels.get(SOURCE_HASH_LABEL) == source_hash(module), tag


@pytest.mark.parametrize("way", [{}, {"FNRUN_BUILTIN_HANDOVER": "0"}, {"FNRUN_BUILTIN_FORK": "0"}],
                         ids=["handover", "forked-text", "own-interpreter"])
@pytest.mark.parametrize("name, edit", EXEC_CASES)
def test_builtin_leaves_the_same_files_and_results_as_the_image(name: str, edit: Edit | None, way: dict[str, str],
                                                                tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """In a fork of fnrun over the items it holds (the default), in a fork given the ResourceList
    as text, and in an interpreter of its own alike."""
    builtin_package = copy_sample(name, tmp_path / "builtin", edit)
    image_package = copy_sample(name, tmp_path / "image", edit)
    by_builtin, builtin_items = run(builtin_package, env=way)
    by_image, image_items = run(image_package, "--no-builtin")
    expected = 1 if name in VALIDATORS and edit else 0
    assert (by_builtin.code, by_image.code) == (expected, expected), (by_builtin, by_image)
    assert [item.get("builtin") for item in builtin_items] == [True]
    assert [item.get("builtin") for item in image_items] == [None]
    assert [item["results"] for item in builtin_items] == [item["results"] for item in image_items]
    assert contents(builtin_package) == contents(image_package)
    assert "builtin" in by_builtin.stderr and "builtin" not in by_image.stderr


def test_render_runs_the_kpt_package_builtin(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """A Kptfile pipeline of short catalog names: every step builtin, the same files as containers."""
    builtin_package, image_package = tmp_path / "builtin", tmp_path / "image"
    shutil.copytree(REPO / "samples" / "kpt-package", builtin_package)
    shutil.copytree(REPO / "samples" / "kpt-package", image_package)
    common = ("--image-prefix", "fnrun", "--results-format", "json")
    by_builtin = fnrun("render", str(builtin_package), *common, env=ON)
    by_image = fnrun("render", str(image_package), *common, "--no-builtin", env=ON)
    assert (by_builtin.code, by_image.code) == (0, 0), (by_builtin, by_image)
    assert by_builtin.stdout.count('"builtin": true') == 6 and '"builtin"' not in by_image.stdout
    assert contents(builtin_package) == contents(image_package)


def test_render_to_stdout_prints_what_the_images_print(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """`-o unwrap` prints the resources' texts, not files: those of items handed back over the
    fork are the same bytes as the ones the images returned."""
    printed = []
    for way, extra in (("builtin", ()), ("image", ("--no-builtin",))):
        package = tmp_path / way
        shutil.copytree(REPO / "samples" / "kpt-package", package)
        result = fnrun("render", str(package), "--image-prefix", "fnrun", "-o", "unwrap", *extra, env=ON)
        assert result.code == 0, result
        printed.append(result.stdout)
    assert printed[0] == printed[1] and "app.kubernetes.io/part-of: shop" in printed[0]


@pytest.mark.parametrize("switch", [("--no-builtin",), ()], ids=["flag", "environment"])
def test_no_builtin_starts_containers(switch: tuple[str, ...], tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("set-labels", tmp_path)
    result, items = run(package, *switch, env={} if switch else {"FNRUN_BUILTIN": "0"})
    assert result.code == 0, result
    assert [item.get("builtin") for item in items] == [None]


def test_builtin_with_the_cache_on_runs_builtin(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """The result cache wraps containers only: a builtin run is neither looked up nor replayed."""
    cache = {"FNRUN_CACHE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for attempt in ("first", "second"):
        package = copy_sample("set-labels", tmp_path / attempt)
        result, items = run(package, env=cache)
        assert result.code == 0, result
        assert [(item.get("builtin"), item.get("cached")) for item in items] == [(True, None)]


def _fnrun_copy(into: Path, edit_module: bool) -> Path:
    """This checkout's orchestrator and functions, copied (set_labels.py edited when asked): `python -m
    orchestrator` from there hashes and runs that copy's functions."""
    shutil.copytree(REPO / "orchestrator", into / "orchestrator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "functions", into / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    if edit_module:
        module = into / "functions" / "set_labels.py"
        module.write_text(module.read_text() + "\n# a local edit the image does not have\n")
    return into


@pytest.mark.parametrize("edited, expected", [(True, None), (False, True)], ids=["edited", "unedited"])
def test_an_image_built_from_other_code_runs_as_a_container(edited: bool, expected: bool | None, tmp_path: Path,
                                                            catalog_images: tuple[str, ...]) -> None:
    """The image's label no longer matches the code fnrun has: only the image can say what it does."""
    checkout = _fnrun_copy(tmp_path / "checkout", edited)
    package = copy_sample("set-labels", tmp_path)
    result, items = run(package, cwd=checkout)
    assert result.code == 0, result
    assert [item.get("builtin") for item in items] == [expected]


def test_runaway_builtin_is_killed_at_the_timeout(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    """A timeout far below an interpreter's start: the child is killed and nothing is written."""
    package = copy_sample("set-labels", tmp_path)
    before = snapshot(package)
    result, _ = run(package, "--timeout", "0.001")
    assert_one_line_error(result, "fnrun/set-labels:v1", "timed out after 0.001s", code=1)
    assert snapshot(package) == before


def test_builtin_output_over_the_cap_is_killed(tmp_path: Path, catalog_images: tuple[str, ...]) -> None:
    package = copy_sample("set-labels", tmp_path)
    before = snapshot(package)
    result, _ = run(package, "--max-output", "1k")
    assert result.code != 0, result
    assert_one_line_error(result, "fnrun/set-labels:v1", code=result.code)
    assert snapshot(package) == before


ODD_LAYOUTS = {
    "flow.yaml": (
        "# flow-style maps, where a label must go into braces\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: flow, labels: {app: flow}}  # inline\n"
        "spec: {selector: {app: flow}, ports: [{port: 80}]}\n"
    ),
    "crlf.yaml": "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: crlf\r\ndata:\r\n  a: 'b'\r\n",
    "scalars.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scalars\n  annotations: &notes\n    owner: ops\n"
        "data:\n  script: |\n    echo hi   # not a comment\n  copy: *notes\n  tagged: !!str 42\n"
    ),
    "many.yaml": (
        "--- # first\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n    name: wide   # four spaces\n"
        "spec:\n    template:\n        spec:\n            containers:\n                -   name: c\n"
        "                    image: x\n"
        "---\n# between documents\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bare\n"
        "spec:\n  template:\n    spec:\n      containers: []\n"
        "...\n"
    ),
}


@pytest.mark.parametrize("image_name, config", [
    ("set-labels", "data:\n  team: payments\n  tier: '1'\n"),
    ("set-namespace", "data:\n  namespace: shop\n"),
], ids=["set-labels", "set-namespace"])
def test_handover_writes_odd_layouts_as_the_image_does(image_name: str, config: str, tmp_path: Path,
                                                       catalog_images: tuple[str, ...]) -> None:
    """Flow maps, CRLF, anchors, tags, block scalars, four-space and wide-dash indentation,
    comments between documents: the
    edits of a function that took its items handed over land byte for byte as the image's."""
    packages = {}
    for way in ("builtin", "image"):
        package = tmp_path / way
        package.mkdir()
        for name, text in ODD_LAYOUTS.items():
            (package / name).write_bytes(text.encode())
        (package / "fn.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
            f"    config.kubernetes.io/function: |\n      container:\n        image: {image(image_name)}\n"
            f"    config.kubernetes.io/local-config: 'true'\n{config}")
        packages[way] = package
    by_builtin, builtin_items = run(packages["builtin"])
    by_image, _ = run(packages["image"], "--no-builtin")
    assert (by_builtin.code, by_image.code) == (0, 0), (by_builtin, by_image)
    assert [item.get("builtin") for item in builtin_items] == [True]
    assert contents(packages["builtin"]) == contents(packages["image"])
    assert contents(packages["builtin"]) != {name: text.encode() for name, text in ODD_LAYOUTS.items()}
