"""`fnrun images save` / `fnrun images load`: the locked images carried in one docker-archive,
checked against the lock before the engine sees them. Real engine, images of the tests' own."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.runtimes.container.imagestore import identity
from testing.lock_fixtures import build, build_ran, remove, unique
from testing.pipeline_helpers import assert_one_line_error, fnrun, snapshot, write_package
from testing.runtime_fixtures import api


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A kpt package with a subpackage, two images built here (no registry), locked."""
    first, second = f"{unique('bundle-a')}:v1", f"{unique('bundle-b')}:v1"
    build(first, "first")
    build(second, "second")
    kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n  - image: {image}\n"
    root = write_package(tmp_path / "repo", {
        "Kptfile": kptfile.format(name="app", image=first),
        "db/Kptfile": kptfile.format(name="db", image=second),
        "db/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  build: none\n",
    })
    assert fnrun("lock", str(root)).code == 0
    try:
        yield root, [first, second]
    finally:
        remove(first, second)


def test_save_remove_load_then_render_offline(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bundle = tmp_path / "functions.tar"
    saved = fnrun("images", "save", str(bundle), str(root))
    assert saved.code == 0 and "saved 2 images" in saved.stderr, saved
    ids = [identity(image).id for image in images]
    remove(*images)
    assert all(identity(image) is None for image in images)

    loaded = fnrun("images", "load", str(bundle), str(root))
    assert loaded.code == 0 and "loaded 2 images" in loaded.stderr, loaded
    assert [identity(image).id for image in images] == ids
    result = fnrun("render", str(root), "--image-pull-policy", "never", "--no-status", "-q")
    assert result.code == 0, result
    assert build_ran(root / "db") == "second"  # the subpackage first; the root's then finds no "none" left
    assert fnrun("render", str(root), "--image-pull-policy", "never", "--no-status", "--no-lock", "-q").code == 0


def _rewrite(bundle: Path, out: Path, change) -> None:
    """A copy of a docker-archive with `change(name, bytes) -> bytes` applied to each member."""
    with tarfile.open(bundle) as source, tarfile.open(out, "w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if data is not None:
                data = change(member.name, data)
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)


def _refused_whole(tmp_path: Path, root: Path, images: list[str], bad: Path, *needles: str) -> None:
    remove(*images)
    before = snapshot(root)
    result = fnrun("images", "load", str(bad), str(root))
    assert_one_line_error(result, str(bad), "nothing loaded", *needles, code=2)
    assert all(identity(image) is None for image in images)  # the engine never got it
    assert snapshot(root) == before


def test_a_bundle_with_a_changed_layer_is_refused_and_nothing_loaded(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bundle, bad = tmp_path / "good.tar", tmp_path / "bad.tar"
    assert fnrun("images", "save", str(bundle), str(root)).code == 0
    manifest = json.loads(tarfile.open(bundle).extractfile("manifest.json").read())
    last_layer = manifest[0]["Layers"][-1]
    _rewrite(bundle, bad, lambda name, data: data + b"\0" * 512 if name == last_layer else data)
    _refused_whole(tmp_path, root, images, bad, f"layer {last_layer}", "does not hash to")


def test_a_bundle_whose_manifest_is_not_json_is_refused(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bundle, bad = tmp_path / "good.tar", tmp_path / "bad.tar"
    assert fnrun("images", "save", str(bundle), str(root)).code == 0
    _rewrite(bundle, bad, lambda name, data: b'[{"Config": ' if name == "manifest.json" else data)
    _refused_whole(tmp_path, root, images, bad, "not a readable image bundle")


def test_a_truncated_bundle_is_refused(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bundle, bad = tmp_path / "good.tar", tmp_path / "cut.tar"
    assert fnrun("images", "save", str(bundle), str(root)).code == 0
    bad.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    _refused_whole(tmp_path, root, images, bad)


def test_a_file_that_is_no_bundle_is_refused(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bad = tmp_path / "notes.tar"
    bad.write_text("not an archive\n")
    _refused_whole(tmp_path, root, images, bad, "not a readable image bundle")


def test_a_bundle_of_other_content_under_the_locked_tags_is_refused(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    bundle = tmp_path / "functions.tar"
    assert fnrun("images", "save", str(bundle), str(root)).code == 0
    lock = root / "fnrun.lock"
    locked_bytes = lock.read_bytes()
    build(images[0], "rebuilt")  # the tag now names other content: relock, save that bundle
    assert fnrun("lock", str(root)).code == 0
    other = tmp_path / "other.tar"
    assert fnrun("images", "save", str(other), str(root)).code == 0
    lock.write_bytes(locked_bytes)  # back to the first lock: the second bundle is not what it pins
    _refused_whole(tmp_path, root, images, other, images[0], "in the bundle, not")


def test_save_refuses_when_a_tag_moved_since_the_lock(tmp_path: Path, locked: tuple[Path, list[str]]) -> None:
    root, images = locked
    moved = build(images[1], "moved")
    bundle = tmp_path / "functions.tar"
    result = fnrun("images", "save", str(bundle), str(root))
    assert_one_line_error(result, images[1], moved, "fnrun lock", code=4)
    assert list(tmp_path.glob("*.tar")) == [] and not list(tmp_path.glob(".functions.tar.*"))


def test_save_and_load_without_a_lock_say_so(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    for command in (("images", "save", str(tmp_path / "b.tar"), str(tmp_path)), ("images", "load", str(tmp_path / "b.tar"), str(tmp_path))):
        assert_one_line_error(fnrun(*command), "no fnrun.lock governs", "fnrun lock", code=2)
    assert not (tmp_path / "b.tar").exists()
    api()  # the engine is still there for the other tests
