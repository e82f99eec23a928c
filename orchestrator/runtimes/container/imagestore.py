"""The engine's image store as locks and bundles need it: an image's identity (its ID and the
registry digests the engine knows it by), a pull, and whole images out of and into the engine as
one docker-archive. Every call goes through the Engine API, as the runtimes' own calls do."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from ...errors import FnrunError
from .inspect import inspect_image

ENVIRONMENT = 4  # exit code: the engine lacks an image, or cannot be asked


@dataclass(frozen=True)
class Identity:
    """What the engine holds under a reference: the image ID (sha256 of its config, which a
    docker-archive carries) and the manifest digests registries know it by ("repo@sha256:...")."""

    id: str
    repo_digests: tuple[str, ...] = ()
    labels: dict | None = None

    def digest_for(self, repository: str) -> str | None:
        """The manifest digest of this image in `repository` (pullable from there), if the engine knows one."""
        wanted = normal_repository(repository)
        found = sorted(d.partition("@")[2] for d in self.repo_digests if normal_repository(d.partition("@")[0]) == wanted)
        return found[0] if found else None

    def has_digest(self, digest: str) -> bool:
        return any(d.partition("@")[2] == digest for d in self.repo_digests)


def normal_repository(name: str) -> str:
    """`busybox`, `docker.io/busybox` and `docker.io/library/busybox` are one repository."""
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name[len("library/"):] if name.startswith("library/") else name


def identity(reference: str) -> Identity | None:
    """The local image a reference (tag, repo@digest or image ID) names; None when there is none."""
    found = inspect_image(reference)
    if found is None or not isinstance(found.get("Id"), str):
        return None
    return Identity(found["Id"], tuple(found.get("RepoDigests") or ()), (found.get("Config") or {}).get("Labels") or {})


def pull(reference: str) -> None:
    """Fetch a reference from its registry into the engine (one line on failure)."""
    from .runtime import api_client, pull as pull_image

    try:
        pull_image(api_client(), reference, "cannot pull image {image}")
    except FnrunError as err:
        raise FnrunError(str(err), exit_code=ENVIRONMENT) from None


def export(references: list[str], out: IO[bytes]) -> None:
    """Every reference's image, tags kept, as one docker-archive written to `out` (GET /images/get)."""
    import docker.errors
    import requests

    from .runtime import api_client

    api = api_client()
    try:
        response = api._get(api._url("/images/get"), params={"names": references}, stream=True)
        api._raise_for_status(response)
        for chunk in response.iter_content(1 << 20):
            out.write(chunk)
    except (docker.errors.APIError, requests.exceptions.RequestException) as err:
        raise FnrunError(f"the engine cannot save {', '.join(references)}: {' '.join(str(err).split())}", exit_code=ENVIRONMENT) from None


def load(chunks: Iterator[bytes]) -> list[str]:
    """Load a docker-archive into the engine (POST /images/load); what the engine says it loaded."""
    import docker.errors
    import requests

    from .runtime import api_client

    api = api_client()
    try:
        response = api._post(api._url("/images/load"), data=chunks, params={"quiet": True}, stream=True,
                             headers={"Content-Type": "application/x-tar"})
        api._raise_for_status(response)
        said = [line for line in response.iter_lines() if line]
    except (docker.errors.APIError, requests.exceptions.RequestException) as err:
        raise FnrunError(f"the engine refused the bundle: {' '.join(str(err).split())}", exit_code=ENVIRONMENT) from None
    import json

    loaded = []
    for line in said:
        event = json.loads(line)
        if event.get("error"):
            raise FnrunError(f"the engine refused the bundle: {' '.join(str(event['error']).split())}", exit_code=ENVIRONMENT)
        if event.get("stream"):
            loaded.append(event["stream"].strip())
    return loaded
