"""A request's user strings turned into what the pipeline takes, once, at the edge: the
`RunOptions` (sizes, modes and switches parsed; a bad value is an InputError naming its flag) and
the function `fnrun run` was given on the command line, with its match/exclude selectors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from .groups import CI, Functions, Images, Output, Request, RunRequest, SandboxSettings, Speed

if TYPE_CHECKING:
    from ..run.pipeline import RunOptions
    from ..runtimes import Sandbox
    from ..runtimes.remote import Server
    from ..select.functions import FunctionSpec


def selections(functions: Functions) -> tuple[list[dict], list[dict]]:
    """The match and exclude flags as Kptfile selector lists (empty, or one selector each)."""
    from ..select.flags import selector_dict

    selector, exclude = selector_dict(functions.match, "match"), selector_dict(functions.exclude, "exclude")
    return ([selector] if selector else []), ([exclude] if exclude else [])


def shard_of(ci: CI) -> tuple[int, int] | None:
    from ..select.shard import parse

    return parse(ci.shard) if ci.shard else None


def pipeline_options(request: Request, root: Path | None) -> RunOptions:
    """The RunOptions of either command: its groups parsed, and what its `command` says."""
    from ..run.pipeline import RunOptions
    from ..run.units import default_jobs, parse_jobs
    from ..select.functions import parse_mount_flag
    from ..settings import Settings

    command, speed = request.command, request.speed
    switches = Settings.from_environ()
    return RunOptions(
        sandbox=sandbox_of(request.sandbox),
        enable_exec=request.sandbox.enable_exec,
        global_scope=command.global_scope,
        env=request.sandbox.env,
        mounts=tuple(parse_mount_flag(m) for m in request.sandbox.mounts),
        results_dir=request.output.results_dir,
        cache=speed.cache and switches.cache and speed.server is None,  # the server keeps its own
        builtin=speed.builtin and switches.builtin,
        builtin_catalog=speed.builtin_catalog or switches.builtin_catalog,
        jobs=default_jobs(switches.jobs) if speed.jobs is None else parse_jobs(speed.jobs),
        warm=speed.warm and switches.warm,
        lock=_governing_lock(request.images, root),
        file_names=_file_names(request.output, command.file_names),
        package_paths=command.package_paths,
        error_results_fail=command.error_results_fail,
        handover=not (request.directory == "-" or request.output.to_stdout),
        server=_server(speed.server),
        settings=switches,
    )


def _server(address: str | None) -> Server | None:
    """--server's address, checked for its form (whether it answers, the first call finds out),
    with TLS where FNRUN_SERVER_CA names the server's CA (FNRUN_SERVER_CERT and FNRUN_SERVER_KEY:
    this client's certificate, for mutual TLS)."""
    if address is None or not address.strip():
        return None
    import os

    from ..runtimes.remote import Server, check_address

    def path(variable: str) -> Path | None:
        value = os.environ.get(variable, "").strip()
        return Path(value) if value else None

    ca, cert, key = path("FNRUN_SERVER_CA"), path("FNRUN_SERVER_CERT"), path("FNRUN_SERVER_KEY")
    if (cert is None) != (key is None) or (cert is not None and ca is None):
        raise InputError("FNRUN_SERVER_CERT and FNRUN_SERVER_KEY go together, and with FNRUN_SERVER_CA (mutual TLS is TLS first)")
    return Server(check_address(address, "--server"), ca, cert, key)


def sandbox_of(settings: SandboxSettings) -> Sandbox:
    """The runtimes' Sandbox: sizes and the pull policy parsed, each bad value named by its flag."""
    from ..option_schema import PULL_POLICIES
    from ..runtimes import Sandbox
    from ..sizes import parse_size

    try:
        max_output = parse_size(settings.max_output)
    except ValueError:
        raise InputError(f"--max-output {settings.max_output!r}: use a size such as 256M, 1G or 512k") from None
    pull_policy = {p.lower(): p for p in PULL_POLICIES}.get(settings.image_pull_policy.lower())  # kpt writes Always, IfNotPresent
    if pull_policy is None:
        raise InputError(f"--image-pull-policy {settings.image_pull_policy!r}: use one of {', '.join(PULL_POLICIES)}")
    return Sandbox(
        network=settings.network,
        as_current_user=settings.as_current_user,
        read_only_root=settings.read_only_root,
        tmpfs_size=settings.tmpfs_size,
        memory=_memory(settings.memory),
        pids_limit=settings.pids_limit,
        cpus=settings.cpus,
        timeout=settings.timeout,
        drop_capabilities=settings.drop_capabilities,
        image_pull_policy=pull_policy,
        max_output=max_output,
        oci_runtime=settings.oci_runtime or None,
        mount_mode=check_mode(settings.mount_mode),
    )


