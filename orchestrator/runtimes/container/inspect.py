"""What the local engine knows of an image, asked without the docker SDK where that is possible.

The builtin decision (the image's source-hash label) and the result cache (the image ID) need one
`GET /images/NAME/json` before anything runs. Through the SDK that first costs its import (about
0.1 s, longer than a builtin function's whole run); on the engine's unix socket one plain HTTP
request does the same in a millisecond. Anything else (tcp, TLS, ssh, a podman socket named by
DOCKER_HOST over tcp) goes through the SDK, which knows those transports."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from orchestrator.runtimes.container.remote import unix_socket

TIMEOUT = 10.0


def inspect_image(image: str, connect: Callable[[], Any] | None = None) -> dict[str, Any] | None:
    """The engine's description of a local image; None when it has no such image or no engine
    answers (either way, the image cannot be what ran). `connect`: the engine client of the run
    asking, for the transports only the SDK speaks (else a connection of its own)."""
    path = unix_socket()
    if path is None:
        return _through_sdk(image, connect)
    try:
        status, body = _get(path, f"/images/{quote(image, safe='/:@')}/json")
    except (OSError, ValueError, IndexError):  # no engine there, or not HTTP
        return None
    if status != 200:
        return None
    try:
        found = json.loads(body)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _get(path: str, target: str) -> tuple[int, bytes]:
    """One HTTP/1.0 GET on a unix socket: (status, body). HTTP/1.0 makes the engine send the body
    as is and close (no chunks, no keep-alive), so a few lines do what http.client would, without
    importing it (and ssl and email with it: more than the request itself costs)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT)
        sock.connect(path)
        sock.sendall(f"GET {target} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode("ascii"))
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    if any(line.lower().replace(b" ", b"") == b"transfer-encoding:chunked" for line in lines[1:]):
        body = _unchunked(body)
    return status, body


def _unchunked(body: bytes) -> bytes:
    out: list[bytes] = []
    at = 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end].split(b";")[0], 16)
        if size == 0:
            return b"".join(out)
        out.append(body[end + 2 : end + 2 + size])
        at = end + 2 + size + 2


def _through_sdk(image: str, connect: Callable[[], Any] | None = None) -> dict[str, Any] | None:
    try:
        from orchestrator.runtimes.container.runtime import api_client

        return (connect or api_client)().inspect_image(image)
    except Exception:  # noqa: BLE001 - not found, no engine, a transport error: no such image here
        return None
