"""This tree's image fork server (functions/sdk/zygote.py, functions/forkwire.py) behind the real
warm helper (fnrun-warm.c, built as fnrun builds it) in a real SDK image: the tree's `functions/`
is mounted over the image's, so the image in use need not be rebuilt to prove the two still
speak one protocol. Each call must be a child of the fork server, and end with its own code."""

from __future__ import annotations

import struct
from pathlib import Path

import docker
import pytest
from docker.utils.socket import frames_iter

from orchestrator.runtimes.container.warm import helper
from testing.pipeline_helpers import test_images  # noqa: F401

REPO = Path(__file__).resolve().parents[3]
FRAME = struct.Struct(">cL")
LIST = (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
        b"  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {exit: 'CODE'}\n")
ARGV = ("python3", "-m", "sdkprobe")
ZYGOTE = ("python3", "-m", "functions.sdk.zygote", "sdkprobe")


def start(code: int) -> bytes:
    """fnrun's frames for one call (orchestrator.runtimes.container.warm.channel's layout)."""
    strings = [*ARGV, "CALL=1", *ZYGOTE]
    payload = struct.pack(">LLL", len(ARGV), 1, len(ZYGOTE)) + b"".join(s.encode() + b"\0" for s in strings)
    stdin = LIST.replace(b"CODE", str(code).encode())
    return FRAME.pack(b"S", len(payload)) + payload + FRAME.pack(b"I", len(stdin)) + stdin + FRAME.pack(b"C", 0)


def test_the_trees_fork_server_serves_the_real_helper(test_images: None) -> None:  # noqa: F811
    where, why = helper.helper_dir()
    if where is None:
        pytest.skip(f"no warm helper here: {why}")
    api = docker.from_env().api
    host = api.create_host_config(binds={str(where): {"bind": "/fnrun-helper", "mode": "ro"},
                                         str(REPO / "functions"): {"bind": "/opt/fnrun/functions", "mode": "ro"}},
                                  network_mode="none", read_only=True, tmpfs={"/tmp": ""})
    container = api.create_container("fnrun-test/sdkprobe:v1", ["serve", "5"], entrypoint=["/fnrun-helper/fnrun-warm"],
                                     stdin_open=True, host_config=host)
    try:
        sock = api.attach_socket(container, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        api.start(container)
        sock._sock.sendall(start(3) + start(0))
        out, err = b"", b""
        for kind, data in frames_iter(sock, tty=False):  # until the helper exits, 5 s after the last call
            if kind == 1:
                out += data
            else:
                err += data
        sock.close()
    finally:
        api.remove_container(container, force=True)
    frames, at = [], 0
    while at < len(out):
        kind, size = FRAME.unpack_from(out, at)
        frames.append((kind, out[at + FRAME.size:at + FRAME.size + size]))
        at += FRAME.size + size
    assert not [body for kind, body in frames if kind in (b"N", b"U")], frames
    assert [struct.unpack(">L", body)[0] for kind, body in frames if kind == b"X"] == [3, 0]
    printed = b"".join(body for kind, body in frames if kind == b"O").decode()
    assert printed.count("parent: python3 -m functions.sdk.zygote sdkprobe") == 2, printed
    assert b"not serving" not in err and b"malformed" not in err, err
