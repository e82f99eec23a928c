"""The static helper a warm container runs as PID 1 and starts each call through (fnrun-warm.c).

It must run in any image, including those with no shell and no libc (static Go binaries on
distroless), so it is one statically linked binary, carried into the container read-only (a bind
mount of its directory; an upload where the engine is remote, as /local is). The package build
makes it for linux/amd64 and linux/arm64 (orchestrator/prebuilt.py), and the one for
the *engine's* architecture is used, which may not be this machine's (an arm64 engine reached
from an amd64 laptop). FNRUN_WARM_HELPER names a binary built elsewhere instead. Where none was
shipped (a checkout never set up), fnrun builds it once into its cache directory: with zig's
cross compiler if the `ziglang` package is installed, else with `cc -static` when the engine's
architecture is this machine's. Where none of that gives a helper the engine can run, warm
containers are off and `fnrun doctor` says why.

Which architecture: a local engine (a unix socket, or tcp on loopback) runs on this machine's
kernel, or in a VM of this machine's architecture (Docker Desktop, colima), so it is taken to be
this machine's without asking: asking costs a GET /version (about 10 ms, more on a busy engine)
on every run, and the launcher must decide before it may talk to the engine at all. A remote
engine is asked, once per engine client. `fnrun doctor` asks every engine and says when the two
disagree; a helper of the wrong architecture fails to start, and its calls then run cold.

Where to look (FNRUN_WARM_HELPER, the cache home, CC) is read at the edge into a
settings.HelperPlace, which every caller hands in.
"""

from __future__ import annotations

import os
import platform
import shutil
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator import prebuilt
from orchestrator.settings import WARM_HELPER, HelperPlace

SOURCE = prebuilt.HELPER_SOURCE
NAME = prebuilt.HELPER_NAME
TARGET = "/.fnrun-warm"  # where the helper's directory is mounted, read-only, in the container

_lock = threading.Lock()
_found: dict[tuple[str, Path, str], tuple[Path | None, str]] = {}  # by architecture, home and compiler
_asked: weakref.WeakKeyDictionary[Any, tuple[str | None, str]] = weakref.WeakKeyDictionary()  # by engine client


def host_arch() -> str:
    """This machine's architecture as the engines name it (amd64, arm64), else as uname does."""
    machine = platform.machine()
    return prebuilt.arch_of(machine) or machine.lower()


def helper_dir(arch: str | None = None, connect: Callable[[], Any] | None = None,
               place: HelperPlace = HelperPlace()) -> tuple[Path | None, str]:
    """(the directory holding the helper binary for an engine of `arch`, "") or (None, why there
    is none), had where `place` says (the library's default: a user who set nothing). `arch`
    defaults to the engine fnrun talks to (engine_arch: through `connect`, the run's engine
    client, if given)."""
    given = user_helper(place)
    if given is not None:
        return given
    if arch is None:
        arch, why = engine_arch(connect)
        if arch is None:
            return None, why
    key = (arch, place.home, place.compiler)
    with _lock:
        if key not in _found:
            _found[key] = _find_or_build(arch, place)
        return _found[key]


def ready(place: HelperPlace) -> bool:
    """Whether the helper is there without building it or asking the engine: the launcher starts
    a warm container early only then, and only on a local engine, so this machine's architecture
    is the engine's (a compiler run is the run's own business, reported as such)."""
    given = user_helper(place)
    if given is not None:
        return given[0] is not None
    return any(os.access(path, os.X_OK) for path in _places(host_arch(), place.home))


def user_helper(place: HelperPlace) -> tuple[Path | None, str] | None:
    """FNRUN_WARM_HELPER's answer, as helper_dir gives it; None when it names no binary."""
    given = place.given
    if not given:
        return None
    path = Path(given)
    if path.name != NAME or not os.access(path, os.X_OK):
        return None, f"{WARM_HELPER}={given} is not an executable named {NAME}"
    return path.parent, ""


def engine_arch(connect: Callable[[], Any] | None = None) -> tuple[str | None, str]:
    """(the architecture of the engine fnrun talks to, "") or (None, why it is not known)."""
    from orchestrator.errors import EnvironmentProblem
    from orchestrator.runtimes.container.remote import engine_host, is_remote

    try:
        remote = is_remote(engine_host())
    except EnvironmentProblem as err:
        return None, str(err)
    if not remote:
        return host_arch(), ""
    from orchestrator.runtimes.container.runtime import api_client

    try:
        return asked((connect or api_client)())
    except EnvironmentProblem as err:
        return None, str(err)


def asked(api: Any) -> tuple[str | None, str]:
    """(the architecture engine client `api` reports, "") or (None, why it cannot be used): its
    /version's `Arch`, else its /info's `Architecture`; asked once per client."""
    with _lock:
        if api in _asked:
            return _asked[api]
    try:
        reported = str(api.version().get("Arch") or api.info().get("Architecture") or "")
    except Exception as err:  # noqa: BLE001 - any transport's failure: no warm container, the cold path reports the engine
        return None, f"cannot ask the engine its architecture: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
    answer: tuple[str | None, str] = (prebuilt.arch_of(reported) or reported.lower(), "") if reported else (
        None, "the engine does not say its architecture")
    with _lock:
        _asked[api] = answer
    return answer


def _places(arch: str, home: Path) -> tuple[Path, ...]:
    """Where a helper for `arch` may be, in order: shipped with fnrun, built into `home`."""
    shipped = (prebuilt.helper_path(arch),) if arch in prebuilt.TARGETS else ()
    return (*shipped, _built_home(arch, home) / NAME)


def _built_home(arch: str, home: Path) -> Path:
    """Where this source version's helper is built for `arch`: one directory per version of
    fnrun-warm.c and architecture under the user's fnrun home (settings.fnrun_home, whatever
    FNRUN_CACHE_DIR says: a result cache per CI job or test must not cost a compiler run each),
    holding only the binary (it is bind-mounted whole)."""
    import hashlib

    return home / "warm-helper" / f"{hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]}-linux-{arch}"


def _find_or_build(arch: str, place: HelperPlace) -> tuple[Path | None, str]:
    for path in _places(arch, place.home):
        if os.access(path, os.X_OK):
            return path.parent, ""
    target = _built_home(arch, place.home) / NAME
    if arch in prebuilt.TARGETS and prebuilt.zig() is not None:
        why = prebuilt.build_helper(arch, target)
    elif arch == host_arch():
        compiler = shutil.which(place.compiler) or shutil.which("gcc")
        if compiler is None:
            return None, (f"no warm-call helper for the engine's linux/{arch}: this fnrun was installed without one, "
                          "and there is neither ziglang (pip install ziglang) nor a C compiler to build it")
        why = prebuilt.build_helper(arch, target, [compiler])
    elif arch in prebuilt.TARGETS:
        return None, (f"no warm-call helper for the engine's linux/{arch}: this fnrun was installed without one, "
                      f"and only ziglang (pip install ziglang) builds it on this {host_arch()} machine")
    else:
        return None, f"no warm-call helper for the engine's architecture {arch}: fnrun ships one for {' and '.join(prebuilt.TARGETS)}"
    if why:
        return None, f"cannot build the warm-call helper: {why}"
    return target.parent, ""