def given_functions(request: RunRequest, root: Path | None) -> list[FunctionSpec] | None:
    """The function `fnrun run` was given (--image or --exec) with its selectors; None: the
    package's own. Flags that only go with a given function are refused without one."""
    from ..select.functions import adhoc

    functions = request.functions
    if functions.tag is not None and not functions.image:
        raise InputError("--tag goes with --image")
    if functions.image or functions.exec_path:
        exec_path, exec_args = split_exec(functions.exec_path)
        image = tagged_image(functions, request.images, request.speed)
        spec = adhoc(root, image, exec_path, functions.fn_config, functions.arguments, functions.fn_config_as_item)
        return [_selecting(replace(spec, args=exec_args) if exec_args else spec, functions)]
    if functions.arguments or functions.fn_config:
        raise InputError("key=value arguments and --fn-config go with --image or --exec")
    if functions.match or functions.exclude:
        raise InputError("--match-* and --exclude-* choose what the function given with --image or --exec sees; give one")
    return None


def _governing_lock(images: Images, root: Path | None):
    """The fnrun.lock the run obeys (orchestrator.lock.pinning), unless --no-lock. Its checks
    (image digests, the builtins' code) are loaded only when a lock is there: most runs have none."""
    if not images.lock:
        return None
    from ..lock.lockfile import find

    if find(root if root is not None else Path.cwd()) is None:
        return None
    from ..lock.pinning import governing

    return governing(root)


def _file_names(output: Output, default: str) -> str:
    """The command's default (kpt's `kind_name.yaml` for render, as kpt fn render names new
    files; fnrun's `name_kind.yaml` for run, docs/reference/annotations.md) unless --file-names says."""
    from ..annotations import FILE_NAMES

    chosen = output.file_names or default
    if chosen not in FILE_NAMES:
        raise InputError(f"--file-names {chosen!r}: use {' or '.join(FILE_NAMES)}")
    return chosen


def full_image(image: str | None, prefix: str | None) -> str | None:
    """kpt's short names on the command line too: `-i set-labels:v0.2` is the catalog's image (or
    --image-prefix's, which KPT_IMAGE_PREFIX gives when not passed), as `kpt fn eval` and render's Kptfile steps read it."""
    if image is None or "/" in image:
        return image
    from ..render.images import image_prefix

    return image_prefix(prefix) + image


def tagged_image(functions: Functions, images: Images, speed: Speed) -> str | None:
    """The --image to run: short names expanded, and --tag applied as a Kptfile step's `tag:` is
    (a literal tag replaces the image's own; a semver constraint picks the best local tag)."""
    image = full_image(functions.image, images.prefix)
    if image is None:
        return image
    from ..render.reference import check_reference

    check_reference(image, "--image")
    if functions.tag is None:
        return image
    from ..render.images import resolve

    return resolve(image, functions.tag, "", f"--tag {functions.tag}", speed.builtin_catalog)


def split_exec(command: str | None) -> tuple[str | None, tuple[str, ...]]:
    """`--exec "./fn arg1 arg2"` as kpt reads it: a command line, split as a shell would (quotes
    keep spaces); a path that exists as given is taken whole. A bare command name (`sed`, `node`,
    `python3`) is looked up on PATH, as kpt does; anything with a `/` is a path from here."""
    import shlex

    if command is None or Path(command).exists():
        return command, ()
    try:
        words = shlex.split(command)
    except ValueError as err:
        raise InputError(f"--exec {command!r}: {err}") from None
    if not words:
        raise InputError("--exec needs a command")
    return _on_path(words[0]), tuple(words[1:])


def _on_path(command: str) -> str:
    """A bare command name as the shell finds it; the path kept as written (a virtualenv's
    `bin/python` is a symlink whose target would not see the virtualenv's packages)."""
    import shutil

    if "/" in command:
        return command
    found = shutil.which(command)
    if found is None:
        raise InputError(f"--exec {command}: no such command on PATH")
    return found


def _selecting(spec: FunctionSpec, functions: Functions) -> FunctionSpec:
    """The ad-hoc function with the match/exclude flags as its selectors."""
    from ..select.selectors import Selector

    selectors, exclude = selections(functions)
    if not (selectors or exclude):
        return spec
    return replace(
        spec,
        selectors=tuple(Selector.from_dict(s, "--match-* flags") for s in selectors),
        exclude=tuple(Selector.from_dict(s, "--exclude-* flags") for s in exclude),
    )


def check_mode(mode: str) -> str:
    """--mounts: how /local and mounts reach a function (orchestrator.runtimes.container.remote)."""
    from ..runtimes.container.remote import MOUNT_MODES

    if mode not in MOUNT_MODES:
        raise InputError(f"--mounts {mode!r}: use one of {', '.join(MOUNT_MODES)}")
    return mode


def _memory(text: str) -> int:
    from ..sizes import parse_memory

    try:
        return parse_memory(text)
    except ValueError:
        raise InputError(f"--memory {text!r}: use a size such as 512m or 1g") from None
