"""Build every image fnrun and its tests need, with no registry, through the Docker SDK.

Run: ``.venv/bin/python scripts/build_images.py [--rebuild] [--only NAME ...]``

Why a script: no registry can be reached here, so every image is built locally, from this
repository, in an order that respects their dependencies, and re-runs must be cheap.

What it builds, in order:

1. The base image. ``BASE_IMAGE`` from the environment is used as it is. Otherwise
   ``fnrun/python-base:bookworm`` is reused when present (``--rebuild`` builds it anew), or
   built with ``debootstrap --variant=minbase`` (python3-minimal, python3-ruamel.yaml,
   python3-yaml) from the host's Debian mirror and imported as a tar through the SDK.
2. ``Dockerfiles/<name>.Dockerfile`` -> ``fnrun/<name>:v1``, build context the repository root
   (trimmed by ``/.dockerignore``). ``fnrun-base`` comes first: it is the base image plus fnrun
   itself. Any image whose ``FROM`` names another image built here is built after it.
3. ``tests/images/<name>/`` -> ``fnrun-test/<name>:v1``, context its own directory, built
   from its own ``Dockerfile`` or, when it has only a ``main.py``, from the shared
   ``tests/images/Dockerfile`` with ``tests/images/krm.py`` (the protocol helper) beside
   it. A ``stage-files`` file lists more files (one a line: absolute = from the host, relative =
   from the repository root) to copy into a temporary copy of the context before building: the
   registry image takes Debian's ``/usr/bin/docker-registry`` this way, because a build
   container cannot reach a trusted package mirror.

Every build gets the build arg ``BASE_IMAGE``. An image carries a label with a hash of its inputs
(Dockerfile, the context files it copies, the images it is built FROM); an image whose label
matches is reported "up to date" and not rebuilt (a no-op run takes well under a second; a
change under orchestrator/ or functions/ rebuilds fnrun-base and the catalog, a few seconds).
Untagged images that earlier runs left behind are pruned (only ours, found by that label).

Convention for catalog Dockerfiles (``Dockerfiles/<name>.Dockerfile``): function images have no
pip, so fnrun reaches them through ``fnrun-base``, which holds ``orchestrator/`` and
``functions/`` under ``/opt/fnrun`` (on ``PYTHONPATH``, byte-compiled), the launcher
``/usr/local/bin/fnrun`` (``Dockerfiles/fnrun-launcher``) and ``USER 65534``::

    FROM fnrun/fnrun-base:v1
    ENTRYPOINT ["fnrun", "wrap", "--", "sh", "-c", "..."]      # a shell template, or
    ENTRYPOINT ["python3", "-m", "functions.<module>"]           # a Python function

A catalog image that needs other files copies them with paths relative to the repository root.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import docker
import docker.errors
from docker.utils.build import exclude_paths

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's orchestrator, whatever the venv has installed
from orchestrator.runtimes.host.builtin import CATALOG, SOURCE_HASH_LABEL, source_hash  # noqa: E402
BASE_TAG = "fnrun/python-base:bookworm"
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3-minimal", "python3-ruamel.yaml", "python3-yaml")
BASE_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    'CMD ["/usr/bin/python3"]',
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"
HASH_LABEL = "org.fnrun.build-hash"
HASH_SCHEMA = "1"  # bump when the hashing below changes meaning
STAGE_FILES = "stage-files"
LOG_DIR = REPO / "build" / "image-logs"
FIRST = "fnrun-base"


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
        return self.tag.startswith("fnrun/")


# ---------------------------------------------------------------- discovery and order


def discover(repo: Path = REPO) -> list[Target]:
    """Every image this repository builds, catalog first, then test images."""
    targets = [
        Target(p.name.removesuffix(".Dockerfile"), f"fnrun/{p.name.removesuffix('.Dockerfile')}:v1",
               p, repo)
        for p in sorted((repo / "Dockerfiles").glob("*.Dockerfile"))
    ]
    shared = repo / "tests" / "images"
    for context in sorted(p for p in shared.glob("*/") if p.is_dir()):
        listing = context / STAGE_FILES
        lines = listing.read_text().splitlines() if listing.is_file() else []
        staged = tuple(repo / line.strip() for line in lines
                       if line.strip() and not line.startswith("#"))
        if (context / "Dockerfile").is_file():
            dockerfile = context / "Dockerfile"
        elif (context / "main.py").is_file():
            dockerfile, staged = shared / "Dockerfile", (shared / "Dockerfile", shared / "krm.py",
                                                         *staged)
        else:
            continue
        targets.append(Target(context.name, f"fnrun-test/{context.name}:v1", dockerfile, context,
                              staged))
    return targets


def instructions(text: str) -> Iterator[tuple[str, str]]:
    """(KEYWORD, arguments) for each Dockerfile instruction, continuation lines joined."""
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            keyword, _, rest = full.partition(" ")
            yield keyword.upper(), rest.strip()
    if pending.strip():
        keyword, _, rest = pending.strip().partition(" ")
        yield keyword.upper(), rest.strip()


def from_images(text: str, base: str) -> list[str]:
    """The images a Dockerfile builds FROM (stage names and scratch left out)."""
    stages: set[str] = set()
    images: list[str] = []
    for keyword, args in instructions(text):
        if keyword != "FROM":
            continue
        words = [w for w in args.split() if not w.startswith("--")]
        image = re.sub(r"\$\{BASE_IMAGE(?::-[^}]*)?\}|\$BASE_IMAGE\b", base, words[0])
        if len(words) >= 3 and words[1].upper() == "AS":
            stages.add(words[2])
        if image not in stages and image != "scratch":
            images.append(image)
    return images


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
    """The targets named by --only (bare name, repository or tag), plus what they build FROM."""
    by_tag = {t.tag: t for t in targets}
    chosen: dict[str, Target] = {}
    for name in names:
        hits = [t for t in targets if name in (t.name, t.tag, t.tag.rsplit(":", 1)[0])]
        if not hits:
            print(f"build_images: no image named {name!r}; known: "
                  + ", ".join(sorted(t.name for t in targets)), file=sys.stderr)
            raise SystemExit(2)
        stack = hits
        while stack:
            target = stack.pop()
            chosen[target.tag] = target
            stack.extend(by_tag[i] for i in from_images(target.dockerfile.read_text(), base)
                         if i in by_tag and i not in chosen)
    return [t for t in order(targets, base) if t.tag in chosen]


# ---------------------------------------------------------------- input hashing


def dockerignore(context: Path) -> list[str]:
    """The context's .dockerignore patterns, read the way docker-py reads them."""
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.strip().startswith("#")]


