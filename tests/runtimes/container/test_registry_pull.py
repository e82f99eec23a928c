"""Image pull policies against a real registry (a locally built image, started by testcontainers).

The registry holds a newer build of the same tag than the engine has locally, so each policy's
choice is visible in what the function reports: ifNotPresent and never keep the local build,
always fetches the registry's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker.errors
import pytest

from orchestrator.errors import EnvironmentProblem
from orchestrator.runtimes import Invocation, Sandbox
from orchestrator.runtimes.container.runtime import ContainerRuntime
from testing.registry import push
from testing.runtime_fixtures import api, build_image, containers_of, require_base_image

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # its reaper image cannot be pulled here

# An identity function that also says which build it is.
FUNCTION_DOCKERFILE = """ARG BASE_IMAGE
FROM ${{BASE_IMAGE}}
RUN echo {build} > /build
USER 65534
ENTRYPOINT ["sh", "-c", "cat /build >&2; exec cat"]
"""


@pytest.fixture(autouse=True)
def no_container_left_behind() -> Iterator[None]:
    yield
    assert containers_of(os.getpid()) == []


def run(image: str, policy: str, stdin: bytes = b"kind: List\n"):
    invocation = Invocation(name=image, image=image, sandbox=Sandbox(image_pull_policy=policy))
    return ContainerRuntime().run(invocation, stdin)


def remove_image(tag: str) -> None:
    try:
        api().remove_image(tag, force=True)
    except docker.errors.NotFound:
        pass


@pytest.fixture(scope="module")
def remote_function(registry: str) -> Iterator[str]:
    """`<registry>/fnrun-test/identity:v1`: build "old" pushed, then only the tag's name kept."""
    require_base_image()
    tag = f"{registry}/fnrun-test/identity:v1"
    build_image(tag, FUNCTION_DOCKERFILE.format(build="old"))
    push(tag)
    remove_image(tag)
    yield tag
    remove_image(tag)


def test_if_not_present_pulls_a_missing_image_and_runs_it(remote_function: str) -> None:
    remove_image(remote_function)
    out = run(remote_function, "ifNotPresent", b"apiVersion: v1\nkind: List\nitems: []\n")
    assert out.exit_code == 0, out.stderr
    assert out.stdout == b"apiVersion: v1\nkind: List\nitems: []\n"
    assert out.stderr == "old\n"
    api().inspect_image(remote_function)  # it is local now


def test_always_pulls_even_when_present(remote_function: str) -> None:
    run(remote_function, "ifNotPresent")  # make sure the "old" build is local
    newer = build_image(f"{remote_function}-new", FUNCTION_DOCKERFILE.format(build="new"))
    old_id = api().inspect_image(remote_function)["Id"]
    try:
        api().tag(newer, remote_function.rsplit(":", 1)[0], "v1")
        push(remote_function)  # the registry now has "new" under the tag
        api().tag(old_id, remote_function.rsplit(":", 1)[0], "v1")  # locally it is "old" again
        assert run(remote_function, "ifNotPresent").stderr == "old\n"
        assert run(remote_function, "never").stderr == "old\n"
        assert run(remote_function, "always").stderr == "new\n"
        assert run(remote_function, "never").stderr == "new\n"
    finally:
        for image in (newer, old_id):
            remove_image(image)


def test_missing_image_under_never_is_one_line_naming_it(registry: str) -> None:
    image = f"{registry}/fnrun-test/absent:v1"
    with pytest.raises(EnvironmentProblem) as caught:
        run(image, "never")
    assert str(caught.value) == f"image {image} is not present (image pull policy: never)"


@pytest.mark.parametrize("policy", ["ifNotPresent", "always"])
def test_image_the_registry_does_not_have(registry: str, policy: str) -> None:
    image = f"{registry}/fnrun-test/absent:v1"
    with pytest.raises(EnvironmentProblem) as caught:
        run(image, policy)
    message = str(caught.value)
    assert image in message and "\n" not in message and len(message) < 400
    assert caught.value.exit_code == 4  # the registry's answer: the environment, not the package


@pytest.mark.parametrize("policy", ["ifNotPresent", "always"])
def test_unreachable_registry(policy: str) -> None:
    image = "localhost:1/fnrun-test/identity:v1"
    with pytest.raises(EnvironmentProblem, match=f"image {image}.*connection refused"):
        run(image, policy)


def test_always_fails_for_a_local_only_image() -> None:
    base = require_base_image()
    with pytest.raises(EnvironmentProblem, match=f"cannot pull image {base} \\(image pull policy: always\\)"):
        run(base, "always")
