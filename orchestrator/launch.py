"""fnrun's entry point: for `fnrun run DIR --image IMAGE` and `fnrun render DIR`, start the first
function's container before fnrun itself is imported.

Why it exists: for one function over a small package, fnrun's time is a new interpreter importing
typer, ruamel and the docker SDK (~0.15-0.25 s here), then the engine creating and starting the
container (~0.2 s, mostly runc). Those need not wait for each other. This module imports only the
standard library and fnrun's light sandbox modules, reads the command line, and when the function
and its sandbox are known from it it starts the container in a background thread
(orchestrator.runtimes.container.early) while the real CLI is imported and run. For `run` the
function is --image's; for `render` it is the first container step of a package whose only
Kptfile is its root's, read by orchestrator.render.first_container (which loads fnrun's libyaml
reader: the render loads it anyway). The run's pre-start pool adopts the container only if the
create request it would send itself is identical, so the early container is never a different
sandbox; in every other case it is removed unused.

No early start (the ordinary path, unchanged) when anything is not simple: another command, a flag
that orchestrator.option_schema does not know or marks as not foreseen (--mount, --fn-config,
--exec, --save, --shard...), a remote engine or podman, the `always` pull policy, a catalog image
that may run in-process (builtin), a result cache that could hit (a hit must start no container:
only with --no-cache, FNRUN_CACHE=0 or an empty cache), a fnrun.lock; for render also a package
directory copied into the container rather than bind-mounted (--mounts upload, or not readable by
the sandbox user) and whatever first_container cannot read exactly.
FNRUN_EARLY_START=0 turns it off; FNRUN_DEBUG_LAUNCH=1 says on stderr what became of the container.

The container is removed on every path: the run removes what it adopted; `finish` removes it
otherwise, after the CLI returned, failed, or was stopped by Ctrl-C or SIGTERM (which unwinds like
Ctrl-C). The run's container removals happen in the background while the package is written;
the launcher waits for them before the process exits (orchestrator.runtimes.container.live.wait_later), and
leaves without tearing the interpreter down.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from orchestrator import stops
from orchestrator.errors import report_interrupt
from orchestrator.option_schema import BY_SPELLING, RENDER_BY_SPELLING, Option
from orchestrator.runtimes.container import live

if TYPE_CHECKING:
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.protocol import Invocation

OFF = ("0", "false", "no", "off")


def main(argv: list[str] | None = None, handlers: dict[int, Any] | None = None) -> None:
    """`handlers`: SIGINT's and SIGTERM's before fnrun set any (orchestrator.__main__ noted stops
    while the launcher loaded); they are restored at the end."""
    args = sys.argv[1:] if argv is None else argv
    previous = handlers if handlers is not None else {signum: signal.getsignal(signum) for signum in stops.STOPS}
    stops.remember()
    if previous[signal.SIGTERM] is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stopped)
    if previous[signal.SIGINT] is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stopped)
    early: EarlyContainer | None = None
    code = 1
    try:
        stops.raise_if_asked()  # one that came while fnrun was loading
        _without_paramiko()
        live.defer_waits()  # removals are waited for below, after the package is written
        early = _early_container(args)
        if early is not None:
            with stops.noted_only():
                early.begin()
        code = _cli(args)
        if code == 0 and (asked := stops.asked()) is not None:  # its exception was dropped after the work was done
            late = stops.raised(asked)
            late.late = True  # type: ignore[attr-defined]
            code = report_interrupt(late)
    except KeyboardInterrupt as err:  # before the CLI's own handling: nothing was read or written yet
        code = report_interrupt(err)
    except Exception:
        if (asked := stops.asked()) is None:
            raise
        # a stop that broke what it cut short (a KeyboardInterrupt inside threading's own code
        # leaves its locks inconsistent, and the next use raises RuntimeError): the stop is the cause
        code = report_interrupt(stops.raised(asked))
    finally:
        for signum in previous:  # what follows must complete
            signal.signal(signum, signal.SIG_IGN)
        live.finish_waits()
        if early is not None:
            early.finish()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _leave(code)


def _without_paramiko() -> None:
    """Keep paramiko (~50 ms of imports with invoke) out of a process that will not use it: the
    docker SDK imports it for its ssh:// transport, which it makes optional (an ImportError there
    leaves that transport out). Only DOCKER_HOST=ssh://... needs it."""
    if not os.environ.get("DOCKER_HOST", "").strip().startswith("ssh://"):
        sys.modules.setdefault("paramiko", None)  # type: ignore[arg-type]  # None: "cannot be imported"


