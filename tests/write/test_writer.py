"""Write-back: golden edits of every hard YAML case, untouched files, default paths, path safety,
mode bits and all-or-nothing atomic writes."""

from __future__ import annotations

import copy
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator import annotations as ann
from orchestrator.errors import InputError
from orchestrator.read.package import read_package
from orchestrator.resource import Resource
from orchestrator.run import resourcelist
from orchestrator.write import writeback
from testing.io_helpers import (
    REPO,
    apply_edits,
    edit_package,
    fnrun_here,
    golden_cases,
    idempotent,
    snapshot,
    write_files,
)

CASES = golden_cases()

CM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
data:
  k: v
"""


def cm(name: str) -> str:
    return CM.format(name=name)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_edit(tmp_path: Path, case) -> None:
    """Read the input, change it through the API, write: the file is the checked-in expected file."""
    target = tmp_path / case.file_name
    target.write_bytes(case.input)
    edit_package(tmp_path, case.edits)
    written = target.read_bytes() if target.exists() else None
    assert written == case.expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_second_write_is_a_no_op(tmp_path: Path, case) -> None:
    """Writing the result again (as read back, and with the same edits again) changes nothing,
    not even an mtime."""
    (tmp_path / case.file_name).write_bytes(case.input)
    edit_package(tmp_path, case.edits)
    before = snapshot(tmp_path)
    time.sleep(0.01)
    package = read_package(tmp_path)
    assert writeback.write(tmp_path, package.resources, package).changes == []
    if idempotent(case.edits):
        package = read_package(tmp_path)
        assert writeback.write(tmp_path, apply_edits(package.resources, case.edits), package).changes == []
    assert snapshot(tmp_path) == before


def test_golden_inputs_cover_the_cases_of_the_issue() -> None:
    names = {c.name for c in CASES}
    for needed in (
        "comments", "comments-between-documents", "key-order", "quoting", "block-scalars", "flow-collections",
        "anchors-aliases", "indent-2-indented-sequences", "indent-2-nonindented-sequences",
        "indent-4-indented-sequences", "indent-4-nonindented-sequences", "crlf", "no-final-newline",
        "multi-document-one-changes", "document-start-marker", "document-end-markers", "non-resource-document-kept",
        "helm-values-untouched", "empty-and-comment-only-documents", "unicode",
        "indent-uneven-mappings", "indent-one-space-document", "trailing-spaces", "mixed-line-endings",
        "all-resources-dropped-keeps-non-resource-documents",
    ):
        assert needed in names
    assert b"\r\n" in next(c for c in CASES if c.name == "crlf").expected
    assert not next(c for c in CASES if c.name == "no-final-newline").expected.endswith(b"\n")


def _lines(content: bytes) -> list[bytes]:
    return content.splitlines(keepends=True)


@pytest.mark.parametrize("name", ["indent-uneven-mappings", "indent-one-space-document", "trailing-spaces", "mixed-line-endings"])
def test_uneven_layouts_keep_every_line_the_edit_did_not_change(name: str) -> None:
    """Each original line (its indentation, trailing spaces and own line end included) is still
    there, in order, unless the edit set its value (the golden files show the new lines indented
    like their siblings)."""
    case = next(c for c in CASES if c.name == name)
    changed_keys = {str(e["set"][-1]).encode() for e in case.edits}
    kept = [line for line in _lines(case.input) if line.strip().split(b":")[0] not in changed_keys]
    out = iter(_lines(case.expected))
    assert all(any(line == other for other in out) for line in kept)  # a subsequence


def test_untouched_file_keeps_bytes_and_mtime(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.yaml": cm("a"), "sub/b.yaml": "# b\n" + cm("b"), "values.yaml": "replicaCount: 1\n"})
    before = snapshot(tmp_path)
    time.sleep(0.01)
    package = read_package(tmp_path)
    edited = [r.replaced({**r.data, "data": {"k": "new"}}) if r.data["metadata"]["name"] == "a" else r for r in package.resources]
    plan = writeback.write(tmp_path, edited, package)
    after = snapshot(tmp_path)
    assert [c.path for c in plan.changes] == ["a.yaml"] and plan.unchanged == ["sub/b.yaml"]
    assert after["sub/b.yaml"] == before["sub/b.yaml"] and after["values.yaml"] == before["values.yaml"]
    assert after["a.yaml"].content == cm("a").replace("k: v", "k: new").encode()


def test_same_resources_written_twice_is_a_no_op(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.yaml": cm("a") + "---\n" + cm("b")})
    package = read_package(tmp_path)
    edited = [r.replaced({**r.data, "data": {"k": "2"}}) for r in package.resources]
    writeback.write(tmp_path, edited, package)
    once = snapshot(tmp_path)
    time.sleep(0.01)
    again = read_package(tmp_path)
    plan = writeback.write(tmp_path, [r.replaced(copy.deepcopy(r.data)) for r in again.resources], again)
    assert plan.changes == [] and snapshot(tmp_path) == once


def test_file_whose_resources_are_all_gone_is_deleted(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.yaml": cm("a") + "---\n" + cm("b"), "keep.yaml": cm("k"), "values.yaml": "x: 1\n", "notes.txt": "hi"})
    package = read_package(tmp_path)
    plan = writeback.write(tmp_path, [r for r in package.resources if r.path == "keep.yaml"], package)
    assert [(c.path, c.new) for c in plan.changes] == [("a.yaml", None)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.yaml", "notes.txt", "values.yaml"]


def test_resource_without_path_goes_to_default_path(tmp_path: Path) -> None:
    """`<name>_<kind>.yaml`, lowercased; the same name and kind twice share one file."""
    new = [
        Resource({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "My-App"}}),
        Resource({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "My-App"}, "spec": {"a": 1}}),
        Resource({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "My-App", "namespace": "x"}}),
    ]
    writeback.write(tmp_path, new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-app_deployment.yaml", "my-app_service.yaml"]
    services = (tmp_path / "my-app_service.yaml").read_text()
    assert services.count("kind: Service") == 2 and "\n---\n" in services
    assert ann.default_path({"metadata": {"name": "x"}, "kind": "K"}, "dir/sub") == "dir/sub/x_k.yaml"


def test_annotations_stripped_and_map_left_empty_removed(tmp_path: Path) -> None:
    stamped = {
        ann.PATH: "out.yaml", ann.INDEX: "0", ann.INTERNAL_PATH: "out.yaml", ann.INTERNAL_INDEX: "0",
    }
    only_ours = {"apiVersion": "v1", "kind": "A", "metadata": {"name": "a", "annotations": dict(stamped)}}
    mixed = {"apiVersion": "v1", "kind": "B", "metadata": {"name": "b", "annotations": {**stamped, ann.INDEX: "1", ann.INTERNAL_INDEX: "1", "keep": "me"}}}
    writeback.write(tmp_path, [Resource(mixed), Resource(only_ours)])
    content = (tmp_path / "out.yaml").read_text()
    assert content == "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n  annotations:\n    keep: me\n"


def test_resources_grouped_by_path_and_ordered_by_index_missing_index_is_zero(tmp_path: Path) -> None:
    def at(name: str, index: str | None) -> Resource:
        annotations = {ann.PATH: "f.yaml", **({ann.INDEX: index} if index is not None else {})}
        return Resource({"apiVersion": "v1", "kind": "A", "metadata": {"name": name, "annotations": annotations}})

    writeback.write(tmp_path, [at("two", "2"), at("zero", None), at("one", "1")])
    names = [line.split(": ")[1] for line in (tmp_path / "f.yaml").read_text().splitlines() if "name:" in line]
    assert names == ["zero", "one", "two"]


def test_new_resource_added_to_an_existing_file_keeps_the_rest(tmp_path: Path) -> None:
    original = "# first\n" + cm("a")
    write_files(tmp_path, {"f.yaml": original})
    package = read_package(tmp_path)
    extra = Resource({"apiVersion": "v1", "kind": "A", "metadata": {"name": "b", "annotations": {ann.PATH: "f.yaml", ann.INDEX: "1"}}})
    writeback.write(tmp_path, [*package.resources, extra], package)
    assert (tmp_path / "f.yaml").read_text() == original + "---\napiVersion: v1\nkind: A\nmetadata:\n  name: b\n"


@pytest.mark.parametrize(
    "path, message",
    [
        ("/etc/evil.yaml", "must be relative"),
        ("../evil.yaml", "contains '..'"),
        ("sub/../../evil.yaml", "contains '..'"),
        ("outside/evil.yaml", "through a symlink"),
        ("link.yaml", "through a symlink"),
        ("adir", "is a directory"),
    ],
)
def test_unsafe_path_is_an_error_and_nothing_is_written(tmp_path: Path, path: str, message: str) -> None:
    root = tmp_path / "pkg"
    write_files(root, {"a.yaml": cm("a"), "adir/x.txt": "x"})
    package = read_package(root)  # before the escaping links exist: reading would refuse them
    (tmp_path / "elsewhere").mkdir()
    (root / "outside").symlink_to(tmp_path / "elsewhere")
    (root / "link.yaml").symlink_to(tmp_path / "elsewhere" / "target.yaml")
    before = snapshot(root)
    changed = package.resources[0].replaced({**package.resources[0].data, "data": {"k": "changed"}})
    bad = Resource({"apiVersion": "v1", "kind": "A", "metadata": {"name": "bad", "annotations": {ann.PATH: path}}})
    with pytest.raises(InputError, match=message):
        writeback.write(root, [changed, bad], package)
    assert snapshot(root) == before
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_symlink_inside_the_package_is_a_valid_target(tmp_path: Path) -> None:
    write_files(tmp_path, {"real/a.yaml": cm("a")})
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert writeback.check_path(tmp_path, "alias/a.yaml") == tmp_path / "alias" / "a.yaml"


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755])
def test_mode_bits_kept(tmp_path: Path, mode: int) -> None:
    write_files(tmp_path, {"a.yaml": cm("a")})
    (tmp_path / "a.yaml").chmod(mode)
    edit_package(tmp_path, [{"set": ["data", "k"], "value": "new"}])
    assert (tmp_path / "a.yaml").stat().st_mode & 0o7777 == mode
    assert b"k: new" in (tmp_path / "a.yaml").read_bytes()


def test_new_file_gets_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        writeback.write(tmp_path, [Resource({"apiVersion": "v1", "kind": "A", "metadata": {"name": "n"}})])
    finally:
        os.umask(old)
    assert (tmp_path / "n_a.yaml").stat().st_mode & 0o777 == 0o640


def _leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if p.name.endswith(".fnrun-tmp")]


def test_failure_while_staging_leaves_every_file_as_it_was(tmp_path: Path) -> None:
    """A real fault midway: the second target's directory is a regular file by the time the plan
    is applied (the plan refuses a path under a file), so staging it fails after the first file
    was staged. The first file keeps its old bytes, no temp file stays, nothing lands."""
    write_files(tmp_path, {"a.yaml": cm("a"), "z.yaml": cm("z")})
    package = read_package(tmp_path)
    edited = [r.replaced({**r.data, "data": {"k": "changed"}}) for r in package.resources]
    stuck = Resource({"apiVersion": "v1", "kind": "A", "metadata": {"name": "s", "annotations": {ann.PATH: "notes/s.yaml"}}})
    plan = writeback.plan(tmp_path, [*edited, stuck], package)
    assert [c.path for c in plan.changes] == ["a.yaml", "notes/s.yaml", "z.yaml"]
    (tmp_path / "notes").write_text("a regular file\n")
    before = snapshot(tmp_path)
    with pytest.raises(InputError, match="cannot write"):
        writeback.apply(plan)
    assert snapshot(tmp_path) == before and _leftovers(tmp_path) == []


def test_file_size_limit_fault_in_the_cli_writes_nothing(tmp_path: Path) -> None:
    """Another real fault, through `fnrun sink`: RLIMIT_FSIZE makes writing the big file fail
    (EFBIG) after the small ones were staged; the package stays as it was."""
    root = write_files(tmp_path / "pkg", {"a.yaml": cm("a"), "b.yaml": cm("b")})
    listing = resourcelist.encode(read_package(root).resources)
    big = "x" * 20_000
    content = listing.replace("    k: v\n", f"    k: {big}\n", 1)
    before = snapshot(root)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8_000, 8_000))

    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "sink", str(root)],
        input=content.encode(), capture_output=True, preexec_fn=limit, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.decode().startswith("fnrun: error: cannot write") and "Traceback" not in proc.stderr.decode()
    assert snapshot(root) == before and _leftovers(root) == []


def test_killed_write_leaves_each_file_old_or_new(tmp_path: Path, fast_subset: bool) -> None:
    """SIGKILL at several moments of a big `fnrun sink` over an existing package: every file is
    either entirely its old bytes or entirely its new bytes, never a mix or a truncation (at
    three of the moments in the fast subset, one of them the write left to finish)."""
    sys.path.insert(0, str(REPO / "bench"))
    from gen_package import generate

    generate(tmp_path / "src", 300, 5)
    listing = fnrun_here("source", str(tmp_path / "src")).stdout
    changed = listing.replace(b"LOG_LEVEL: info", b"LOG_LEVEL: debug")
    old = {p: (tmp_path / "src" / p).read_bytes() for p in snapshot(tmp_path / "src") if p.endswith(".yaml")}
    new = {p: b.replace(b"LOG_LEVEL: info", b"LOG_LEVEL: debug") for p, b in old.items()}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    outcomes = set()
    for delay in (0.2, 0.8, 30) if fast_subset else (0.2, 0.5, 0.8, 1.2, 30):
        root = tmp_path / f"pkg-{delay}"
        generate(root, 300, 5)
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "sink", str(root)], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdin is not None
        proc.stdin.write(changed)
        proc.stdin.close()
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        states = {p: "old" if (root / p).read_bytes() == old[p] else "new" if (root / p).read_bytes() == new[p] else "torn" for p in old}
        assert "torn" not in states.values()
        outcomes.add(frozenset(states.values()))
        deadline = time.monotonic() + 10  # the staging helper outlives the kill and rolls back
        while _leftovers(root) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _leftovers(root) == []
    assert frozenset({"new"}) in outcomes


def test_sink_without_a_files_resources_keeps_its_non_resource_documents(tmp_path: Path) -> None:
    """Through the real CLI (the streaming writer): a file whose resources are all missing from
    the sink's input keeps its other documents; a file that held only resources is deleted."""
    mixed = "# chart values\nreplicaCount: 3\n---\n" + cm("gone")
    root = write_files(tmp_path / "pkg", {"mixed.yaml": mixed, "only.yaml": cm("only"), "keep.yaml": cm("keep")})
    listing = resourcelist.encode([r for r in read_package(root).resources if r.path == "keep.yaml"])
    result = fnrun_here("sink", str(root), stdin=listing.encode())
    assert result.returncode == 0, result.stderr
    assert (root / "mixed.yaml").read_text() == "# chart values\nreplicaCount: 3\n"
    assert not (root / "only.yaml").exists() and (root / "keep.yaml").read_text() == cm("keep")