def context_files(context: Path, dockerfile: str) -> list[str]:
    """Files (relative paths) docker-py would send as the build context."""
    found = exclude_paths(str(context), dockerignore(context), dockerfile=dockerfile)
    return sorted(p for p in found
                  if (context / p).is_file() or (context / p).is_symlink())


def copy_sources(text: str) -> list[str] | None:
    """Context paths a Dockerfile COPYs or ADDs; None when it takes the whole context."""
    sources: list[str] = []
    for keyword, args in instructions(text):
        if keyword not in ("COPY", "ADD"):
            continue
        if args.startswith("["):
            words = re.findall(r'"((?:[^"\\]|\\.)*)"', args)
        else:
            words = args.split()
        if any(w.startswith("--from") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")][:-1]
        for word in words:
            cleaned = os.path.normpath(word.lstrip("/")) if "://" not in word else word
            if cleaned in (".", ""):
                return None
            sources.append(cleaned)
    return sources


def wanted(path: str, sources: list[str] | None) -> bool:
    """Whether a context file is among the Dockerfile's COPY/ADD sources."""
    if sources is None:
        return True
    return any(path == s or path.startswith(s + "/") or fnmatch(path, s)
               or fnmatch(path.split("/", 1)[0], s) for s in sources)


def input_hash(client: docker.DockerClient, target: Target, context: Path, base: str) -> str:
    """A digest of everything that decides the image: its Dockerfile, the files it takes
    from the context, the images it is built FROM and the base it is given."""
    text = target.dockerfile.read_text()
    digest = hashlib.sha256()
    for part in (HASH_SCHEMA, target.tag, base, text, *source_label(target).values()):
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


# ---------------------------------------------------------------- building


def stage(target: Target, into: Path) -> Path:
    """The context to build from: the target's own, or a temporary copy with its stage files."""
    if not target.stage_files:
        return target.context
    staged = into / target.name
    shutil.copytree(target.context, staged)
    for source in target.stage_files:
        if not source.is_file():
            raise BuildFailure(f"{source} is missing (listed in "
                               f"{target.context.relative_to(REPO)}/{STAGE_FILES}); "
                               "run .ci/setup or install its package")
        shutil.copy2(source, staged / source.name)
    return staged


def last_error(lines: list[str]) -> str:
    """The line of a build log that says what went wrong."""
    for line in reversed(lines):
        if line.strip():
            return line.strip()
    return "build failed without a message"


def save_log(name: str, lines: list[str]) -> Path:
    """Keep the whole log of a failed step where the user can read it."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    path = LOG_DIR / f"{name}.log"
    path.write_text("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    return path


def build(client: docker.DockerClient, target: Target, context: Path, base: str,
          digest: str, force: bool = False) -> None:
    """Build one image through the Engine API, raising BuildFailure with the last error line."""
    lines: list[str] = []
    error: str | None = None
    try:
        for chunk in client.api.build(
            path=str(context), dockerfile=target.dockerfile_in_context,
            tag=target.tag, buildargs={"BASE_IMAGE": base}, labels={HASH_LABEL: digest, **source_label(target)},
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
        log = save_log(target.name, lines)
        raise BuildFailure(f"{last_error(error.splitlines())} (log: {log.relative_to(REPO)})")


def source_label(target: Target) -> dict[str, str]:
    """A catalog image records the hash of the function code it runs, so `fnrun` knows when running
    that code in-process (orchestrator.runtimes.host.builtin) gives the image's result."""
    module = CATALOG.get(target.tag)
    return {SOURCE_HASH_LABEL: source_hash(module, REPO / "functions")} if module else {}


def build_target(client: docker.DockerClient, target: Target, base: str, force: bool) -> str:
    """Build target unless its inputs are unchanged; returns what happened, in a word or two."""
    with tempfile.TemporaryDirectory(prefix="fnrun-ctx-") as tmp:
        context = stage(target, Path(tmp))
        digest = input_hash(client, target, context, base)
        if not force and current_hash(client, target.tag) == digest:
            return "up to date"
        build(client, target, context, base, digest, force)
    return "built"


# ---------------------------------------------------------------- the base image


def debian_mirror() -> str:
    """The host's Debian mirror (deb822 or one-line sources), for debootstrap."""
    if os.environ.get("DEBIAN_MIRROR"):
        return os.environ["DEBIAN_MIRROR"]
    deb822 = Path("/etc/apt/sources.list.d/debian.sources")
    if deb822.is_file():
        for stanza in re.split(r"\n\s*\n", deb822.read_text()):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            uris = fields.get("URIs", "").split()
            if "deb" in fields.get("Types", "").split() and uris and "security" not in uris[0]:
                return uris[0]
    classic = Path("/etc/apt/sources.list")
    if classic.is_file():
        for line in classic.read_text().splitlines():
            words = re.sub(r"\[[^]]*\]", "", line).split()
            if len(words) >= 3 and words[0] == "deb" and "security" not in words[1]:
                return words[1]
    return DEFAULT_MIRROR


def mounts_below(root: Path) -> list[str]:
    """Mount points inside root, deepest first (debootstrap may leave some after a failure)."""
    prefix = str(root.resolve()) + "/"
    points = [line.split()[1].replace("\\040", " ")
              for line in Path("/proc/self/mounts").read_text().splitlines()]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def run_logged(argv: list[str], lines: list[str]) -> None:
    """Run a host command (never docker), keeping its output for the log."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    lines.extend(proc.stdout.splitlines())
    if proc.returncode != 0:
        log = save_log("python-base", lines)
        raise BuildFailure(f"{argv[0]} exited {proc.returncode}: {last_error(lines)} "
                           f"(log: {log.relative_to(REPO)})")


def build_base(client: docker.DockerClient, tag: str = BASE_TAG) -> None:
    """debootstrap a minimal Debian with Python into a temp dir and import it as tag."""
    if os.geteuid() != 0:
        raise BuildFailure("building the base image needs root (debootstrap); "
                           "run as root or set BASE_IMAGE")
    if not shutil.which("debootstrap"):
        raise BuildFailure("debootstrap is not installed (apt-get install debootstrap, "
                           "or run .ci/setup), or set BASE_IMAGE")
    lines: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="fnrun-base-"))
    root = tmp / "rootfs"
    try:
        run_logged(["debootstrap", "--variant=minbase", "--include=" + ",".join(BASE_PACKAGES),
                    BASE_SUITE, str(root), debian_mirror()], lines)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (root / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tarball = tmp / "rootfs.tar"
        run_logged(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(tarball),
                    "."], lines)
        repository, _, version = tag.rpartition(":")
        client.api.import_image(src=str(tarball), repository=repository, tag=version,
                                changes=list(BASE_CHANGES))
    finally:
        for point in mounts_below(root) if root.exists() else []:
            subprocess.run(["umount", "--lazy", point], check=False)
        if root.exists() and mounts_below(root):
            print(f"build_images: left {tmp} behind: something is still mounted in it",
                  file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def ensure_base(client: docker.DockerClient, rebuild: bool) -> str:
    """The base image reference every Dockerfile gets as BASE_IMAGE, built when needed."""
    given = os.environ.get("BASE_IMAGE")
    if given:
        report(given, "given by BASE_IMAGE")
        return given
    if not rebuild and image_id(client, BASE_TAG) != BASE_TAG:
        report(BASE_TAG, "up to date")
        return BASE_TAG
    started = time.monotonic()
    report(BASE_TAG, f"building with debootstrap from {debian_mirror()} (about a minute)")
    build_base(client)
    report(BASE_TAG, "built", time.monotonic() - started)
    return BASE_TAG


# ---------------------------------------------------------------- command line


def report(tag: str, what: str, seconds: float | None = None) -> None:
    """One line per image, flushed, so CI logs show progress as it happens."""
    timing = f" ({seconds:.1f}s)" if seconds is not None and seconds >= 0.05 else ""
    print(f"{tag:<34} {what}{timing}", flush=True)


def build_all(client: docker.DockerClient, targets: Iterable[Target], base: str,
              force: bool) -> int:
    """Build each target in order; a failed one fails those built FROM it. Returns failures."""
    failed: set[str] = set()
    for target in targets:
        started = time.monotonic()
        broken = [i for i in from_images(target.dockerfile.read_text(), base) if i in failed]
        try:
            if broken:
                raise BuildFailure(f"{broken[0]} failed to build")
            outcome = build_target(client, target, base, force)
        except BuildFailure as exc:
            failed.add(target.tag)
            report(target.tag, f"FAILED: {exc}")
            continue
        report(target.tag, outcome, time.monotonic() - started if outcome == "built" else None)
    return len(failed)


def prune(client: docker.DockerClient) -> None:
    """Remove the images earlier runs of this script built and whose tag moved on: every
    change to orchestrator/ rebuilds fnrun-base and all built FROM it, which would otherwise
    pile up. Only untagged images carrying our label go; the engine keeps any still in use."""
    try:
        client.images.prune(filters={"dangling": True, "label": HASH_LABEL})
    except docker.errors.APIError as exc:
        print(f"build_images: could not prune old images: {exc.explanation}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Build the base image, then every catalog and test image; exit 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true",
                        help="build everything anew, the debootstrap base included")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=[],
                        help="build only these images (and the images they build FROM)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        client = docker.from_env(timeout=900)
        client.ping()
    except docker.errors.DockerException as exc:
        print(f"build_images: no Docker engine answers ({exc}); run .ci/setup", file=sys.stderr)
        return 1
    targets = discover()
    planned_base = os.environ.get("BASE_IMAGE") or BASE_TAG
    chosen = (select(targets, args.only, planned_base) if args.only
              else order(targets, planned_base))
    try:
        base = ensure_base(client, args.rebuild)
    except BuildFailure as exc:
        report(BASE_TAG, f"FAILED: {exc}")
        return 1
    failures = build_all(client, chosen, base, args.rebuild)
    prune(client)
    summary = f"{len(chosen) - failures} of {len(chosen)} images ready"
    print(f"build_images: {summary} in {time.monotonic() - started:.1f}s"
          + (f", {failures} FAILED" if failures else ""), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
