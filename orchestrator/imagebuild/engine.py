"""Build images through the Engine API: their order, an input hash that skips a rebuild when
nothing changed, and one line per image for CI logs."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import docker
import docker.errors

from orchestrator.imagebuild.dockerfile import context_files, copy_sources, from_images, wanted
from orchestrator.runtimes.host.sources import CATALOG, SOURCE_HASH_LABEL, source_hash

HASH_LABEL = "org.fnrun.build-hash"
SCOPE_LABEL = "org.fnrun.build-scope"  # which build made an image, so its prune leaves others' alone
HASH_SCHEMA = "1"  # bump when the hashing below changes meaning
FIRST = "fnrun-base"

#: Stage a target's context into a temporary directory when it needs more files (test images).
Stager = Callable[["Target", Path], Path]


class BuildFailure(Exception):
    """A build that failed; the message is the one line the user sees."""


@dataclass(frozen=True)
class Target:
    """One image to build: where its Dockerfile and context are, and the tag it gets."""

    name: str
    tag: str
    dockerfile: Path
    context: Path
    stage_files: tuple[Path, ...] = ()

    @property
    def dockerfile_in_context(self) -> str:
        """The Dockerfile's path inside the (staged) context, as the Engine API wants it."""
        if self.dockerfile.is_relative_to(self.context):
            return str(self.dockerfile.relative_to(self.context))
        return self.dockerfile.name

    @property
    def catalog(self) -> bool:
        """One of fnrun's own function images (Dockerfiles/), whatever repository it is tagged in."""
        return self.dockerfile.parent.name == "Dockerfiles"


def catalog_targets(root: Path, repository: str = "fnrun") -> list[Target]:
    """`root/Dockerfiles/<name>.Dockerfile` -> `<repository>/<name>:v1`, context `root`."""
    return [
        Target(p.name.removesuffix(".Dockerfile"), f"{repository}/{p.name.removesuffix('.Dockerfile')}:v1", p, root)
        for p in sorted((root / "Dockerfiles").glob("*.Dockerfile"))
    ]


def order(targets: list[Target], base: str) -> list[Target]:
    """Targets with every image they build FROM before them; fnrun-base first of all."""
    by_tag = {t.tag: t for t in targets}
    done: dict[str, Target] = {}

    def visit(target: Target, path: tuple[str, ...]) -> None:
        if target.tag in done or target.tag in path:
            return
        for image in from_images(target.dockerfile.read_text(), base):
            if image in by_tag:
                visit(by_tag[image], path + (target.tag,))
        done[target.tag] = target

    for target in sorted(targets, key=lambda t: (t.name != FIRST, not t.catalog, t.name)):
        visit(target, ())
    return list(done.values())


def select(targets: list[Target], names: list[str], base: str) -> list[Target]:
    """The targets named (bare name, repository or tag), plus what they build FROM; BuildFailure
    names an unknown one and lists the known."""
    by_tag = {t.tag: t for t in targets}
    chosen: dict[str, Target] = {}
    for name in names:
        hits = [t for t in targets if name in (t.name, t.tag, t.tag.rsplit(":", 1)[0])]
        if not hits:
            raise BuildFailure(f"no image named {name!r}; known: " + ", ".join(sorted(t.name for t in targets)))
        stack = hits
        while stack:
            target = stack.pop()
            chosen[target.tag] = target
            stack.extend(by_tag[i] for i in from_images(target.dockerfile.read_text(), base)
                         if i in by_tag and i not in chosen)
    return [t for t in order(targets, base) if t.tag in chosen]


def image_id(client: docker.DockerClient, ref: str) -> str:
    """The local image id of ref, or ref itself when it is not here (a registry may have it)."""
    try:
        return client.images.get(ref).id
    except docker.errors.ImageNotFound:
        return ref


def current_hash(client: docker.DockerClient, tag: str) -> str | None:
    """The input hash recorded on the image last built under tag, if any."""
    try:
        return (client.images.get(tag).labels or {}).get(HASH_LABEL)
    except docker.errors.ImageNotFound:
        return None


def source_label(target: Target, functions_dir: Path) -> dict[str, str]:
    """A catalog image records the hash of the function code it runs, so `fnrun` knows when running
    that code in-process (orchestrator.runtimes.host.builtin) gives the image's result."""
    module = CATALOG.get(f"fnrun/{target.name}:v1") if target.catalog else None
    return {SOURCE_HASH_LABEL: source_hash(module, functions_dir)} if module else {}