def _cli(args: list[str]) -> int:
    """The real CLI's exit code (it always ends in SystemExit)."""
    try:
        from orchestrator.entry import main as full

        full(args)
        return 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:
        return report_interrupt(err)
    # any other error while a stop was asked is main's to report as the stop


def _leave(code: int) -> None:
    """Exit without tearing the interpreter down (~0.05 s with fnrun's modules loaded): everything
    fnrun writes is closed by now, and its threads are done; only the standard streams need a flush."""
    for stream in {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) if s is not None}.values():
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`fnrun source | head`), a closed stream
            code = code or 1
    os._exit(code)


def _stopped(signum: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds like Ctrl-C (the run's own guard does the same while a function runs), so
    the early container and the removals still under way are seen through before the exit; both
    are noted too, should the interpreter drop the exception (orchestrator.stops)."""
    stops.note(signum)
    if not stops.quiet():
        raise stops.raised(signum)


def _early_container(args: list[str]) -> EarlyContainer | None:
    """The container to start early for this command line, or None for the ordinary path."""
    if args[:1] not in (["run"], ["render"]) or os.environ.get("FNRUN_EARLY_START", "1").strip().lower() in OFF:
        return None
    if os.environ.get("FNRUN_SERVER", "").strip():  # every call goes to the function runner (--server)
        return None
    render = args[0] == "render"
    parsed = _command_line(args[1:], RENDER_BY_SPELLING if render else BY_SPELLING)
    if parsed is None or parsed[0].get("--image-pull-policy", ["ifNotPresent"])[-1] == "always":
        return None
    flags, positionals = parsed
    if not render and "/" not in flags.get("--image", [""])[-1]:  # none, or a short name: the CLI adds kpt's catalog prefix
        return None
    from orchestrator.runtimes.container.remote import unix_socket

    path = unix_socket()
    if path is None:  # tcp, TLS, ssh: the SDK's transports
        return None
    if _cache_may_hit(flags) or ("--no-lock" not in flags and _locked(args[1:])):
        return None
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.container.settings import LABEL_PRESTARTED, create_body

    try:
        call, warm = _render_call(flags, positionals, args[1:]) if render else (_run_call(flags), False)
        if call is not None and warm:
            return _warm_container(path, call)
        body = create_body(call, {}) if call is not None else None
    except Exception:  # noqa: BLE001 - a bad value (FnrunError, ValueError, --cpus inf): the CLI reports it
        return None
    if body is None:
        return None
    body["Labels"][LABEL_PRESTARTED] = "1"
    return EarlyContainer(path, body)


def _warm_container(path: str, call: Invocation) -> EarlyContainer | None:
    """The warm container the render will want for `call`'s image, which its pipeline calls more
    than once (orchestrator.runtimes.container.warm), made from the same plan the run makes; only
    when the warm-call helper is built already (building it is the run's business) and /local is
    bind-mounted through a staging directory, not copied in."""
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.container.warm import helper
    from orchestrator.runtimes.container.warm.local import make_staging
    from orchestrator.runtimes.container.warm.plan import container_body, plan, staging_owner

    if not helper.ready():
        return None
    found = plan(call)
    if isinstance(found, str) or found.copies or found.local == "upload":
        return None
    staging = make_staging(staging_owner()) if found.local == "bind" else None
    return EarlyContainer(path, container_body(found, staging), match=found.body, staging=staging)


def _run_call(flags: dict[str, list[str]]) -> Invocation | None:
    """`run --image IMAGE`'s call, when the image runs in a container."""
    image = flags["--image"][-1]
    return None if _may_run_in_process(image, flags) else _invocation(image, flags)


def _render_call(flags: dict[str, list[str]], positionals: list[str], args: list[str]) -> tuple[Invocation | None, bool]:
    """The call of the first container step `render DIR` runs, when the root Kptfile alone says
    which (orchestrator.render.first_container) and the package's directory is bind-mounted at
    /local as the render mounts it (not copied in: --mounts upload, or unreadable for the sandbox
    user); and whether a warm container will serve it (its image is called again, warm is on)."""
    if len(positionals) > 1 or "--" in args or flags.get("--mounts", [os.environ.get("FNRUN_MOUNTS", "auto")])[-1] not in ("auto", "bind"):
        return None, False
    from orchestrator.render.first_container import first_step
    from orchestrator.runtimes.container.access import NOBODY_GID, NOBODY_UID, blocked_by
    from orchestrator.runtimes.container.warm import enabled_by_environment as warm_by_environment

    root = Path(positionals[0] if positionals else ".")
    found = first_step(root, flags.get("--image-prefix", [""])[-1] or None)
    if found is None or _may_run_in_process(found[0], flags):
        return None, False
    local = root.resolve()
    uid, gid = (os.getuid(), os.getgid()) if "--as-current-user" in flags else (NOBODY_UID, NOBODY_GID)
    if blocked_by(local, uid, gid) is not None:
        return None, False
    warm = found[1] and "--no-warm" not in flags and warm_by_environment()
    return _invocation(found[0], flags, local_dir=local), warm  # a Kptfile step declares no network: render's run.invocations


def _locked(args: list[str]) -> bool:
    """Whether a fnrun.lock may govern the run: then the image runs by its locked digest, after the
    lock is checked, never by its tag ahead of that (any word naming a directory counts)."""
    from orchestrator.lock.lockfile import find

    words = [a for a in args if a == "-" or not a.startswith("-")]
    return any(find(Path.cwd() if w == "-" else Path(w)) is not None for w in words if w == "-" or Path(w).is_dir())


def _command_line(args: list[str], schema: dict[str, Option]) -> tuple[dict[str, list[str]], list[str]] | None:
    """A command's flags as {first spelling: [values]} (switches get [""]) and its positionals
    before `--`; None when a flag is not in the command's option schema (orchestrator.option_schema)
    or is one that rules out an early start."""
    found: dict[str, list[str]] = {}
    positionals: list[str] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            continue
        flag, equals, value = arg.partition("=")
        option = schema.get(flag)
        if option is None or not option.early or (equals and not option.takes_value):
            return None
        if option.takes_value and not equals:
            if position >= len(args):
                return None
            value, position = args[position], position + 1
        found.setdefault(option.spellings[0], []).append(value if option.takes_value else "")
    return found, positionals


def _may_run_in_process(image: str, flags: dict[str, list[str]]) -> bool:
    """fnrun's own catalog images may run without a container (orchestrator.runtimes.host.builtin),
    kpt's too with FNRUN_BUILTIN_CATALOG (--builtin-catalog is not a flag the launcher takes)."""
    builtin = "--no-builtin" not in flags and os.environ.get("FNRUN_BUILTIN", "1").strip().lower() not in OFF
    if builtin and image.startswith("fnrun/"):
        return True
    return os.environ.get("FNRUN_BUILTIN_CATALOG", "").strip().lower() in ("1", "true", "yes", "on")


def _cache_may_hit(flags: dict[str, list[str]]) -> bool:
    """A cache hit starts no container, so a container starts early only when none can hit: the
    cache is off, or it holds no entry at all."""
    from orchestrator.runtimes.cache import cache_dir, enabled_by_environment

    if "--no-cache" in flags or not enabled_by_environment():
        return False
    try:
        with os.scandir(cache_dir() / "v1") as shards:
            for shard in shards:
                with os.scandir(shard.path) as entries:
                    if any(not entry.name.startswith(".") for entry in entries):
                        return True
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return False


def _invocation(image: str, flags: dict[str, list[str]], local_dir: Path | None = None) -> Invocation:
    """What `api.run` builds for `--image` (no /local, no mounts: the function sees the package on
    stdin), or `api.render` for a step of the root Kptfile (its directory at /local, no network of
    its own), from the flags' values as typer would convert them."""
    from orchestrator.runtimes.container.settings import function_env
    from orchestrator.runtimes.protocol import Invocation, Sandbox
    from orchestrator.sizes import parse_memory

    def last(flag: str, default: str) -> str:
        return flags.get(flag, [default])[-1]

    defaults = Sandbox()
    sandbox = Sandbox(
        network="--network" in flags,
        as_current_user="--as-current-user" in flags,
        read_only_root="--writable-root" not in flags,
        drop_capabilities="--keep-capabilities" not in flags,
        tmpfs_size=last("--tmpfs-size", defaults.tmpfs_size),
        memory=parse_memory(flags["--memory"][-1]) if "--memory" in flags else defaults.memory,
        pids_limit=int(last("--pids-limit", str(defaults.pids_limit))),
        cpus=float(last("--cpus", str(defaults.cpus))),
        image_pull_policy=last("--image-pull-policy", defaults.image_pull_policy),
        oci_runtime=last("--runtime", os.environ.get("FNRUN_RUNTIME", "")) or None,
    )
    env = function_env((), tuple(flags.get("--env", ())))
    if local_dir is None:
        return Invocation(name=image, image=image, env=env, sandbox=sandbox)
    return Invocation(name=image, image=image, env=env, sandbox=sandbox, local_dir=local_dir, network=False, mount_root=local_dir)


if __name__ == "__main__":
    main()
