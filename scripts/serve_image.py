"""Build the `fnrun serve` container image (deploy/fnrun-serve.Dockerfile) with no registry.

Run: ``.venv/bin/python scripts/serve_image.py [--tag fnrun/fnrun-serve:v1] [--base IMAGE]``

Why a script and not scripts/build_images.py: every ``Dockerfiles/*.Dockerfile`` is a catalog
function image to that script, to ``fnrun images build`` and to the wheel, and this image needs a
staged context those builds do not make. The context, assembled in a temporary directory:

- ``site/``: the Python packages `fnrun serve` imports, installed on this machine by pip with
  ``--target`` from the index pip is configured with, pinned by hash: every entry of
  requirements-runtime.lock plus the ``serve`` extra's entries of requirements.lock
  (``--require-hashes`` refuses anything unpinned, a dependency the lock forgot included). Wheels
  only, for the base image's Python (Debian bookworm: CPython 3.11, glibc 2.36), so nothing is
  compiled and the base needs no pip;
- ``orchestrator/`` and ``functions/`` from this checkout, and the launcher ``fnrun``;
- ``fnrun-warm``: the warm-call helper, built here by fnrun's own code (a static binary: the
  base has no compiler)."""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import docker
import docker.errors

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's orchestrator, whatever the venv has installed
from orchestrator.imagebuild.base import BASE_TAG  # noqa: E402
from orchestrator.imagebuild.engine import BuildFailure, Target, build  # noqa: E402

DOCKERFILE = REPO / "deploy" / "fnrun-serve.Dockerfile"
TAG = "fnrun/fnrun-serve:v1"
SERVE_PACKAGES = ("grpcio", "grpcio-health-checking", "grpcio-tools", "prometheus-client", "protobuf", "typing-extensions")
PYTHON = "3.11"  # the base image's (Debian bookworm)
GLIBC = (36, 34, 28, 17)  # manylinux_2_X wheels bookworm's glibc 2.36 runs, newest first
LOG_DIR = REPO / "build" / "image-logs"


def locked(text: str, names: tuple[str, ...]) -> str:
    """The entries of a hash lock (`name==version \\` and its indented `--hash` lines) for
    `names`, comments left out; one pass over the lines."""
    wanted, keep, out = set(names), False, []
    for line in text.splitlines():
        if line and not line[0].isspace() and not line.startswith("#"):
            keep = line.partition("==")[0].strip().lower() in wanted
        if keep and not line.lstrip().startswith("#"):
            out.append(line)
    return "\n".join(out) + "\n"


def requirements(repo: Path = REPO) -> str:
    """What the image installs: the runtime lock, then the serve extra's pins."""
    serve = locked((repo / "requirements.lock").read_text(), SERVE_PACKAGES)
    missing = [name for name in SERVE_PACKAGES if f"\n{name}==" not in f"\n{serve}"]
    if missing:
        raise BuildFailure(f"requirements.lock pins no {', '.join(missing)}: regenerate it with scripts/lock-deps")
    return (repo / "requirements-runtime.lock").read_text() + serve


def install_packages(into: Path, pinned: str) -> None:
    """pip --target for the image's Python and platform, hashes required, wheels only."""
    machine = platform.machine()
    listing = into.parent / "requirements.txt"
    listing.write_text(pinned)
    argv = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
            "--target", str(into), "--require-hashes", "--only-binary=:all:", "--implementation", "cp",
            "--python-version", PYTHON, *(f"--platform=manylinux_2_{v}_{machine}" for v in GLIBC),
            f"--platform=manylinux2014_{machine}", "-r", str(listing)]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:
        why = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or done.stderr.splitlines() or ["no message"]
        raise BuildFailure(f"pip could not install the image's packages: {why[-1]}")


def warm_helper() -> Path:
    """The warm-call helper binary, built (or found) as fnrun builds it for itself."""
    from orchestrator.runtimes.container.warm.helper import NAME, helper_dir
    from orchestrator.settings import helper_place

    home, why = helper_dir(place=helper_place(os.environ))  # this script is an edge: the user's settings hold
    if home is None:
        raise BuildFailure(f"the warm-call helper: {why}")
    return home / NAME


def stage(context: Path, repo: Path = REPO) -> Path:
    """Assemble the build context in `context` (an empty or missing directory)."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    context.mkdir(parents=True, exist_ok=True)
    shutil.copy2(DOCKERFILE, context / "Dockerfile")
    shutil.copytree(repo / "orchestrator", context / "orchestrator", ignore=skip)
    shutil.copytree(repo / "functions", context / "functions", ignore=skip)
    shutil.copy2(repo / "Dockerfiles" / "fnrun-launcher", context / "fnrun-launcher")
    shutil.copy2(warm_helper(), context / "fnrun-warm")
    install_packages(context / "site", requirements(repo))
    return context


def build_image(client: docker.DockerClient, tag: str = TAG, base: str = BASE_TAG, repo: Path = REPO) -> str:
    """Stage and build; the image's id. BuildFailure says what went wrong in one line."""
    with tempfile.TemporaryDirectory(prefix="fnrun-serve-image-") as tmp:
        context = stage(Path(tmp) / "context", repo)
        digest = hashlib.sha256(DOCKERFILE.read_bytes() + requirements(repo).encode()).hexdigest()
        target = Target("fnrun-serve", tag, context / "Dockerfile", context)
        build(client, target, context, base, digest, {}, LOG_DIR)
    return str(client.images.get(tag).id)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default=TAG, help=f"the image's tag (default {TAG})")
    parser.add_argument("--base", default=BASE_TAG, help=f"the image built FROM (default {BASE_TAG}, scripts/build_images.py makes it)")
    args = parser.parse_args(argv)
    try:
        client = docker.from_env(timeout=600)
        image = build_image(client, args.tag, args.base)
    except docker.errors.DockerException as err:
        print(f"serve_image: no Docker engine answers ({err})", file=sys.stderr)
        return 1
    except BuildFailure as err:
        print(f"serve_image: {err}", file=sys.stderr)
        return 1
    print(f"serve_image: built {args.tag} ({image[:19]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
