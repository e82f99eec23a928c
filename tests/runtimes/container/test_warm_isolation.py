"""Nothing of one warm call reaches the next: a hostile image on fnrun's Python SDK
(tests/images/warmleak) opens, when its module is imported, every channel a process hands down to
the processes it forks (a memfd, a socketpair, a pipe its own thread reads, a child process, shared
mappings anonymous and of files in /dev/shm and /tmp, an attached System V segment) and has each
call write its Secrets into them and report what an earlier call left there. Three sibling
packages rendered at once, one warm container of that image serving them: each package ends up
with only its own password, exit 0. And a call that leaves a zombie runs once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import yaml

from orchestrator.runtimes.container.runtime import ContainerRuntime
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm.plan import Plan, plan
from orchestrator.runtimes.container.warm.pool import WarmPool
from orchestrator.runtimes.container.warm.runtime import WarmRuntime
from orchestrator.runtimes.protocol import Invocation, Sandbox
from testing.pipeline_helpers import REPO, fnrun, write_package

IMAGE = "fnrun-test/warmleak:v1"
#: the same, opened by a .pth file at every interpreter start: in the fork server before fnrun's code
STARTUP = "fnrun-test/warmleakstartup:v1"
ZYGOTE = "functions.sdk.zygote"
SANDBOX = Sandbox(image_pull_policy="never")
CHANNELS = {"memfd", "socketpair", "thread", "child", "sharedAnonymous", "sharedFileDevShm", "sharedFileTmp", "sysvShm"}
PASSWORDS = {"a": "alpha-7f3e1c", "b": "bravo-92d04a", "c": "charlie-5b8e6d"}


@pytest.fixture(scope="module")
def warmleak() -> None:
    if not docker.from_env().images.list(name=STARTUP):
        subprocess.run([sys.executable, str(REPO / "scripts" / "build_images.py"), "--only", "warmleakstartup"], check=True)


@pytest.fixture
def pool(warmleak: None) -> Iterator[WarmPool]:
    warm = WarmPool()
    try:
        yield warm
    finally:
        warm.close()
    left = docker.from_env().containers.list(all=True, filters={"label": [f"{LABEL_PID}={os.getpid()}", "fnrun.warm=1"]})
    assert left == [], "the pool removed every container it started"


def secret(password: str) -> str:
    return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: {password}\n"


def kptfile(name: str, image: str | None) -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
    return text + (f"pipeline:\n  mutators:\n  - image: {image}\n" if image else "")


def found(documents: list[dict]) -> dict[str, str]:
    """The warmleak ConfigMap's data among `documents`."""
    for document in documents:
        if document and document.get("kind") == "ConfigMap" and document["metadata"]["name"] == "warmleak":
            return dict(document["data"])
    raise AssertionError(f"no warmleak ConfigMap in {documents}")


def clean(seen: dict[str, str], forked: bool) -> None:
    """Every channel opened, none carried anything; the call forked by the fork server or not."""
    assert set(seen.pop("opened").split(",")) == CHANNELS, "the function opened every channel"
    assert (ZYGOTE in seen.pop("parent")) == forked
    assert seen == {channel: "" for channel in CHANNELS}, "a channel carried an earlier call's data"


@pytest.mark.parametrize("image", [IMAGE, STARTUP])
def test_three_sibling_packages_through_one_warm_fork_server_each_get_only_their_own_data(
    warmleak: None, tmp_path: Path, image: str,
) -> None:
    """warmleak's calls are forked by the fork server (its module imported in each call);
    warmleakstartup's fork server holds the channels, refuses to serve, and each call is a new
    process."""
    files = {"Kptfile": kptfile("root", None)}
    for name, password in PASSWORDS.items():
        files |= {f"{name}/Kptfile": kptfile(name, image), f"{name}/secret.yaml": secret(password)}
    root = write_package(tmp_path / "root", files)
    done = fnrun("render", str(root), "--image-pull-policy", "never", "--no-cache")
    assert done.code == 0, done.stderr
    assert done.stderr.count("warmleak: ran") == len(PASSWORDS), "each package's call ran once"
    for name, password in PASSWORDS.items():
        texts = [path.read_text() for path in sorted((root / name).glob("*.yaml"))]
        others = [other for other in PASSWORDS.values() if other != password and other in "".join(texts)]
        assert others == [], f"package {name} holds another package's password:\n{texts}"
        clean(found([document for text in texts for document in yaml.safe_load_all(text)]), image == IMAGE)


@pytest.mark.parametrize("image, env", [(IMAGE, {}), (IMAGE, {"PYTHONDONTWRITEBYTECODE": "1"}), (STARTUP, {})],
                         ids=["fork-server", "exec", "refused-fork-server"])
def test_calls_in_one_warm_container_see_nothing_of_the_calls_before(pool: WarmPool, image: str, env: dict[str, str]) -> None:
    """The same, call by call in one container: forked by the fork server; each a new process of
    the helper's (a PYTHON* variable, which the fork server cannot honour); and through a fork
    server that refused to serve."""
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=image, image=image, sandbox=SANDBOX, env=env)
    found_plan = plan(call)
    assert isinstance(found_plan, Plan) and found_plan.zygote
    assert bool(found_plan.zygote_for(env)) == (not env)
    for password in PASSWORDS.values():
        items = [yaml.safe_load(secret(password))]
        out = warm.run(call, yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}).encode())
        assert out.exit_code == 0, out.stderr
        clean(found(yaml.safe_load(out.stdout)["items"]), image == IMAGE and not env)
    assert pool.started == 1 and pool.served == 3


@pytest.mark.parametrize("env", [{}, {"PYTHONDONTWRITEBYTECODE": "1"}], ids=["fork-server", "exec"])
def test_a_call_that_leaves_a_clone_parent_zombie_runs_once_and_its_container_serves_on(
    pool: WarmPool, env: dict[str, str],
) -> None:
    """clone(CLONE_PARENT) makes a child of the call's parent: the helper, which reaps it, or the
    fork server, which reaps only the call it forked. Its zombie stayed, the helper's clean-up after
    the call failed, and the call, taken for one that could not start, ran again (three warm tries,
    then cold). The helper now replaces a fork server that holds a zombie, and a call that ran is
    never run again: one that leaves what cannot be ended costs its container, not a second run."""
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=IMAGE, image=IMAGE, sandbox=SANDBOX, env=env)
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"zombie": "true"}}
    stdin = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [], "functionConfig": config}).encode()
    for _ in range(2):
        lines: list[str] = []
        out = warm.run(call, stdin, lines.append)
        assert out.exit_code == 0, out.stderr
        assert lines.count("warmleak: ran") == 1, lines
    assert pool.started == 1 and pool.served == 2