def input_hash(client: docker.DockerClient, target: Target, context: Path, base: str, functions_dir: Path) -> str:
    """A digest of everything that decides the image: its Dockerfile, the files it takes
    from the context, the images it is built FROM and the base it is given."""
    text = target.dockerfile.read_text()
    digest = hashlib.sha256()
    for part in (HASH_SCHEMA, target.tag, base, text, *source_label(target, functions_dir).values()):
        digest.update(part.encode() + b"\0")
    for image in from_images(text, base):
        digest.update(image_id(client, image).encode() + b"\0")
    dockerfile = target.dockerfile_in_context
    sources = copy_sources(text)
    for rel in context_files(context, dockerfile):
        if rel == dockerfile or not wanted(rel, sources):
            continue
        path = context / rel
        digest.update(rel.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        else:
            digest.update(b"x" if os.access(path, os.X_OK) else b"-")
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def last_error(lines: list[str]) -> str:
    """The line of a build log that says what went wrong."""
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return "build failed without a message"


def save_log(log_dir: Path, name: str, lines: list[str]) -> Path:
    """Keep the whole log of a failed step where the user can read it."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{name}.log"
    path.write_text("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return path


def build(client: docker.DockerClient, target: Target, context: Path, base: str, digest: str,
          labels: dict[str, str], log_dir: Path, force: bool = False) -> None:
    """Build one image through the Engine API, raising BuildFailure with the last error line."""
    lines: list[str] = []
    error: str | None = None
    try:
        for chunk in client.api.build(
            path=str(context), dockerfile=target.dockerfile_in_context,
            tag=target.tag, buildargs={"BASE_IMAGE": base}, labels={HASH_LABEL: digest, **labels},
            rm=True, forcerm=True, pull=False, nocache=force, decode=True,
        ):
            if "stream" in chunk:
                lines.extend(line for line in chunk["stream"].splitlines() if line.strip())
            if "error" in chunk:
                error = chunk["error"].strip()
                lines.append(error)
    except docker.errors.APIError as exc:
        error = str(exc.explanation or exc)
        lines.append(error)
    if error is not None:
        log = save_log(log_dir, target.name, lines)
        raise BuildFailure(f"{last_error(error.splitlines())} (log: {log})")


def report(tag: str, what: str, seconds: float | None = None, stream: TextIO | None = None) -> None:
    """One line per image, flushed, so CI logs show progress as it happens."""
    timing = f" ({seconds:.1f}s)" if seconds is not None and seconds >= 0.05 else ""
    print(f"{tag:<34} {what}{timing}", file=stream or sys.stdout, flush=True)


@dataclass(frozen=True)
class Builder:
    """What every build of one run shares: the engine, the base image, where function sources
    (for the source-hash label) and failure logs are, and where progress lines go."""

    client: docker.DockerClient
    base: str
    functions_dir: Path
    log_dir: Path
    stream: TextIO = sys.stdout
    stage: Stager | None = None
    scope: str | None = None  # labels the images built, and limits the prune to them

    def report(self, tag: str, what: str, seconds: float | None = None) -> None:
        report(tag, what, seconds, self.stream)

    def build_target(self, target: Target, force: bool) -> str:
        """Build target unless its inputs are unchanged; returns what happened, in a word or two."""
        with tempfile.TemporaryDirectory(prefix="fnrun-ctx-") as tmp:
            context = self.stage(target, Path(tmp)) if self.stage is not None else target.context
            digest = input_hash(self.client, target, context, self.base, self.functions_dir)
            if not force and current_hash(self.client, target.tag) == digest:
                return "up to date"
            labels = {**source_label(target, self.functions_dir), **({SCOPE_LABEL: self.scope} if self.scope else {})}
            build(self.client, target, context, self.base, digest, labels, self.log_dir, force)
        return "built"

    def build_all(self, targets: Iterable[Target], force: bool) -> int:
        """Build each target in order; a failed one fails those built FROM it. Returns failures."""
        failed: set[str] = set()
        for target in targets:
            started = time.monotonic()
            broken = [i for i in from_images(target.dockerfile.read_text(), self.base) if i in failed]
            try:
                if broken:
                    raise BuildFailure(f"{broken[0]} failed to build")
                outcome = self.build_target(target, force)
            except BuildFailure as exc:
                failed.add(target.tag)
                self.report(target.tag, f"FAILED: {exc}")
                continue
            self.report(target.tag, outcome, time.monotonic() - started if outcome == "built" else None)
        return len(failed)

    def prune(self) -> None:
        """Remove the images earlier builds made and whose tag moved on (every change to fnrun's
        code rebuilds fnrun-base and all built FROM it). Only untagged images carrying our label
        go; the engine keeps any still in use."""
        labels = [HASH_LABEL, *([f"{SCOPE_LABEL}={self.scope}"] if self.scope else [])]
        try:
            self.client.images.prune(filters={"dangling": True, "label": labels})
        except docker.errors.APIError as exc:
            print(f"could not prune old images: {exc.explanation}", file=self.stream)
