"""`fnrun doctor`'s proof that a function container really starts here.

Reading the engine's /info cannot show what users hit: a runtime that fails on this host's cgroup
layout, limits the host refuses, a runtime that is not registered. So doctor starts one function
container with the sandbox `fnrun run` uses (no network, user 65534, no-new-privileges, read-only
root, all capabilities dropped, memory/pids/cpu/rlimit limits, /local mounted read-only, the
chosen --runtime), feeds it a ResourceList and checks that the same bytes come back.

The image needs no registry: it is made from this machine's own `cat` and the libraries it loads,
imported through the Engine API. `cat` is the identity function of the KRM protocol.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from orchestrator.errors import FnrunError
from orchestrator.runtimes.protocol import Invocation, Sandbox
from orchestrator.settings import Settings

PROBE_REPOSITORY = "fnrun/doctor-probe"
PROBE_INPUT = (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
               b"  metadata:\n    name: doctor-probe\n")
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}


class ProbeUnavailable(Exception):
    """The probe image cannot be made for this engine (an engine of another architecture, no cat)."""


def probe(oci_runtime: str | None, mount_mode: str) -> tuple[bool, str, str | None]:
    """(ran, what happened, its fix where fnrun knows one): True only when a container started in
    the sandbox and answered."""
    from orchestrator.runtimes.container.runtime import ContainerRuntime, api_client

    api = api_client()
    try:
        image = probe_image(api)
    except ProbeUnavailable as err:
        return False, f"no probe image: {err}", None
    with tempfile.TemporaryDirectory(prefix="fnrun-doctor-") as local:
        sandbox = Sandbox(oci_runtime=oci_runtime, mount_mode=mount_mode, timeout=60.0, image_pull_policy="never")
        invocation = Invocation(name=image, image=image, local_dir=Path(local), sandbox=sandbox)
        try:
            output = ContainerRuntime().run(invocation, PROBE_INPUT)
        except FnrunError as err:
            return False, err.what, err.fix
    if output.exit_code != 0:
        return False, f"the probe container exited {output.exit_code}: {output.stderr.strip()[:200]}", None
    if output.stdout != PROBE_INPUT:
        return False, "the probe container answered with other bytes than it was given", None
    return True, f"a function container ran in the full sandbox and answered ({output.duration:.2f}s)", None


def warm_probe(oci_runtime: str | None, mount_mode: str, switches: Settings) -> tuple[bool, str]:
    """(works, what happened): two calls of the probe image, each with its own /local, served by
    one warm container (orchestrator.runtimes.container.warm), each answering what it was given.
    The probe image has no shell and no libc of its own to lean on, as kpt's catalog images."""
    from orchestrator.runtimes.container.runtime import ContainerRuntime, api_client
    from orchestrator.runtimes.container.warm.plan import NoWarm, plan
    from orchestrator.runtimes.container.warm.pool import WarmPool
    from orchestrator.runtimes.container.warm.runtime import WarmRuntime
    if not switches.warm:
        return True, "off (FNRUN_WARM=0): every call starts a container of its own"
    try:
        image = probe_image(api_client())
    except ProbeUnavailable as err:
        return False, f"no probe image: {err}"
    sandbox = Sandbox(oci_runtime=oci_runtime, mount_mode=mount_mode, timeout=60.0, image_pull_policy="never")
    pool = WarmPool()
    took = []
    try:
        with tempfile.TemporaryDirectory(prefix="fnrun-doctor-") as first, tempfile.TemporaryDirectory(prefix="fnrun-doctor-") as second:
            for directory in (first, second):
                os.chmod(directory, 0o755)  # as a package's directory is: bind-mounted, not copied in
            calls = [Invocation(name=image, image=image, local_dir=Path(d), sandbox=sandbox) for d in (first, second)]
            planned = plan(calls[0], place=switches.helper)
            if isinstance(planned, NoWarm):
                return False, f"warm calls cannot be used: {planned.reason}"
            for call in calls:
                output = WarmRuntime(pool, ContainerRuntime(), place=switches.helper).run(call, PROBE_INPUT)
                if output.exit_code != 0 or output.stdout != PROBE_INPUT:
                    return False, f"a warm call answered with exit code {output.exit_code} and other bytes than it was given"
                took.append(output.duration)
    except FnrunError as err:
        return False, f"a warm call failed: {err}"
    finally:
        pool.close()
    if pool.served != 2 or pool.started != 1:
        return False, f"the calls did not share one warm container ({pool.served} served warm, {pool.started} started)"
    return True, f"on: two calls ran in one warm container ({took[0]:.2f}s with its start, then {took[1]:.2f}s)"


def probe_image(api) -> str:
    """The probe image's name, imported into the engine on first use (named by its content)."""
    engine_arch = str(api.version().get("Arch", ""))
    here = _ARCH.get(platform.machine(), platform.machine())
    if engine_arch and engine_arch != here:
        raise ProbeUnavailable(f"the engine runs {engine_arch} and this machine {here}")
    data = _rootfs_tar()
    name = f"{PROBE_REPOSITORY}:{hashlib.sha256(data).hexdigest()[:12]}"
    import docker.errors

    try:
        api.inspect_image(name)
        return name
    except docker.errors.ImageNotFound:
        pass
    repository, tag = name.split(":")
    answer = api.import_image_from_data(data, repository=repository, tag=tag, changes=['CMD ["/bin/cat"]'])
    # Podman names an import after its own fashion (docker.io/...:latest): tag it by the id it reports.
    reported = [json.loads(line).get("status", "") for line in str(answer).splitlines() if line.strip().startswith("{")]
    image_id = next((r for r in reversed(reported) if r.startswith("sha256:")), None)
    if image_id is None:
        raise ProbeUnavailable(f"the engine did not report the imported image's id ({str(answer)[:120]})")
    api.tag(image_id, repository, tag)
    return name


def _rootfs_tar() -> bytes:
    """A root file system holding `cat` as /bin/cat and the shared libraries it loads, at their paths."""
    cat = shutil.which("cat")
    if cat is None:
        raise ProbeUnavailable("this machine has no `cat`")
    files = {"bin/cat": Path(cat).resolve()}
    for library in _libraries(Path(cat)):
        files[library.lstrip("/")] = Path(library).resolve()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        made: set[str] = set()
        for folder in ("bin", "etc", "tmp", "local"):
            _add_dir(archive, folder, made)
        for inside, source in sorted(files.items()):
            for parent in reversed(Path(inside).parents[:-1]):
                _add_dir(archive, str(parent), made)
            info = tarfile.TarInfo(inside)
            info.size, info.mode, info.mtime = source.stat().st_size, 0o755, 0
            with source.open("rb") as handle:
                archive.addfile(info, handle)
    return buffer.getvalue()


def _add_dir(archive: tarfile.TarFile, name: str, made: set[str]) -> None:
    if name not in made:
        made.add(name)
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755, 0
        archive.addfile(info)


def _libraries(binary: Path) -> list[str]:
    """What the dynamic loader maps for `binary` (ldd's answer); none for a static binary."""
    try:
        listing = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ProbeUnavailable(f"cannot list the libraries of {binary}: {err}") from None
    if listing.returncode != 0:
        if "not a dynamic executable" in (listing.stdout + listing.stderr):
            return []
        raise ProbeUnavailable(f"cannot list the libraries of {binary}: {listing.stderr.strip()[:120]}")
    found = []
    for line in listing.stdout.splitlines():
        for path in line.split():
            if path.startswith("/") and Path(path).exists():
                found.append(path)
    return sorted(set(found))
