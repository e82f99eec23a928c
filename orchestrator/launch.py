"""fnrun's entry point: for `fnrun run DIR --image IMAGE` and `fnrun render DIR`, start the first
function's container before fnrun itself is imported.

Why it exists: for one function over a small package, fnrun's time is a new interpreter importing
typer, ruamel and the docker SDK (~0.15-0.25 s here), then the engine creating and starting the
container (~0.2 s, mostly runc). Those need not wait for each other. This module loads only the
standard library and fnrun's stops and errors; `main` loads fnrun's light sandbox modules, reads
the command line, and when the function and its sandbox are known from it starts the container in
a background thread (orchestrator.runtimes.container.early) while the rest of fnrun is imported
and run. For `run` the
function is --image's; for `render` it is the first container step of a package whose only
Kptfile is its root's, read by orchestrator.render.first_container (which loads fnrun's libyaml
reader: the render loads it anyway). The run's pre-start pool adopts the container only if the
create request it would send itself is identical, so the early container is never a different
sandbox; in every other case it is removed unused.

No early start (the ordinary path, unchanged) when anything is not simple: another command, a flag
that orchestrator.option_schema does not know or marks as not foreseen (--mount, --fn-config,
--exec, --save, --shard...), --server (every call goes to the function runner), a remote engine or podman, the `always` pull policy, a catalog image
that may run in-process (builtin), a result cache that could hit (a hit must start no container:
only with --no-cache, FNRUN_CACHE=0 or an empty cache), a fnrun.lock; for render also a package
directory copied into the container rather than bind-mounted (--mounts upload, or not readable by
the sandbox user) and whatever first_container cannot read exactly.
FNRUN_EARLY_START=0 turns it off; FNRUN_DEBUG_LAUNCH=1 says on stderr what became of the container.
Every value is read through orchestrator.option_schema as the CLI would hand it over (types,
defaults, environment variables); a value the CLI would refuse leaves the start to it.

What fnrun loads before the user's work is most of a small command's time, so the launcher
answers `fnrun --version` before anything else loads, and carries the commands people run most
(`run`, `render`, `source`, `sink`, kpt's spellings) out without the CLI framework where it reads
them as the CLI would (orchestrator.direct); anything else is the CLI's, as ever.

The container is removed on every path: the run removes what it adopted; `finish` removes it
otherwise, after the CLI returned, failed, or was stopped by Ctrl-C or SIGTERM (which unwinds like
Ctrl-C). The run's container removals happen in the background while the package is written;
the launcher waits for them before the process exits (orchestrator.runtimes.container.live.wait_later), and
leaves without tearing the interpreter down.
"""

from __future__ import annotations

import os
import sys

from orchestrator import COMPLETE_VAR, stops, version
from orchestrator.errors import Interrupted, report_interrupt

TYPE_CHECKING = False  # typing's constant without typing, which `fnrun --version` never needs; type checkers read it as True
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from orchestrator.methodcode import Kept
    from orchestrator.option_schema import CommandLine
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.protocol import Invocation

SETTLE_WITHIN = 5.0  # seconds a create a stop left under way may take before fnrun exits without it
#: Commands that run no function, so start no container (nor do kpt's spellings, answered with a
#: hint): the registry of live containers (orchestrator.runtimes.container.live, with the
#: runtimes' package) need not load for them.
NO_FUNCTIONS = ("source", "sink")


def main(argv: list[str] | None = None, handlers: dict[int, Any] | None = None, kept: Kept | None = None) -> None:
    """`handlers`: SIGINT's and SIGTERM's before fnrun set any (orchestrator.__main__ noted stops
    while the launcher loaded); they are restored at the end. `kept`: the dataclass methods'
    compiled code (orchestrator.methodcode), saved at the end when any was compiled anew."""
    args = sys.argv[1:] if argv is None else argv
    at_once = answers_at_once(args)
    containers = False
    if not at_once:  # the launcher's own modules, loaded while a stop still waits (orchestrator.__main__)
        from orchestrator import option_schema  # noqa: F401 - read by every command the launcher may carry out
        from orchestrator.edge import kpt_spelling

        containers = not (args and args[0] in NO_FUNCTIONS) and kpt_spelling(args) is None
    if containers:
        from orchestrator.runtimes.container import live
    previous = stops.take_over(handlers)
    early: EarlyContainer | None = None
    code = 1
    try:
        stops.raise_if_asked()  # one that came while fnrun was loading
        if at_once:
            print(f"fnrun {version()}")
            code = 0
        else:
            _without_paramiko()
            if containers:
                live.defer_waits()  # removals are waited for below, after the package is written
            early = _early_container(args)
            if early is not None:
                with stops.held():
                    early.begin()
            from orchestrator import direct

            code = _cli(args, early) if (done := direct.carried_out(args, os.environ, early)) is None else done
        signum = stops.asked()
        if code == 0 and signum is not None:  # its exception was dropped after the work was done
            code = report_interrupt(Interrupted(signum, late=True))
    except KeyboardInterrupt as err:  # the CLI's own, or before it: nothing was read or written yet
        code = report_interrupt(err)
    except Exception:
        signum = stops.asked()
        if signum is None:
            raise
        # a stop that broke what it cut short (a KeyboardInterrupt inside threading's own code
        # leaves its locks inconsistent, and the next use raises RuntimeError): the stop is the cause
        code = report_interrupt(Interrupted(signum))
    finally:
        stops.ignore()  # what follows must complete
        if containers:
            live.finish_waits()
            live.settle(within=SETTLE_WITHIN)
        if early is not None:
            early.finish()
        stops.give_back(previous)
        if kept is not None:
            kept.save()
    _leave(code)


