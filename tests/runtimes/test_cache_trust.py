"""A cache only its owner can fill: an entry another user could have written (owned by another
uid, writable by group or others, below such a directory), a symbolic link or a FIFO is a miss,
through the real CLI on real containers: the function runs, its own output is written, the run
says why once, and nothing hangs. The tests run as root, so "another user" is nobody (65534)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from testing.pipeline_helpers import function_config, write_package
from testing.runtime_fixtures import run_counting_containers as run

LABEL = "fnrun-test/label:v1"
NOBODY = 65534


def package(root: Path) -> Path:
    return write_package(root, {
        "fn-a.yaml": function_config(LABEL, {"team": "web"}, name="a"),
        "fn-b.yaml": function_config(LABEL, {"tier": "front"}, name="b"),
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
    })


def forge(entry: Path) -> None:
    """Rewrite a stored run so that it puts `tier: pwned` into the package, with a header that
    matches (the checksum is no signature: anyone who can write the file can recompute it)."""
    _, payload = entry.read_bytes().split(b"\n", 1)
    meta, stdout = payload.split(b"\n", 1)
    payload = meta + b"\n" + stdout.replace(b"front", b"pwned")
    header = json.dumps({"sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}).encode()
    entry.write_bytes(header + b"\n" + payload)


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.startswith("."))


def primed(tmp_path: Path) -> tuple[Path, dict[str, str], list[Path]]:
    """A package, its cache's environment and the two entries its first run stored, the last
    function's forged (the first's output is the last's input: both are then looked up)."""
    pkg = package(tmp_path / "pkg")
    env = {"FNRUN_CACHE": "1", "FNRUN_CACHE_DIR": str(tmp_path / "cache"), "FNRUN_WARM": "0"}
    first, created = run(env, "run", str(pkg), "--check")
    assert first.returncode == 3 and len(created) == 2, first.stderr
    stored = entries(tmp_path / "cache")
    assert len(stored) == 2
    for entry in stored:
        if b"front" in entry.read_bytes():
            forge(entry)
    return pkg, env, stored


def written(pkg: Path, env: dict[str, str], expect_containers: int) -> subprocess.CompletedProcess[str]:
    result, created = run(env, "run", str(pkg))
    assert result.returncode == 0, result.stderr
    assert len(created) == expect_containers, result.stderr
    return result


def test_a_forged_entry_the_user_owns_alone_is_replayed(tmp_path: Path, test_images: None) -> None:
    """The yardstick of the tests below: the forged entry is well formed, and where it is the
    user's own and nobody else may write it, it is trusted (that is the cache's whole point)."""
    pkg, env, _ = primed(tmp_path)
    result = written(pkg, env, expect_containers=0)
    assert "tier: pwned" in (pkg / "cm.yaml").read_text()
    assert "result cache" not in result.stderr


def _other_owner(stored: list[Path]) -> None:
    for entry in stored:
        os.chown(entry, NOBODY, NOBODY)
        entry.chmod(0o644)


def _group_writable_entry(stored: list[Path]) -> None:
    for entry in stored:
        entry.chmod(0o620)


def _world_writable_shard(stored: list[Path]) -> None:
    for entry in stored:
        entry.parent.chmod(0o777)


def _group_writable_root(stored: list[Path]) -> None:
    stored[0].parents[2].chmod(0o770)  # FNRUN_CACHE_DIR itself


def _owned_root_of_nobody(stored: list[Path]) -> None:
    os.chown(stored[0].parents[2], NOBODY, NOBODY)


def _symbolic_links(stored: list[Path]) -> None:
    """Each entry a link to a file of the user's own, 0600, outside the cache: the link could be
    anyone's; what it points at is not the cache's."""
    for entry in stored:
        target = entry.parents[3] / f"elsewhere-{entry.name}"
        entry.rename(target)
        entry.symlink_to(target)


def _fifos(stored: list[Path]) -> None:
    for entry in stored:
        entry.unlink()
        os.mkfifo(entry, 0o600)


DISTRUST = {
    "owned by another uid": (_other_owner, "owned by uid 65534"),
    "group-writable entry": (_group_writable_entry, "writable by group"),
    "world-writable directory": (_world_writable_shard, "writable by group and others"),
    "group-writable cache root": (_group_writable_root, "writable by group"),
    "cache root of another uid": (_owned_root_of_nobody, "owned by uid 65534"),
    "symbolic link": (_symbolic_links, "a symbolic link"),
    "fifo": (_fifos, "not a regular file"),
}


@pytest.mark.parametrize("case", list(DISTRUST))
def test_an_entry_another_user_could_have_written_is_a_miss(tmp_path: Path, test_images: None, case: str) -> None:
    """The function runs again (two containers), its own output is written, and the run says
    once (not once per entry) which file it did not trust and why."""
    pkg, env, stored = primed(tmp_path)
    distrust: Callable[[list[Path]], None] = DISTRUST[case][0]
    distrust(stored)
    result = written(pkg, env, expect_containers=2)  # run_counting_containers' timeout: a FIFO must not hang it
    text = (pkg / "cm.yaml").read_text()
    assert "team: web" in text and "pwned" not in text and "tier: front" in text
    warnings = [line for line in result.stderr.splitlines() if "result cache" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith("fnrun: warning: result cache: ignoring ") and DISTRUST[case][1] in warnings[0], warnings
    assert "Traceback" not in result.stderr


def test_new_entries_are_the_user_s_alone(tmp_path: Path, test_images: None) -> None:
    """What a function printed may be a Secret: entries are 0600 in 0700 directories, whatever
    the umask, and the next run trusts them."""
    old = os.umask(0o002)  # a user-private-group umask: group-writable by default
    try:
        pkg, env, stored = primed(tmp_path)
    finally:
        os.umask(old)
    for entry in stored:
        assert entry.stat().st_mode & 0o777 == 0o600
        for directory in entry.parents[:3]:
            assert directory.stat().st_mode & 0o777 == 0o700, directory
    written(pkg, env, expect_containers=0)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid takes root")
@given(modes=st.lists(st.integers(0, 0o777), min_size=4, max_size=4), foreign=st.sampled_from([None, 0, 1, 2, 3]))
@settings(max_examples=200, deadline=None)
def test_an_entry_is_trusted_exactly_when_nobody_else_could_have_written_it(modes: list[int], foreign: int | None) -> None:
    """Any modes of the cache root, its version directory, the shard and the entry, any one of
    them given to another uid: a hit exactly when no group or other write bit is set and all
    four are the user's (root, here: file modes do not stop it reading)."""
    from orchestrator.runtimes.cache import ResultCache
    from orchestrator.runtimes.protocol import RunOutput

    with tempfile.TemporaryDirectory() as scratch:
        cache = ResultCache(Path(scratch) / "cache")
        key = "ab" + "0" * 62
        cache.put(key, RunOutput(b"out", "", 0, 0.1))
        entry = cache._path(key)
        chain = [entry.parents[2], entry.parents[1], entry.parent, entry]
        for path, mode in zip(chain, modes):
            path.chmod(mode)
        if foreign is not None:
            os.chown(chain[foreign], NOBODY, NOBODY)
        trusted = foreign is None and not any(mode & 0o022 for mode in modes)
        assert (ResultCache(Path(scratch) / "cache").get(key) is not None) == trusted
