"""What the local engine knows of an image, asked without the docker SDK where that is possible.

The builtin decision (the image's source-hash label) and the result cache (the image ID) need one
`GET /images/NAME/json` before anything runs. Through the SDK that first costs its import (about
0.1 s, longer than a builtin function's whole run); on the engine's unix socket one plain HTTP
request does the same in a millisecond. Anything else (tcp, TLS, ssh, a podman socket named by
DOCKER_HOST over tcp) goes through the SDK, which knows those transports."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import quote

from orchestrator.runtimes.remote import unix_socket

TIMEOUT = 10.0


def inspect_image(image: str) -> dict[str, Any] | None:
    """The engine's description of a local image; None when it has no such image or no engine
    answers (either way, the image cannot be what ran)."""
    path = unix_socket()
    if path is None:
        return _through_sdk(image)
    try:
        connection = _UnixConnection(path)
        try:
            connection.request("GET", f"/images/{quote(image, safe='/:@')}/json")
            response = connection.getresponse()
            body = response.read()
        finally:
            connection.close()
    except OSError:
        return None
    if response.status != 200:
        return None
    try:
        found = json.loads(body)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=TIMEOUT)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def _through_sdk(image: str) -> dict[str, Any] | None:
    try:
        from orchestrator.runtimes.container import api_client

        return api_client().inspect_image(image)
    except Exception:  # noqa: BLE001 - not found, no engine, a transport error: no such image here
        return None