def answers_at_once(args: list[str]) -> bool:
    """Whether the launcher answers this command line before anything else of fnrun loads: only
    `fnrun --version`, whose one line would otherwise wait ~0.1 s for typer, the dataclasses and
    importlib.metadata. With anything after it the CLI decides, as ever (`--version --bogus` is
    an error). orchestrator.__main__ asks too, to leave the dataclasses' kept code unread then."""
    return args == ["--version"] and COMPLETE_VAR not in os.environ


def _without_paramiko() -> None:
    """Keep paramiko (~50 ms of imports with invoke) out of a process that will not use it: the
    docker SDK imports it for its ssh:// transport, which it makes optional (an ImportError there
    leaves that transport out). Only DOCKER_HOST=ssh://... needs it."""
    if not os.environ.get("DOCKER_HOST", "").strip().startswith("ssh://"):
        sys.modules.setdefault("paramiko", None)  # type: ignore[arg-type]  # None: "cannot be imported"


def _cli(args: list[str], early: EarlyContainer | None = None) -> int:
    """The real CLI's exit code (it always ends in SystemExit; an interrupt, or an error while a
    stop was asked, is main's to report as the stop)."""
    try:
        from orchestrator.entry import main as full

        full(args, early)
        return 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1


def _leave(code: int) -> None:
    """Exit without tearing the interpreter down (~0.05 s with fnrun's modules loaded): everything
    fnrun writes is closed by now, and its threads are done; only the standard streams need a flush."""
    for stream in {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) if s is not None}.values():
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`fnrun source | head`), a closed stream
            code = code or 1
    os._exit(code)


def _early_container(args: list[str]) -> EarlyContainer | None:
    """The container to start early for this command line, or None for the ordinary path."""
    from orchestrator.direct import command_line
    from orchestrator.option_schema import BY_NAME, RENDER_BY_NAME
    from orchestrator.settings import switch

    if not switch(os.environ.get("FNRUN_EARLY_START"), True):
        return None
    command = command_line(args, os.environ)
    if command is None:
        return None
    line, given = command
    render = args[0] == "render"
    if any(not (RENDER_BY_NAME if render else BY_NAME)[name].early for name in line.given):
        return None
    if (given["server"] or "").strip() or given["image_pull_policy"] == "always":  # every call goes to the function runner (--server)
        return None
    if not render and "/" not in (given["image"] or ""):  # none, or a short name: the CLI adds kpt's catalog prefix
        return None
    from orchestrator.runtimes.container.remote import unix_socket

    path = unix_socket()
    if path is None:  # tcp, TLS, ssh: the SDK's transports
        return None
    if _cache_may_hit(given) or (not given["no_lock"] and _locked(args[1:])):
        return None
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.container.settings import LABEL_PRESTARTED, create_body

    try:
        call, warm = _render_call(given, line) if render else (_run_call(given), False)
        if call is not None and warm:
            return _warm_container(path, call)
        body = create_body(call, {}) if call is not None else None
    except Exception:  # noqa: BLE001 - a bad value (FnrunError, ValueError, --cpus inf): the CLI reports it
        return None
    if body is None:
        return None
    body["Labels"][LABEL_PRESTARTED] = "1"
    return EarlyContainer(path, body, debug=_debugging())


def _debugging() -> bool:
    """FNRUN_DEBUG_LAUNCH: say on stderr what the launcher did, and what became of its container."""
    from orchestrator.settings import switch

    return switch(os.environ.get("FNRUN_DEBUG_LAUNCH"), False)


