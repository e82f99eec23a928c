"""`fnrun source` / `fnrun sink` through the real command line: byte-exact round trips, the input
forms sink accepts, and comments that travel through a ResourceList both ways."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from io_helpers import REPO, fnrun, golden_cases, pipe, snapshot, write_files
from orchestrator import api
from orchestrator.reader import read_package
from orchestrator.yamlio import fast

EXTRA_LAYOUTS = {
    "odd/flow-metadata.yaml": '{"apiVersion": "v1", "kind": "A", "metadata": {"name": "j", "annotations": {"a": "b"}}}\n',
    "odd/flow-annotations.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: fa\n  annotations: {a: b}\n",
    "odd/no-metadata.yaml": "apiVersion: v1\nkind: A\nspec: 1\n",
    "odd/blank-lines.yaml": "\n\napiVersion: v1\nkind: A\nmetadata:\n  name: b1\n\n---\n\n\napiVersion: v1\nkind: A\nmetadata:\n  name: b2\n",
    "odd/crlf-no-newline.yml": "apiVersion: v1\r\nkind: A\r\nmetadata:\r\n  name: w\r\n---\r\napiVersion: v1\r\nkind: A\r\nmetadata:\r\n  name: w2",
    "odd/tabs and spaces.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: t\ndata:\n  script: \"a\\tb\"\n",
}


@pytest.fixture
def every_case(tmp_path: Path) -> Path:
    """A package holding every golden input (each in its own directory), odd layouts, a hidden
    directory, non-YAML files and non-resource YAML."""
    root = tmp_path / "every-case"
    for case in golden_cases():
        write_files(root, {f"{case.name}/{case.file_name}": case.input})
    write_files(root, {**EXTRA_LAYOUTS, ".git/HEAD.yaml": "apiVersion: v1\nkind: Hidden\n", "docs/README.md": "# docs\n"})
    return root


def resource_files(root: Path) -> dict[str, bytes]:
    package = read_package(root)
    return {path: source.raw for path, source in package.files.items() if package.in_file(path)}


def test_source_sink_reproduces_every_resource_file(every_case: Path, tmp_path: Path) -> None:
    result = pipe(every_case, tmp_path / "copy")
    assert result.returncode == 0, result.stderr
    expected = resource_files(every_case)
    written = {p: e.content for p, e in snapshot(tmp_path / "copy").items() if e.content is not None}
    assert written == expected
    assert "helm-values-untouched/values.yaml" not in written and len(expected) >= 25


def test_source_sink_reproduces_a_generated_package(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from gen_package import generate

    generate(tmp_path / "gen", 40, 5)
    result = pipe(tmp_path / "gen", tmp_path / "copy")
    assert result.returncode == 0, result.stderr
    original = {p: e.content for p, e in snapshot(tmp_path / "gen").items()}
    assert {p: e.content for p, e in snapshot(tmp_path / "copy").items()} == original
    assert result.stderr.decode() == "fnrun sink: 40 created, 0 updated, 0 deleted, 0 unchanged\n"


def test_sink_back_into_the_source_changes_nothing(every_case: Path) -> None:
    before = snapshot(every_case)
    time.sleep(0.01)
    result = pipe(every_case, every_case)
    assert result.returncode == 0, result.stderr
    assert snapshot(every_case) == before
    assert " 0 created, 0 updated, 0 deleted, " in result.stderr.decode()


def test_source_output_is_a_v1_resource_list(every_case: Path) -> None:
    result = fnrun("source", str(every_case))
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout.startswith(b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
    listing = fast.load(result.stdout.decode(), "source")
    assert [item["kind"] for item in listing["items"]] == [r.data["kind"] for r in read_package(every_case).resources]
    assert b"Hidden" not in result.stdout and "helm-values-untouched/values.yaml" not in result.stdout.decode()


def test_sink_creates_nested_directory_and_default_paths(tmp_path: Path) -> None:
    stream = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Settings\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
    result = fnrun("sink", str(tmp_path / "a" / "b"), stdin=stream)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["settings_configmap.yaml", "web_service.yaml"]
    assert (tmp_path / "a" / "b" / "web_service.yaml").read_bytes() == b"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"


@pytest.mark.parametrize(
    "header",
    [
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
        "apiVersion: config.kubernetes.io/v1beta1\nkind: ResourceList\n",
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: ResourceList\n",
        "apiVersion: v1\nkind: List\n",
    ],
)
def test_sink_accepts_resource_lists_of_every_version_and_lists(tmp_path: Path, header: str) -> None:
    listing = header + (
        "items:\n"
        "  # indented items, as other tools write them\n"
        "  - apiVersion: v1\n"
        "    kind: ConfigMap\n"
        "    metadata:\n"
        "      name: one  # kept\n"
        "      annotations:\n"
        "        config.kubernetes.io/index: '0'\n"
        "        config.kubernetes.io/path: 'x/f.yaml'\n"
        "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: two, annotations: {config.kubernetes.io/path: x/f.yaml, config.kubernetes.io/index: '1'}}}\n"
    )
    result = fnrun("sink", str(tmp_path), stdin=listing.encode())
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "x" / "f.yaml").read_text() == (
        "# indented items, as other tools write them\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one  # kept\n"
        "---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: two}}\n"
    )


def test_sink_accepts_a_plain_stream_with_origin_annotations(tmp_path: Path) -> None:
    stream = (
        "apiVersion: v1\nkind: A\nmetadata:\n  name: b\n  annotations:\n    config.kubernetes.io/path: f.yaml\n    config.kubernetes.io/index: '1'\n"
        "---\n# first\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: f.yaml\n"
    )
    assert fnrun("sink", str(tmp_path), stdin=stream.encode()).returncode == 0
    assert (tmp_path / "f.yaml").read_text() == "# first\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: b\n"


def test_sink_removes_files_whose_resources_left_the_list(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"a.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n", "b.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: b\n", "values.yaml": "x: 1\n"})
    listing = fnrun("source", str(root)).stdout
    only_a = listing.split(b"- apiVersion: v1\n  kind: A\n  metadata:\n    annotations:\n      config.kubernetes.io/path: 'b.yaml'")[0]
    result = fnrun("sink", str(root), stdin=only_a)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["a.yaml", "values.yaml"]


def test_comments_a_function_adds_land_in_the_file(tmp_path: Path) -> None:
    """A function's edit of the ResourceList text (a new comment, a changed value, a new key with
    its own comment) lands in the file; every other line keeps its bytes."""
    original = (
        "# Deployment of the shop\n"
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "    name: shop   # odd spacing stays\n"
        "spec:\n"
        "    replicas: 1\n"
        "    template:\n"
        "        spec:\n"
        "            containers:\n"
        "            -   name: app\n"
        "                image: 'shop:1.0'\n"
    )
    root = write_files(tmp_path / "pkg", {"shop.yaml": original})
    listing = fnrun("source", str(root)).stdout.decode()
    assert "# Deployment of the shop\n- apiVersion: apps/v1\n" in listing and "name: shop   # odd spacing stays" in listing
    edited = listing.replace("      replicas: 1\n", "      # set by the autoscaler function\n      replicas: 3  # was 1\n")
    edited = edited.replace("                  image: 'shop:1.0'\n", "                  image: 'shop:1.1'\n                  # pull policy added by a function\n                  imagePullPolicy: Always\n")
    result = fnrun("sink", str(root), stdin=edited.encode())
    assert result.returncode == 0, result.stderr
    assert (root / "shop.yaml").read_text() == original.replace(
        "    replicas: 1\n", "    # set by the autoscaler function\n    replicas: 3  # was 1\n"
    ).replace(
        "                image: 'shop:1.0'\n", "                image: 'shop:1.1'\n                # pull policy added by a function\n                imagePullPolicy: Always\n"
    )


def test_library_source_and_sink_match_the_cli(every_case: Path, tmp_path: Path) -> None:
    listing = api.source(every_case)
    assert listing.encode() == fnrun("source", str(every_case)).stdout
    plan = api.sink(tmp_path / "lib", listing)
    assert plan.summary().startswith(f"{len(resource_files(every_case))} created, 0 updated")
