"""The warm containers' PID 1 as fnrun ships it (orchestrator/prebuilt.py builds it for
linux/amd64 and linux/arm64; .ci/setup for this checkout): the binary is the one for the engine's
architecture, each shipped file is a static executable for its machine, no C compiler is needed
where fnrun runs, and where no helper fits the reason is one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from orchestrator import prebuilt
from orchestrator.runtimes.container.runtime import api_client
from orchestrator.runtimes.container.warm import helper
from orchestrator.settings import WARM_HELPER, helper_place
from testing.elf import MACHINES, elf
from testing.pipeline_helpers import REPO, write_package
from testing.runtime_fixtures import containers_of

SPELLINGS = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


@pytest.fixture(autouse=True)
def fresh_choice(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test picks anew: no memo of an earlier test's helper (none reads FNRUN_WARM_HELPER:
    where the helper is had is handed in, a settings.HelperPlace)."""
    monkeypatch.setattr(helper, "_found", {})
    yield


class Engine:
    """An engine client of another architecture than this machine's, which cannot be had here:
    only its /version and /info answers, as the Engine API gives them."""

    def __init__(self, version: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        self._version, self._info = version, info or {}

    def version(self) -> dict[str, Any]:
        return self._version

    def info(self) -> dict[str, Any]:
        return self._info


@pytest.mark.parametrize("arch", sorted(prebuilt.TARGETS))
def test_each_shipped_helper_is_a_static_executable_for_its_machine(arch: str) -> None:
    path = prebuilt.helper_path(arch)
    assert path.is_file(), f"{path} is missing: run `python -m orchestrator.prebuilt` (.ci/setup does)"
    assert os.access(path, os.X_OK) and path.parent.stat().st_mode & 0o005 == 0o005, "the sandbox user can run it"
    assert os.listdir(path.parent) == [prebuilt.HELPER_NAME], "its directory, bind-mounted whole, holds only it"
    machine, interpreted = elf(path)
    assert machine == MACHINES[arch]
    assert not interpreted, "statically linked: no program interpreter"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(SPELLINGS)), st.booleans(), st.sampled_from(["", "X", " "]))
def test_the_engine_s_reported_architecture_picks_its_helper(spelling: str, in_version: bool, case: str) -> None:
    """/version says amd64 or arm64, /info x86_64 or aarch64 (either may be the one answering),
    whatever the case and spacing."""
    reported = f"{spelling.upper() if case == 'X' else spelling}{case if case == ' ' else ''}"
    engine = Engine({"Arch": reported}) if in_version else Engine({}, {"Architecture": reported})
    arch, why = helper.asked(engine)
    assert (arch, why) == (SPELLINGS[spelling], "")
    home, why = helper.helper_dir(arch)
    assert home is not None, why
    assert elf(home / helper.NAME)[0] == MACHINES[SPELLINGS[spelling]]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["s390x", "ppc64le", "riscv64", "mips64", "armv7l", "i386"]) | st.from_regex(r"[a-z][a-z0-9_]{1,12}", fullmatch=True))
def test_an_engine_of_another_architecture_gets_the_reason(reported: str) -> None:
    if reported.lower() in SPELLINGS or reported.lower() == helper.host_arch():
        return
    arch, _ = helper.asked(Engine({"Arch": reported}))
    home, why = helper.helper_dir(arch)
    assert home is None
    assert why == f"no warm-call helper for the engine's architecture {reported.lower()}: fnrun ships one for amd64 and arm64"


def test_an_engine_that_does_not_say_gets_the_reason() -> None:
    assert helper.asked(Engine({}, {})) == (None, "the engine does not say its architecture")


def test_this_engine_is_asked_once_and_agrees_with_the_local_choice() -> None:
    api = api_client()
    assert helper.asked(api) == helper.engine_arch() == (helper.host_arch(), "")
    assert helper._asked[api] == (helper.host_arch(), ""), "cached for this client"


def test_without_the_shipped_helpers_fnrun_builds_one_with_zig_and_else_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout never set up: zig builds the other architecture's helper into the cache; with
    neither zig nor a compiler (or only one for this machine), the reason says what would help."""
    monkeypatch.setattr(prebuilt, "helper_path", lambda arch, root=prebuilt.ROOT: tmp_path / "none" / arch / prebuilt.HELPER_NAME)
    place = helper_place({"XDG_CACHE_HOME": str(tmp_path / "cache")})
    monkeypatch.setenv("ZIG_GLOBAL_CACHE_DIR", str(Path.home() / ".cache" / "zig"))  # zig's own cache: musl built once
    assert not helper.ready(place)
    other = "arm64" if helper.host_arch() == "amd64" else "amd64"
    home, why = helper.helper_dir(other, place=place)
    assert home is not None and home.is_relative_to(tmp_path / "cache"), why
    assert elf(home / helper.NAME) == (MACHINES[other], False)

    monkeypatch.setattr(helper, "_found", {})
    place = helper_place({"XDG_CACHE_HOME": str(tmp_path / "empty")})  # and no CC: cc, else gcc
    monkeypatch.setattr(prebuilt, "zig", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    assert helper.helper_dir(other, place=place) == (None, (
        f"no warm-call helper for the engine's linux/{other}: this fnrun was installed without one, "
        f"and only ziglang (pip install ziglang) builds it on this {helper.host_arch()} machine"))
    assert helper.helper_dir(helper.host_arch(), place=place) == (None, (
        f"no warm-call helper for the engine's linux/{helper.host_arch()}: this fnrun was installed without one, "
        "and there is neither ziglang (pip install ziglang) nor a C compiler to build it"))


def test_a_render_uses_a_warm_container_with_no_c_compiler_anywhere(tmp_path: Path, test_images: None) -> None:
    """PATH holds no compiler, CC is unset and the cache is empty: the shipped helper serves the
    pipeline's second call of the image from the first call's container."""
    assert all(prebuilt.helper_path(arch).is_file() for arch in prebuilt.TARGETS), "run `python -m orchestrator.prebuilt`"
    tools = tmp_path / "bin"
    tools.mkdir()
    assert all(shutil.which(name, path=str(tools)) is None for name in ("cc", "gcc", "clang", "zig"))
    cache = tmp_path / "cache"
    cache.mkdir()
    root = write_package(tmp_path / "pkg", {
        "Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n"
                   "  - image: fnrun-test/sdkprobe:v1\n  - image: fnrun-test/delete:v1\n    configMap: {names: sdk-probe}\n"
                   "  - image: fnrun-test/sdkprobe:v1\n",
        "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  k: v\n",
    })
    env = {key: value for key, value in os.environ.items() if key not in ("CC", WARM_HELPER) and not key.startswith("FNRUN_WARM")}
    env.update(PATH=str(tools), XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "render", str(root), "--image-pull-policy", "never", "--no-cache", "-o", "stdout"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    parents = [doc["data"]["parent"] for doc in yaml.safe_load(stdout)["items"] if doc["metadata"]["name"] == "sdk-probe"]
    assert len(parents) == 1, "the second call's probe (the first one's is deleted between them)"
    assert "functions.sdk.zygote" in parents[0], f"the second call ran in a container of its own: its parent is {parents[0]}"
    assert not (cache / "fnrun" / "warm-helper").exists(), "nothing was built"
    assert containers_of(proc.pid) == []