def _warm_container(path: str, call: Invocation) -> EarlyContainer | None:
    """The warm container the render will want for `call`'s image, which its pipeline calls more
    than once (orchestrator.runtimes.container.warm), made from the same plan the run makes; only
    when the warm-call helper is built already (building it is the run's business) and /local is
    bind-mounted through a staging directory, not copied in."""
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.container.warm import helper
    from orchestrator.runtimes.container.warm.local import make_staging
    from orchestrator.runtimes.container.warm.plan import NoWarm, container_body, plan, staging_owner
    from orchestrator.settings import helper_place

    place = helper_place(os.environ)  # where the run will look for the helper: the early container must mount the same one
    if not helper.ready(place):
        return None
    found = plan(call, place=place)
    if isinstance(found, NoWarm) or found.copies or found.local == "upload":
        return None
    staging = make_staging(staging_owner()) if found.local == "bind" else None
    return EarlyContainer(path, container_body(found, staging), match=found.body, staging=staging, debug=_debugging())


def _run_call(given: dict[str, Any]) -> Invocation | None:
    """`run --image IMAGE`'s call, when the image runs in a container."""
    image = given["image"]
    return None if _may_run_in_process(image, given) else _invocation(image, given)


def _render_call(given: dict[str, Any], line: CommandLine) -> tuple[Invocation | None, bool]:
    """The call of the first container step `render DIR` runs, when the root Kptfile alone says
    which (orchestrator.render.first_container) and the package's directory is bind-mounted at
    /local as the render mounts it (not copied in: --mounts upload, or unreadable for the sandbox
    user); and whether a warm container will serve it (its image is called again, warm is on)."""
    from orchestrator.option_schema import default

    if len(line.positionals) > 1 or line.rest is not None or given["mount_mode"] not in (default("mount_mode"), "bind"):
        return None, False
    from pathlib import Path

    from orchestrator.render.first_container import first_step
    from orchestrator.runtimes.container.access import NOBODY_GID, NOBODY_UID, blocked_by

    root = Path(line.positionals[0] if line.positionals else ".")
    found = first_step(root, given["image_prefix"] or None)
    if found is None or _may_run_in_process(found[0], given):
        return None, False
    local = root.resolve()
    uid, gid = (os.getuid(), os.getgid()) if given["as_current_user"] else (NOBODY_UID, NOBODY_GID)
    if blocked_by(local, uid, gid) is not None:
        return None, False
    warm = found[1] and not _asked(given, "no_warm")
    return _invocation(found[0], given, local_dir=local), warm  # a Kptfile step declares no network: render's run.invocations


def _asked(given: dict[str, Any], name: str) -> bool:
    """Whether a switch is on: given, or asked by its environment variable (FNRUN_CACHE=0 is --no-cache)."""
    from orchestrator.option_schema import BY_NAME

    return bool(given[name]) or BY_NAME[name].given_by_environment(os.environ)


def _locked(args: list[str]) -> bool:
    """Whether a fnrun.lock may govern the run: then the image runs by its locked digest, after the
    lock is checked, never by its tag ahead of that (any word naming a directory counts)."""
    from pathlib import Path

    from orchestrator.lock.lockfile import find

    words = [a for a in args if a == "-" or not a.startswith("-")]
    return any(find(Path.cwd() if w == "-" else Path(w)) is not None for w in words if w == "-" or Path(w).is_dir())


def _may_run_in_process(image: str, given: dict[str, Any]) -> bool:
    """fnrun's own catalog images may run without a container (orchestrator.runtimes.host.builtin),
    kpt's too with FNRUN_BUILTIN_CATALOG (--builtin-catalog is not a flag the launcher takes)."""
    if not _asked(given, "no_builtin") and image.startswith("fnrun/"):
        return True
    return _asked(given, "builtin_catalog")


def _cache_may_hit(given: dict[str, Any]) -> bool:
    """A cache hit starts no container, so a container starts early only when none can hit: the
    cache is off, or it holds no entry at all."""
    from orchestrator.settings import cache_dir

    if _asked(given, "no_cache"):
        return False
    try:
        with os.scandir(cache_dir(os.environ) / "v1") as shards:
            for shard in shards:
                with os.scandir(shard.path) as entries:
                    if any(not entry.name.startswith(".") for entry in entries):
                        return True
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return False


def _invocation(image: str, given: dict[str, Any], local_dir: Path | None = None) -> Invocation:
    """What `api.run` builds for `--image` (no /local, no mounts: the function sees the package on
    stdin), or `api.render` for a step of the root Kptfile (its directory at /local, no network of
    its own), from the options' values as the CLI hands them over, parsed as the run parses them."""
    from orchestrator.requests.command_line import sandbox_settings
    from orchestrator.requests.parse import sandbox_of
    from orchestrator.runtimes.container.settings import function_env
    from orchestrator.runtimes.protocol import Invocation

    sandbox = sandbox_of(sandbox_settings(given))
    env = function_env((), tuple(given["env"] or ()))
    if local_dir is None:
        return Invocation(name=image, image=image, env=env, sandbox=sandbox)
    return Invocation(name=image, image=image, env=env, sandbox=sandbox, local_dir=local_dir, network=False, mount_root=local_dir)


if __name__ == "__main__":
    main()
