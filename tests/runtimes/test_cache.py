"""The result cache through the real CLI: an unchanged re-run starts no container and gives the
same output; any change to what a function sees is a miss; corrupt or partial entries are misses;
what must not be cached is not; the size bound prunes least recently used entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.runtimes.cache import ResultCache
from testing.pipeline_helpers import REPO, function_config, snapshot, write_package  # noqa: F401
from testing.runtime_fixtures import build_image, run_counting_containers as run

LABEL = "fnrun-test/label:v1"


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    return {"FNRUN_CACHE": "1", "FNRUN_CACHE_DIR": str(tmp_path / "cache")}


def functions_of(result: subprocess.CompletedProcess[str]) -> list[dict]:
    return json.loads(result.stdout)["items"]


def package(root: Path) -> Path:
    return write_package(root, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # keep\ndata:\n  k: v\n"})


def test_an_unchanged_rerun_starts_no_container_and_gives_the_same_result(tmp_path: Path, cache_env: dict[str, str], test_images: None) -> None:
    pkg = package(tmp_path / "pkg")
    first, created = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
    assert first.returncode == 3 and len(created) == 1, first.stderr  # --check: it would change
    second, created_again = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
    assert second.returncode == 3, second.stderr
    assert created_again == []
    assert [f.get("cached") for f in functions_of(second)] == [True]
    assert json.loads(second.stdout)["diff"] == json.loads(first.stdout)["diff"]
    assert "cached" in second.stderr


def test_what_the_function_sees_is_part_of_the_key(tmp_path: Path, cache_env: dict[str, str], test_images: None) -> None:
    pkg = package(tmp_path / "pkg")
    run(cache_env, "run", str(pkg), "--image", LABEL, "--output", "-", "--", "team=web")
    for change in (["--", "team=api"], ["--env", "X=1", "--", "team=web"], ["--memory", "256m", "--", "team=web"]):
        result, created = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", *change)
        assert len(created) == 1 and not functions_of(result)[0].get("cached"), change
    (pkg / "cm.yaml").write_text((pkg / "cm.yaml").read_text() + "  k2: v2\n")
    result, created = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
    assert len(created) == 1, "a changed input must miss"


def test_no_cache_flag_and_environment_switch_it_off(tmp_path: Path, cache_env: dict[str, str], test_images: None) -> None:
    pkg = package(tmp_path / "pkg")
    run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
    assert len(run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--no-cache", "--", "team=web")[1]) == 1
    assert len(run({**cache_env, "FNRUN_CACHE": "0"}, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")[1]) == 1


def test_corrupt_and_partial_entries_are_misses_never_wrong_output(tmp_path: Path, cache_env: dict[str, str], test_images: None) -> None:
    pkg = package(tmp_path / "pkg")
    first, _ = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
    entries = [p for p in Path(cache_env["FNRUN_CACHE_DIR"]).rglob("*") if p.is_file()]
    assert len(entries) == 1
    raw = entries[0].read_bytes()
    for damaged in (raw.replace(b"team", b"tEam"), raw[: len(raw) // 2], b"", b"\n\n"):
        entries[0].write_bytes(damaged)
        result, created = run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--", "team=web")
        assert len(created) == 1 and json.loads(result.stdout)["diff"] == json.loads(first.stdout)["diff"]
        stored = entries[0].read_bytes()  # stored again, whole: the same output (only the duration differs)
        assert stored.split(b"\n", 2)[2] == raw.split(b"\n", 2)[2]


def test_failures_exec_network_mounts_and_opted_out_images_are_not_cached(tmp_path: Path, cache_env: dict[str, str], test_images: None) -> None:
    pkg = package(tmp_path / "pkg")
    cache_root = Path(cache_env["FNRUN_CACHE_DIR"])
    run(cache_env, "run", str(pkg), "--image", "fnrun-test/fail:v1", "--check")
    run(cache_env, "run", str(pkg), "--image", LABEL, "--check", "--mount", f"type=bind,src={pkg},dst=/data", "--", "team=web")
    fn = tmp_path / "identity.py"
    fn.write_text("#!/usr/bin/env python3\nimport sys\nsys.stdout.write(sys.stdin.read())\n")
    fn.chmod(0o755)
    run(cache_env, "run", str(pkg), "--exec", str(fn), "--enable-exec", "--check")
    opted_out = build_image("fnrun-test/uncacheable:v1", f"FROM {LABEL}\nLABEL dev.fnrun.cacheable=false\n")
    run(cache_env, "run", str(pkg), "--image", opted_out, "--check", "--", "team=web")
    assert not cache_root.exists() or not [p for p in cache_root.rglob("*") if p.is_file()]
    network_pkg = write_package(tmp_path / "net", {
        "fn.yaml": function_config(LABEL, {"team": "web"}, extra="  network: true"),
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    })
    result, _ = run(cache_env, "run", str(network_pkg), "--network", "--check")
    assert result.returncode in (0, 3), result.stderr
    assert not cache_root.exists() or not [p for p in cache_root.rglob("*") if p.is_file()]


def test_the_size_bound_prunes_least_recently_used_first(tmp_path: Path) -> None:
    from orchestrator.runtimes.protocol import Invocation, RunOutput

    cache = ResultCache(tmp_path / "c", bound=3500)  # three entries of ~1,100 bytes
    keys = [cache.key(Invocation(name="f", image="i"), "sha256:x", str(n).encode()) for n in range(4)]
    for number, key in enumerate(keys):
        cache.put(key, RunOutput(stdout=b"x" * 1000, stderr="", exit_code=0, duration=0.1))
        os.utime(cache._path(key), (1000 + number, 1000 + number))
        if number == 1:
            assert cache.get(keys[0]) is not None  # a hit makes the first the most recently used
    assert cache.get(keys[1]) is None  # the least recently used went when the fourth came
    assert all(cache.get(k) is not None for k in (keys[0], keys[2], keys[3]))
    info = subprocess.run([sys.executable, "-m", "orchestrator", "cache", "info"], capture_output=True, text=True,
                          env={**os.environ, "FNRUN_CACHE_DIR": str(tmp_path / "c")}, cwd=REPO)
    assert "entries:  3" in info.stdout, info
    prune = subprocess.run([sys.executable, "-m", "orchestrator", "cache", "prune", "--all"], capture_output=True, text=True,
                           env={**os.environ, "FNRUN_CACHE_DIR": str(tmp_path / "c")}, cwd=REPO)
    assert prune.returncode == 0 and "removed 3 entries" in prune.stderr


def test_images_are_inspected_alike_on_the_socket_and_through_the_sdk(monkeypatch: pytest.MonkeyPatch, test_images: None) -> None:
    """The plain request on the engine's unix socket and the SDK see the same image (and the
    same absence), whichever DOCKER_HOST names it."""
    from orchestrator.runtimes.container import inspect
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    direct = inspect.inspect_image("fnrun-test/identity:v1")
    assert direct is not None and direct["Id"].startswith("sha256:")
    assert inspect._through_sdk("fnrun-test/identity:v1")["Id"] == direct["Id"]
    assert inspect.inspect_image("fnrun-test/no-such-image:v1") is None
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert inspect.inspect_image("fnrun-test/identity:v1") is None  # no engine: no such image here


def test_the_pre_start_s_question_is_answered_by_the_entries(tmp_path: Path, test_images: None) -> None:
    """`would_run` (the session's probe of the first function) says a stored run needs no container."""
    from orchestrator.runtimes import Invocation, RunOutput
    from orchestrator.runtimes.cache import CachingRuntime
    from orchestrator.runtimes.container.runtime import ContainerRuntime

    cache = ResultCache(tmp_path / "cache")
    runtime = CachingRuntime(ContainerRuntime(), cache)
    call, stdin = Invocation(name=LABEL, image=LABEL), b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    assert runtime.would_run(call, stdin)
    key = runtime._key(call, stdin)
    assert key is not None
    cache.put(key, RunOutput(stdin, "", 0, 0.1))
    assert not runtime.would_run(call, stdin)
    assert runtime.would_run(call, stdin + b"# another input\n")
