"""A run as the CLI asks for it: the request (every flag as a plain value), the combinations
refused before anything runs, and what the pipeline takes from it (RunOptions, the function given
on the command line with its --match/--exclude selectors)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:
    from .select.functions import FunctionSpec
    from .run.pipeline import RunOptions


@dataclass(frozen=True)
class RunRequest:
    """Everything `fnrun run` can be asked, as plain values (what the CLI's flags become)."""

    directory: str
    image: str | None = None
    tag: str | None = None  # --tag: the --image's tag, or a semver constraint resolved against local tags (kpt fn eval --tag)
    exec_path: str | None = None
    fn_config: Path | None = None
    arguments: tuple[str, ...] = ()
    enable_exec: bool = False
    global_scope: bool = False
    network: bool = False
    as_current_user: bool = False
    mounts: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    image_pull_policy: str = "ifNotPresent"
    timeout: float = 300.0
    max_output: str = "256M"  # stdout cap per function (k/M/G suffixes)
    cache: bool = True  # the result cache (also off with FNRUN_CACHE=0)
    builtin: bool = True  # fnrun's catalog images in-process where equal (--no-builtin, FNRUN_BUILTIN=0)
    builtin_catalog: bool = False  # kpt's catalog images by fnrun's code (--builtin-catalog, FNRUN_BUILTIN_CATALOG=1)
    warm: bool = True  # one warm container per image called more than once (--no-warm, FNRUN_WARM=0)
    jobs: int | None = None  # --jobs: containers started ahead, independent work at once; None: FNRUN_JOBS or min(4, CPUs)
    shard: str | None = None  # "I/N": this CI job's share of the independent packages (select.shard)
    memory: str = "512m"
    pids_limit: int = 256
    cpus: float = 1.0
    tmpfs_size: str = "64m"
    read_only_root: bool = True
    drop_capabilities: bool = True
    oci_runtime: str | None = None  # --runtime / FNRUN_RUNTIME
    mount_mode: str = "auto"  # --mounts / FNRUN_MOUNTS: bind | upload | auto (upload for a remote engine)
    results_dir: Path | None = None
    to_stdout: bool = False  # -o stdout | unwrap (and -): the rendered package on stdout
    unwrap: bool = False  # -o unwrap: the resources as a plain YAML stream on stdout
    output_dir: Path | None = None  # -o DIR: write the rendered package there, the source untouched
    image_prefix: str | None = None  # --image-prefix for short image names (else $KPT_IMAGE_PREFIX, kpt's catalog)
    exclude_local_config: bool = False  # Kptfiles and local-config resources left out of stdout
    quiet: bool = False
    verbose: bool = False
    check: bool = False  # render in memory, print the diff, fail (exit 3) when anything would change
    rerun: str | None = None  # the command line that writes what --check finds (the user's, without --check)
    diff: bool = False  # print the diff of what is written
    results_format: str | None = None  # text | json | yaml: the run's results as one document on stdout
    origin_annotations: bool = False
    transformer_annotations: bool = False
    save: bool = False  # record the --image function in the package's Kptfile pipeline (kpt fn eval --save)
    function_type: str = "mutator"  # which list --save adds to: mutator | validator
    match: tuple[tuple[str, str], ...] = ()  # --match-* flags as (selector field, value): the function sees only resources matching all
    exclude: tuple[tuple[str, str], ...] = ()  # --exclude-* flags: resources matching all of them are not sent
    lock: bool = True  # obey the fnrun.lock governing the package, if there is one (--no-lock: do not)
    file_names: str | None = None  # --file-names kind_name | name_kind; None: render names as kpt, run as fnrun
    fn_config_as_item: bool = False  # --fn-config-as-item: the --fn-config file, inside the package, is an item too (kpt fn eval)


@dataclass(frozen=True)
class RenderRequest(RunRequest):
    """`fnrun render`: the package's Kptfile pipelines instead of annotation-declared functions.
    `enable_exec`/`network` are what render's --allow-exec/--allow-network set."""

    record_status: bool = True  # status.conditions/renderStatus in the root Kptfile (in place only)
    strict_results: bool = False  # --strict-results: an error result fails a step that exits 0 (kpt records it and goes on)


def selections(request: RunRequest) -> tuple[list[dict], list[dict]]:
    """The match and exclude flags as Kptfile selector lists (empty, or one selector each)."""
    from .select.flags import selector_dict

    selector, exclude = selector_dict(request.match, "match"), selector_dict(request.exclude, "exclude")
    return ([selector] if selector else []), ([exclude] if exclude else [])


def shard_of(request: RunRequest) -> tuple[int, int] | None:
    from .select.shard import parse

    return parse(request.shard) if request.shard else None


def validate(request: RunRequest) -> None:
    """Combinations that cannot work are refused before anything runs (exit 2)."""
    from .report.formats import FORMATS

    stdin = request.directory == "-"
    shows_diff = request.check or request.diff
    if request.exclude_local_config and not (stdin or request.to_stdout):
        raise InputError("--exclude-local-config goes with -o stdout or -o unwrap (or a package on stdin): files always keep local-config resources")
    if request.output_dir is not None and stdin:
        raise InputError("-o DIR writes a package read from a directory; with a package on stdin, use fnrun sink DIR")
    if request.save and (request.output_dir is not None or request.to_stdout):
        raise InputError("--save edits the package's Kptfile; it does not go with -o")
    if request.quiet and request.verbose:
        raise InputError("--quiet and --verbose contradict each other; choose one")
    if request.results_format is not None and request.results_format not in FORMATS:
        raise InputError(f"--results-format must be one of {', '.join(FORMATS)}, not {request.results_format!r}")
    if request.shard and stdin:
        raise InputError("--shard shares out the packages of a directory; it does not go with a package on stdin")
    if shows_diff and (stdin or request.to_stdout or request.output_dir is not None):
        raise InputError("--check and --diff compare the package's files; they do not go with -o or a package on stdin")
    if request.results_format is not None and (stdin or request.to_stdout):
        raise InputError("--results-format and the rendered package both want stdout; use --results-dir for the results")
    if request.results_format == "text" and shows_diff:
        raise InputError("--results-format text and the diff of --check/--diff would share stdout; use json or yaml (they carry the diff) or --results-dir")
    if (request.origin_annotations or request.transformer_annotations) and not (stdin or request.to_stdout):
        raise InputError("--origin-annotations and --transformer-annotations go with --output - (or `fnrun explain`); fnrun does not write them into your files")


def pipeline_inputs(request: RunRequest, root: Path | None) -> tuple["RunOptions", "list[FunctionSpec] | None"]:
    """RunOptions from the request, and the function given on the command line, if any."""
    from .select.functions import adhoc, parse_mount_flag
    from .run.pipeline import RunOptions
    from .runtimes import Sandbox
    from .runtimes.protocol import PULL_POLICIES
    from .runtimes.host.builtin import enabled_by_environment as builtin_by_environment
    from .runtimes.host import kpt_catalog
    from .runtimes.cache import enabled_by_environment
    from .runtimes.container import warm
    from .sizes import parse_size
    from .run.units import default_jobs, parse_jobs

    try:
        max_output = parse_size(request.max_output)
    except ValueError:
        raise InputError(f"--max-output {request.max_output!r}: use a size such as 256M, 1G or 512k") from None
    pull_policy = {p.lower(): p for p in PULL_POLICIES}.get(request.image_pull_policy.lower())  # kpt writes Always, IfNotPresent
    if pull_policy is None:
        raise InputError(f"--image-pull-policy {request.image_pull_policy!r}: use one of {', '.join(PULL_POLICIES)}")

    options = RunOptions(
        sandbox=Sandbox(
            network=request.network,
            as_current_user=request.as_current_user,
            read_only_root=request.read_only_root,
            tmpfs_size=request.tmpfs_size,
            memory=_memory(request.memory),
            pids_limit=request.pids_limit,
            cpus=request.cpus,
            timeout=request.timeout,
            drop_capabilities=request.drop_capabilities,
            image_pull_policy=pull_policy,
            max_output=max_output,
            oci_runtime=request.oci_runtime or None,
            mount_mode=check_mode(request.mount_mode),
        ),
        enable_exec=request.enable_exec,
        global_scope=request.global_scope,
        env=request.env,
        mounts=tuple(parse_mount_flag(m) for m in request.mounts),
        results_dir=request.results_dir,
        cache=request.cache and enabled_by_environment(),
        builtin=request.builtin and builtin_by_environment(),
        builtin_catalog=request.builtin_catalog or kpt_catalog.enabled_by_environment(),
        jobs=default_jobs() if request.jobs is None else parse_jobs(request.jobs),
        warm=request.warm and warm.enabled_by_environment(),
        lock=_governing_lock(request, root),
        file_names=_file_names(request),
        package_paths=isinstance(request, RenderRequest),
        error_results_fail=not isinstance(request, RenderRequest) or request.strict_results,
        handover=not (request.directory == "-" or request.to_stdout),
    )
    if request.tag is not None and not request.image:
        raise InputError("--tag goes with --image")
    if request.image or request.exec_path:
        exec_path, exec_args = split_exec(request.exec_path)
        spec = adhoc(root, tagged_image(request), exec_path, request.fn_config, request.arguments, request.fn_config_as_item)
        return options, [_selecting(replace(spec, args=exec_args) if exec_args else spec, request)]
    if request.arguments or request.fn_config:
        raise InputError("key=value arguments and --fn-config go with --image or --exec")
    if request.match or request.exclude:
        raise InputError("--match-* and --exclude-* choose what the function given with --image or --exec sees; give one")
    return options, None


def _governing_lock(request: RunRequest, root: Path | None):
    """The fnrun.lock the run obeys (orchestrator.lock.pinning), unless --no-lock."""
    if not request.lock:
        return None
    from .lock.pinning import governing

    return governing(root)


def _file_names(request: RunRequest) -> str:
    """kpt's `kind_name.yaml` for render (kpt fn render names new files so), fnrun's
    `name_kind.yaml` for run (docs/reference/annotations.md), unless --file-names says otherwise."""
    from .annotations import FILE_NAMES

    chosen = request.file_names or ("kind_name" if isinstance(request, RenderRequest) else "name_kind")
    if chosen not in FILE_NAMES:
        raise InputError(f"--file-names {chosen!r}: use {' or '.join(FILE_NAMES)}")
    return chosen


def full_image(image: str | None, prefix: str | None) -> str | None:
    """kpt's short names on the command line too: `-i set-labels:v0.2` is the catalog's image (or
    --image-prefix's, $KPT_IMAGE_PREFIX's), as `kpt fn eval` and render's Kptfile steps read it."""
    if image is None or "/" in image:
        return image
    from .render.images import image_prefix

    return image_prefix(prefix) + image


def tagged_image(request: RunRequest) -> str | None:
    """The --image to run: short names expanded, and --tag applied as a Kptfile step's `tag:` is
    (a literal tag replaces the image's own; a semver constraint picks the best local tag)."""
    image = full_image(request.image, request.image_prefix)
    if image is None or request.tag is None:
        return image
    from .render.images import resolve

    return resolve(image, request.tag, "", f"--tag {request.tag}", request.builtin_catalog)


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


def _selecting(spec: "FunctionSpec", request: RunRequest) -> "FunctionSpec":
    """The ad-hoc function with the match/exclude flags as its selectors."""
    from dataclasses import replace

    from .select.selectors import Selector

    selectors, exclude = selections(request)
    if not (selectors or exclude):
        return spec
    return replace(
        spec,
        selectors=tuple(Selector.from_dict(s, "--match-* flags") for s in selectors),
        exclude=tuple(Selector.from_dict(s, "--exclude-* flags") for s in exclude),
    )


def check_mode(mode: str) -> str:
    """--mounts: how /local and mounts reach a function (orchestrator.runtimes.container.remote)."""
    from .runtimes.container.remote import MOUNT_MODES

    if mode not in MOUNT_MODES:
        raise InputError(f"--mounts {mode!r}: use one of {', '.join(MOUNT_MODES)}")
    return mode


def _memory(text: str) -> int:
    from .sizes import parse_memory

    try:
        return parse_memory(text)
    except ValueError:
        raise InputError(f"--memory {text!r}: use a size such as 512m or 1g") from None
