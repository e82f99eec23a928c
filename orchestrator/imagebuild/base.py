"""The Python base image every function image is built on. Given (`--base-image`, `BASE_IMAGE`)
it is used as it is; otherwise `fnrun/python-base:bookworm` is reused, or made with debootstrap
(python3-minimal, python3-ruamel.yaml, python3-yaml) from the host's Debian mirror and imported
as a tar through the Engine API: no registry is needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker

from orchestrator.imagebuild.engine import BuildFailure, image_id, last_error, save_log

BASE_TAG = "fnrun/python-base:bookworm"
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3-minimal", "python3-ruamel.yaml", "python3-yaml")
BASE_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    'CMD ["/usr/bin/python3"]',
)
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def debian_mirror() -> str:
    """The host's Debian mirror (deb822 or one-line sources), for debootstrap."""
    if os.environ.get("DEBIAN_MIRROR"):
        return os.environ["DEBIAN_MIRROR"]
    deb822 = Path("/etc/apt/sources.list.d/debian.sources")
    if deb822.is_file():
        for fields in _stanzas(deb822.read_text()):
            uris = fields.get("URIs", "").split()
            if "deb" in fields.get("Types", "").split() and uris and "security" not in uris[0]:
                return uris[0]
    classic = Path("/etc/apt/sources.list")
    if classic.is_file():
        for line in classic.read_text().splitlines():
            words = _without_options(line).split()
            if len(words) >= 3 and words[0] == "deb" and "security" not in words[1]:
                return words[1]
    return DEFAULT_MIRROR


def _stanzas(text: str) -> list[dict[str, str]]:
    """deb822 paragraphs (separated by blank lines) as field -> value."""
    stanzas: list[dict[str, str]] = [{}]
    for line in text.splitlines():
        if not line.strip():
            if stanzas[-1]:
                stanzas.append({})
            continue
        key, sep, value = line.partition(":")
        if sep and key and not key[0].isspace():
            stanzas[-1][key.strip()] = value.strip()
    return [s for s in stanzas if s]


def _without_options(line: str) -> str:
    """A one-line source without its `[arch=...]` options."""
    kept: list[str] = []
    depth = 0
    for char in line:
        if char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
        elif not depth:
            kept.append(char)
    return "".join(kept)


def mounts_below(root: Path) -> list[str]:
    """Mount points inside root, deepest first (debootstrap may leave some after a failure)."""
    prefix = str(root.resolve()) + "/"
    points = [line.split()[1].replace("\\040", " ")
              for line in Path("/proc/self/mounts").read_text().splitlines()]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def run_logged(argv: list[str], lines: list[str], log_dir: Path) -> None:
    """Run a host command (never docker), keeping its output for the log."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    lines.extend(proc.stdout.splitlines())
    if proc.returncode != 0:
        log = save_log(log_dir, "python-base", lines)
        raise BuildFailure(f"{argv[0]} exited {proc.returncode}: {last_error(lines)} (log: {log})")


def build_base(client: docker.DockerClient, log_dir: Path, tag: str = BASE_TAG) -> None:
    """debootstrap a minimal Debian with Python into a temp dir and import it as tag."""
    if os.geteuid() != 0:
        raise BuildFailure("building the base image needs root (debootstrap); run as root or give a base image")
    if not shutil.which("debootstrap"):
        raise BuildFailure("debootstrap is not installed (apt-get install debootstrap), or give a base image")
    lines: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="fnrun-base-"))
    root = tmp / "rootfs"
    try:
        run_logged(["debootstrap", "--variant=minbase", "--include=" + ",".join(BASE_PACKAGES),
                    BASE_SUITE, str(root), debian_mirror()], lines, log_dir)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (root / cache).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tarball = tmp / "rootfs.tar"
        run_logged(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(tarball), "."], lines, log_dir)
        repository, _, version = tag.rpartition(":")
        client.api.import_image(src=str(tarball), repository=repository, tag=version, changes=list(BASE_CHANGES))
    finally:
        for point in mounts_below(root) if root.exists() else []:
            subprocess.run(["umount", "--lazy", point], check=False)
        if root.exists() and mounts_below(root):
            print(f"left {tmp} behind: something is still mounted in it", flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def ensure_base(client: docker.DockerClient, given: str | None, rebuild: bool,
                report: Callable[[str, str, float | None], None], log_dir: Path) -> str:
    """The base image reference every Dockerfile gets as BASE_IMAGE, built when needed."""
    if given:
        report(given, "given as the base image", None)
        return given
    if not rebuild and image_id(client, BASE_TAG) != BASE_TAG:
        report(BASE_TAG, "up to date", None)
        return BASE_TAG
    started = time.monotonic()
    report(BASE_TAG, f"building with debootstrap from {debian_mirror()} (about a minute)", None)
    build_base(client, log_dir)
    report(BASE_TAG, "built", time.monotonic() - started)
    return BASE_TAG
