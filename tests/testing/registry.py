"""Shared by test_registry_pull.py and the tests that check other paths against it."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest
from testcontainers.core.container import DockerContainer

from testing.runtime_fixtures import api, registry_image, wait_for


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    """host:port of a running registry, reachable by the engine (localhost is insecure-allowed)."""
    container = DockerContainer(registry_image()).with_exposed_ports(5000)
    with container:
        address = f"localhost:{container.get_exposed_port(5000)}"

        def answers() -> bool:
            try:
                return urllib.request.urlopen(f"http://{address}/v2/", timeout=1).status == 200
            except OSError:
                return False

        assert wait_for(answers), f"registry at {address} did not answer:\n{container.get_logs()}"
        yield address


def push(tag: str) -> None:
    for event in api().push(tag, stream=True, decode=True):
        assert "error" not in event, event
