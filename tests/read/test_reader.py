"""Reading a package: which files and documents become resources, the origin annotations they
get, the texts functions see, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator import annotations as ann
from orchestrator.errors import InputError
from orchestrator.read.package import package_files, read_package
from orchestrator.run import resourcelist
from orchestrator.yamlio import fast
from testing.io_helpers import golden_cases, write_files

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"


def test_every_resource_gets_path_index_and_internal_twins(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.yaml": CM.format(name="a"), "deep/er/b.yml": CM.format(name="b") + "---\n" + CM.format(name="c")})
    package = read_package(tmp_path)
    seen = {r.data["metadata"]["name"]: ann.annotations_of(r.data) for r in package.resources}
    assert seen["a"] == {ann.PATH: "a.yaml", ann.INDEX: "0", ann.INTERNAL_PATH: "a.yaml", ann.INTERNAL_INDEX: "0"}
    assert seen["c"] == {ann.PATH: "deep/er/b.yml", ann.INDEX: "1", ann.INTERNAL_PATH: "deep/er/b.yml", ann.INTERNAL_INDEX: "1"}
    assert [(r.path, r.index) for r in package.resources] == [("a.yaml", 0), ("deep/er/b.yml", 0), ("deep/er/b.yml", 1)]
    assert package.original("deep/er/b.yml", 1) is package.resources[2]
    assert [r.index for r in package.in_file("deep/er/b.yml")] == [0, 1]


def test_index_counts_resources_only(tmp_path: Path) -> None:
    """Non-resource and empty documents are not resources and take no index."""
    write_files(tmp_path, {"f.yaml": "---\n# comment only\n---\nsettings: 1\n---\n" + CM.format(name="x") + "---\n---\n" + CM.format(name="y")})
    assert [(r.data["metadata"]["name"], r.index) for r in read_package(tmp_path).resources] == [("x", 0), ("y", 1)]


def test_hidden_directories_non_yaml_and_non_resources_are_skipped(tmp_path: Path) -> None:
    write_files(tmp_path, {
        ".git/config.yaml": CM.format(name="hidden"),
        "sub/.cache/c.yaml": CM.format(name="hidden2"),
        "README.md": "apiVersion: v1\nkind: X\n",
        "data.json": '{"apiVersion": "v1", "kind": "X"}',
        "chart/values.yaml": "replicaCount: 1\nimage:\n  repository: nginx\n",
        "empty.yaml": "",
        "comments.yaml": "# nothing but a comment\n",
        "app.yaml": CM.format(name="app"),
    })
    package = read_package(tmp_path)
    assert [r.data["metadata"]["name"] for r in package.resources] == ["app"]
    assert sorted(package.files) == ["app.yaml", "chart/values.yaml", "comments.yaml", "empty.yaml"]


def test_symlink_leaving_the_package_is_refused(tmp_path: Path) -> None:
    outside = write_files(tmp_path / "outside", {"x.yaml": CM.format(name="x")})
    root = write_files(tmp_path / "pkg", {"a.yaml": CM.format(name="a")})
    (root / "x.yaml").symlink_to(outside / "x.yaml")
    with pytest.raises(InputError, match="x.yaml: symlink points outside the package"):
        read_package(root)
    (root / "x.yaml").unlink()
    (root / "dir").symlink_to(outside)
    with pytest.raises(InputError, match="dir: symlink points outside the package"):
        read_package(root)


def test_symlink_inside_the_package_is_followed_for_files_not_directories(tmp_path: Path) -> None:
    root = write_files(tmp_path, {"real/a.yaml": CM.format(name="a")})
    (root / "alias.yaml").symlink_to(root / "real" / "a.yaml")
    (root / "loop").symlink_to(root)
    assert package_files(root) == ["alias.yaml", "real/a.yaml"]


def test_fifo_named_yaml_is_an_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    with pytest.raises(InputError, match="pipe.yaml: cannot read: not a regular file"):
        read_package(tmp_path)


def test_directory_named_yaml_is_walked_not_read(tmp_path: Path) -> None:
    write_files(tmp_path, {"x.yaml/inner.yaml": CM.format(name="in")})
    assert [r.path for r in read_package(tmp_path).resources] == ["x.yaml/inner.yaml"]


@pytest.mark.parametrize("case", golden_cases(), ids=lambda c: c.name)
def test_stamped_text_strips_back_to_the_users_bytes(tmp_path: Path, case) -> None:
    """What functions see is the user's document with the annotations added as whole lines (or, in
    rare layouts, noted): the body is the document exactly as written, comments and all."""
    (tmp_path / case.file_name).write_bytes(case.input)
    package = read_package(tmp_path)
    content = case.input.decode().replace("\r\n", "\n")
    content += "" if content.endswith("\n") else "\n"  # read as lines; the writer drops it again
    for resource in package.resources:
        assert resource.body is not None and resource.body in content
        assert fast.load(resource.text, "t") == resource.data
        for comment in (line.strip() for line in resource.body.splitlines() if line.strip().startswith("#")):
            assert comment in resource.text
        if resource.original_text is not None:
            assert resource.original_text == resource.body  # noted: an indented document
            continue
        stamped_lines = set(resource.text.splitlines()) - set(resource.body.splitlines())
        assert all("config.kubernetes.io/" in line or line.strip() == "annotations:" for line in stamped_lines)


def test_flow_style_metadata_gets_a_note_with_its_own_text(tmp_path: Path) -> None:
    doc = '{"apiVersion": "v1", "kind": "A", "metadata": {"name": "j"}}\n'
    write_files(tmp_path, {"j.yaml": doc})
    (resource,) = read_package(tmp_path).resources
    assert ann.annotations_of(resource.data)[ann.ORIGINAL] == doc and resource.original_text == doc
    assert ann.without_stripped(resource.data) == {"apiVersion": "v1", "kind": "A", "metadata": {"name": "j"}}


def test_crlf_and_missing_final_newline_are_noted_on_the_last_resource(tmp_path: Path) -> None:
    body = CM.format(name="a") + "---\n" + CM.format(name="b")
    write_files(tmp_path, {"w.yaml": body.replace("\n", "\r\n").rstrip("\r\n")})
    package = read_package(tmp_path)
    assert [r.file_format for r in package.resources] == ["", "crlf,no-final-newline"]
    source = package.files["w.yaml"]
    assert source.crlf and not source.final_newline and source.raw.startswith(b"apiVersion: v1\r\n")


def test_aliased_metadata_is_not_stamped_twice(tmp_path: Path) -> None:
    """Annotations go on the resource's own metadata, not on another map an alias shares."""
    write_files(tmp_path, {"d.yaml": "apiVersion: v1\nkind: A\nmetadata: &meta\n  name: a\nspec:\n  template:\n    metadata: *meta\n"})
    (resource,) = read_package(tmp_path).resources
    assert "annotations" not in resource.data["spec"]["template"]["metadata"]
    assert ann.get_path(resource.data) == "d.yaml"


def test_source_list_carries_every_resource_with_its_comments(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.yaml": "# head of a\n" + CM.format(name="a").replace("k: v", "k: v  # inline")})
    package = read_package(tmp_path)
    listing = resourcelist.encode(package.resources)
    assert listing.startswith("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n# head of a\n- apiVersion: v1\n")
    assert "k: v  # inline" in listing and "config.kubernetes.io/path: 'a.yaml'" in listing
    value = fast.load(listing, "list")
    assert value["items"] == [r.data for r in package.resources]


def test_yaml_1_2_scalars_stay_as_written(tmp_path: Path) -> None:
    write_files(tmp_path, {"s.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: s\ndata:\n  a: yes\n  b: on\n  c: 2024-01-01\n  d: 012\n  e: 0x1F\n  f: ~\n"})
    (resource,) = read_package(tmp_path).resources
    assert resource.data["data"] == {"a": "yes", "b": "on", "c": "2024-01-01", "d": 12, "e": 31, "f": None}


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="missing: does not exist"):
        read_package(tmp_path / "missing")
    (tmp_path / "file.yaml").write_text("a: 1\n")
    with pytest.raises(InputError, match="file.yaml: not a directory"):
        read_package(tmp_path / "file.yaml")
