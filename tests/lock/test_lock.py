"""`fnrun lock` and locked runs, through the real CLI on the real engine, against a local registry
(Debian's docker-registry in a container, as the pull-policy tests start it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from testing.lock_fixtures import build, build_ran, lock_entries, package, remove, unique
from testing.pipeline_helpers import REPO, assert_one_line_error, fnrun, function_config, snapshot, write_package
from testing.registry import push
from testing.runtime_fixtures import api


def test_lock_of_the_samples_names_every_image_once_with_its_files_and_is_stable(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    first = fnrun("lock", str(tmp_path / "samples"), "--image-prefix", "fnrun")
    assert first.code == 0, first
    lock = tmp_path / "samples" / "fnrun.lock"
    written = lock.read_bytes()
    entries = lock_entries(lock)
    assert sorted(entries) == sorted(
        f"fnrun/{name}:v1" for name in ("check-service-selectors", "inject-sidecar", "nginx-template", "require-resource-limits",
                                        "set-labels", "set-namespace", "tshirt-size")
    )
    assert entries["fnrun/set-labels:v1"]["declaredIn"] == [
        "kpt-package/Kptfile", "kpt-package/backend/Kptfile", "kpt-package/frontend/Kptfile", "set-labels/fn-config.yaml"]
    assert entries["fnrun/set-namespace:v1"]["declaredIn"] == [
        "kpt-package/backend/Kptfile", "kpt-package/frontend/Kptfile", "set-namespace/fn-config.yaml"]
    assert all(e["id"].startswith("sha256:") for e in entries.values())
    again = fnrun("lock", str(tmp_path / "samples"), "--image-prefix", "fnrun")
    assert again.code == 0 and "unchanged" in again.stderr, again
    assert lock.read_bytes() == written
    assert fnrun("lock", "--check", str(tmp_path / "samples"), "--image-prefix", "fnrun").code == 0


def test_lock_of_a_kpt_package_with_subpackages_and_annotations(tmp_path: Path) -> None:
    label, generate = "fnrun-test/label:v1", "fnrun-test/generate:v1"

    def kptfile(name: str, *images: str) -> str:
        steps = "".join(f"  - image: {image}\n" for image in images)
        return f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n{steps}"

    write_package(tmp_path / "repo", {
        "app/Kptfile": kptfile("app", "label:v1"),
        "app/db/Kptfile": kptfile("db", "label:v1", "generate:v1"),
        "app/db/cache/Kptfile": kptfile("cache", "generate:v1"),
        "app/db/cache/fn.yaml": function_config(label),
    })
    (tmp_path / "repo" / ".git").mkdir()  # the repository root: the lock goes there
    result = fnrun("lock", str(tmp_path / "repo" / "app"), "--image-prefix", "fnrun-test", "--image", "fnrun-test/identity:v1")
    assert result.code == 0, result
    entries = lock_entries(tmp_path / "repo" / "fnrun.lock")
    assert {image: e["declaredIn"] for image, e in entries.items()} == {
        label: ["app/Kptfile", "app/db/Kptfile", "app/db/cache/fn.yaml"],
        generate: ["app/db/Kptfile", "app/db/cache/Kptfile"],
        "fnrun-test/identity:v1": ["--image"],
    }
    assert entries[label]["id"] == api().inspect_image(label)["Id"]
    assert "digest" not in entries[label]  # built here: no registry knows it, the ID is the identity


def test_a_locked_run_refuses_a_moved_tag_and_no_lock_follows_it(tmp_path: Path, registry: str) -> None:
    tag = f"{registry}/{unique('moved')}:v1"
    old_id = build(tag, "old")
    push(tag)
    root = package(tmp_path / "pkg", tag)
    try:
        assert fnrun("lock", str(root)).code == 0
        entry = lock_entries(root / "fnrun.lock")[tag]
        assert entry["id"] == old_id and entry["digest"].startswith("sha256:")
        assert fnrun("run", str(root), "-q").code == 0 and build_ran(root) == "old"
        reset(root)

        new_id = build(tag, "new")  # the tag moves, here and in the registry
        push(tag)
        before = snapshot(root)
        refused = fnrun("run", str(root))
        assert_one_line_error(refused, tag, "fn.yaml", "the tag moved", "fnrun lock", code=4)
        assert snapshot(root) == before
        stale = fnrun("lock", "--check", str(root))
        assert stale.code == 3 and f"{tag}: locked {entry['digest']}" in stale.stderr, stale

        assert fnrun("run", str(root), "--no-lock", "-q").code == 0 and build_ran(root) == "new"
        reset(root)
        api().tag(old_id, tag.rsplit(":", 1)[0], "v1")  # the locked content under the tag again: accepted
        assert fnrun("run", str(root), "-q").code == 0 and build_ran(root) == "old"
        reset(root)

        remove(tag, old_id, new_id)  # neither tag nor image here: the locked content comes by digest
        assert fnrun("run", str(root), "-q").code == 0 and build_ran(root) == "old"
    finally:
        remove(tag, old_id)


def reset(root: Path) -> None:
    (root / "cm.yaml").write_text((root / "cm.yaml").read_text().replace(f"build: {build_ran(root)}", "build: none"))


def test_lock_pull_locks_what_the_registry_serves(tmp_path: Path, registry: str) -> None:
    tag = f"{registry}/{unique('pull')}:v1"
    build(tag, "served")
    push(tag)
    served = api().inspect_image(tag)["RepoDigests"][0].partition("@")[2]
    remove(tag)
    root = package(tmp_path / "pkg", tag)
    try:
        result = fnrun("lock", "--pull", str(root))
        assert result.code == 0, result
        assert lock_entries(root / "fnrun.lock")[tag]["digest"] == served
        assert fnrun("run", str(root), "-q", "--image-pull-policy", "never").code == 0 and build_ran(root) == "served"
    finally:
        remove(tag)


def test_an_image_missing_from_the_lock_is_refused_naming_its_file(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", "fnrun-test/identity:v1")
    assert fnrun("lock", str(root)).code == 0
    write_package(root, {"more/fn.yaml": function_config("fnrun-test/label:v1")})
    before = snapshot(root)
    result = fnrun("run", str(root))
    assert_one_line_error(result, "more/fn.yaml", "fnrun-test/label:v1", "is not in", "fnrun lock", code=2)
    assert snapshot(root) == before
    assert fnrun("lock", "--check", str(root)).code == 3
    assert fnrun("run", str(root), "--no-lock", "-q").code == 0


def test_a_lock_with_an_unknown_field_is_one_line(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", "fnrun-test/identity:v1")
    assert fnrun("lock", str(root)).code == 0
    lock = root / "fnrun.lock"
    lock.write_text(lock.read_text().replace("  declaredIn:", "  pinned: yes\n  declaredIn:"))
    before = snapshot(root)
    for command in (("run", str(root)), ("lock", "--check", str(root)), ("images", "save", str(tmp_path / "b.tar"), str(root))):
        result = fnrun(*command)
        assert_one_line_error(result, "fnrun.lock: images[0]: unknown field 'pinned'", code=2)
    assert snapshot(root) == before and not (tmp_path / "b.tar").exists()


def test_a_lock_naming_an_image_that_no_longer_exists(tmp_path: Path) -> None:
    tag = f"{unique('gone')}:v1"
    build(tag, "gone")
    root = package(tmp_path / "pkg", tag)
    assert fnrun("lock", str(root)).code == 0
    remove(tag)
    before = snapshot(root)
    result = fnrun("run", str(root))
    assert_one_line_error(result, tag, "fn.yaml", "is not present in the engine", "fnrun images load", code=4)
    assert snapshot(root) == before
    relock = fnrun("lock", str(root))
    assert_one_line_error(relock, tag, "is not present in the engine", code=4)
    assert snapshot(root) == before


def test_builtins_answer_under_a_lock_only_where_it_lets_them(tmp_path: Path) -> None:
    kptfile = ("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n"
               "  - image: set-namespace:v0.4.1\n    configMap:\n      namespace: prod\n")
    root = write_package(tmp_path / "app", {"Kptfile": kptfile, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})
    assert fnrun("lock", str(root)).code == 4  # kpt's image is not here, and fnrun's code was not offered
    assert fnrun("lock", str(root), "--builtin-catalog").code == 0
    entry = lock_entries(root / "fnrun.lock")["ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1"]
    assert entry["servedBy"] == "fnrun" and entry["source"].startswith("sha256:") and "id" not in entry
    result = fnrun("render", str(root), "--no-status")  # the lock's word is enough: no --builtin-catalog
    assert result.code == 0, result
    assert "namespace: prod" in (root / "cm.yaml").read_text()

    lock = root / "fnrun.lock"
    lock.write_text(lock.read_text().replace(entry["source"], "sha256:" + "0" * 64))
    before = snapshot(root)
    assert_one_line_error(fnrun("render", str(root)), "served by fnrun's code", "fnrun lock", code=4)
    assert snapshot(root) == before


def test_lock_bytes_are_stable_yaml(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", "fnrun-test/identity:v1")
    assert fnrun("lock", str(root)).code == 0
    text = (root / "fnrun.lock").read_text()
    data = yaml.safe_load(text)
    assert data["apiVersion"] == "fnrun.dev/v1alpha1" and data["kind"] == "ImageLock"
    assert text.splitlines()[4:] == [
        "- image: fnrun-test/identity:v1", f"  id: {api().inspect_image('fnrun-test/identity:v1')['Id']}", "  declaredIn:", "  - fn.yaml"]
