"""A function config directory the sandbox user cannot read (mode 0700, as `mktemp -d` makes it):
the function still sees it at /local, read-only, as a copy; the host's files are not touched; a
writable mount that cannot be copied is refused before anything runs."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.access import blocked_by
from orchestrator.runtimes.container.upload import archive
from testing.pipeline_helpers import assert_one_line_error, fnrun, function_config, snapshot, write_package

PROBE = "fnrun-test/probe:v1"


def volumes() -> set[str]:
    return {volume.id for volume in docker.from_env().volumes.list()}


def probe_report(stdout: str) -> dict[str, str]:
    from orchestrator.run import resourcelist

    items = resourcelist.decode(stdout, "output").items
    return next(item.data["data"] for item in items if item.data["metadata"]["name"] == "sandbox-probe")


def test_unreadable_config_directory_is_copied_in_read_only(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {
        "fn.yaml": function_config(PROBE, {"envs": "HOME"}),
        "secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  k: v\n",
        "sub/deep.txt": "not yaml\n",
    })
    (package / "secret.yaml").chmod(0o600)
    (package / "sub").chmod(0o700)
    package.chmod(0o700)
    assert blocked_by(package, 65534, 65534) is not None
    before, volumes_before = snapshot(package), volumes()

    result = fnrun("run", str(package), "--output", "-")

    assert result.code == 0, result.stderr
    report = probe_report(result.stdout)
    assert report["localListing"] == "fn.yaml,secret.yaml,sub"
    assert report["localWritable"] == "false"
    assert report["uid"] == "65534"
    assert snapshot(package) == before
    assert oct(package.stat().st_mode & 0o777) == "0o700"
    assert volumes() - volumes_before == set(), "the copy's volume was left behind"


def test_readable_config_directory_is_still_bind_mounted(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {"fn.yaml": function_config(PROBE, {"envs": "HOME"})})
    package.chmod(0o755)
    assert blocked_by(package, 65534, 65534) is None
    result = fnrun("run", str(package), "--output", "-")
    assert result.code == 0, result.stderr
    assert probe_report(result.stdout)["localListing"] == "fn.yaml"


def test_writable_mount_the_sandbox_user_cannot_read_is_refused_before_anything_runs(tmp_path: Path, test_images: None) -> None:
    package = write_package(tmp_path / "pkg", {
        "fn.yaml": function_config(PROBE, extra="  mounts:\n  - source: cache\n    target: /cache\n    readOnly: false"),
        "cache/x": "1\n",
    })
    package.chmod(0o755)
    (package / "cache").chmod(0o700)
    before = snapshot(package)
    result = fnrun("run", str(package))
    assert_one_line_error(result, "cache", "/cache", "uid 65534", "chmod o+rx", code=2)
    assert snapshot(package) == before


def test_archive_is_root_owned_read_only_and_keeps_executables_and_links(tmp_path: Path) -> None:
    source = write_package(tmp_path / "d", {"a.yaml": "x: 1\n", "bin/run.sh": "#!/bin/sh\n"})
    (source / "bin" / "run.sh").chmod(0o700)
    (source / "a.yaml").chmod(0o600)
    (source / "link").symlink_to("a.yaml")
    with tarfile.open(fileobj=io.BytesIO(archive(source, "/local", "fn"))) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {".", "a.yaml", "bin", "bin/run.sh", "link"}
    assert {m.uid for m in members.values()} == {0}
    assert members["."].mode == members["bin"].mode == 0o555
    assert members["a.yaml"].mode == 0o444 and members["bin/run.sh"].mode == 0o555
    assert members["link"].issym() and members["link"].linkname == "a.yaml"


def test_archive_refuses_a_tree_over_the_limit(tmp_path: Path) -> None:
    from orchestrator.errors import InputError

    source = write_package(tmp_path / "d", {"big": "x" * 2048})
    with pytest.raises(InputError, match="too big"):
        archive(source, "/local", "fn", limit=1024)
