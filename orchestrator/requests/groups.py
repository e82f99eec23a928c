"""A request as a few typed groups, each one idea of the command line: what runs, the sandbox,
output and display, CI behaviour, speed. `fnrun run` and `fnrun render` share the groups and
differ in data: run names its functions (`Functions`), render keeps a Kptfile's status and may
fail on error results; `Command` is what the shared path reads of that difference."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..option_schema import default

Selection = tuple[tuple[str, str], ...]  # (selector field, value): apiVersion, kind, name, namespace, labels, annotations


@dataclass(frozen=True)
class Functions:
    """`fnrun run`'s choice of what runs: one function given here (an image or an executable),
    else the functions the package declares; and what they see of the package."""

    image: str | None = None
    tag: str | None = None  # the image's tag, or a semver constraint met by the best local tag (kpt fn eval --tag)
    exec_path: str | None = None
    fn_config: Path | None = None
    arguments: tuple[str, ...] = ()  # key=value: the functionConfig's data
    fn_config_as_item: bool = True  # the fn-config file, inside the package, is an item too, as kpt fn eval hands it
    global_scope: bool = False  # declared functions see the whole package, not only their directory
    match: Selection = ()  # the function sees only resources matching all of these
    exclude: Selection = ()  # resources matching all of these are not sent
    save: bool = False  # record the function in the package's Kptfile pipeline (kpt fn eval --save)
    function_type: str = default("function_type")  # which list `save` adds to: mutator | validator


@dataclass(frozen=True)
class Images:
    """How an image name becomes what runs, for run's image and render's Kptfile steps alike."""

    prefix: str | None = None  # registry for short names (else $KPT_IMAGE_PREFIX, kpt's catalog)
    lock: bool = True  # obey the fnrun.lock governing the package, if there is one


@dataclass(frozen=True)
class SandboxSettings:
    """The sandbox as the user spells it (sizes as text; defaults: orchestrator.option_schema);
    orchestrator.requests.parse turns it into the runtimes' `Sandbox`."""

    enable_exec: bool = False  # exec functions run unsandboxed, on this machine
    network: bool = False
    as_current_user: bool = False
    mounts: tuple[str, ...] = ()  # type=bind,src=DIR,dst=/PATH[,rw=true]
    env: tuple[str, ...] = ()  # KEY=VALUE, or KEY to pass the caller's
    timeout: float = default("timeout")
    max_output: str = default("max_output")  # stdout cap per function (k/M/G suffixes)
    memory: str = default("memory")
    pids_limit: int = default("pids_limit")
    cpus: float = default("cpus")
    tmpfs_size: str = default("tmpfs_size")
    read_only_root: bool = True
    drop_capabilities: bool = True
    image_pull_policy: str = default("image_pull_policy")
    oci_runtime: str | None = None  # runsc, crun (FNRUN_RUNTIME)
    mount_mode: str = default("mount_mode")  # bind | upload | auto (upload for a remote engine; FNRUN_MOUNTS)


@dataclass(frozen=True)
class Output:
    """Where the result goes and what the run shows while it works."""

    to_stdout: bool = False  # -o stdout | unwrap (and -): the rendered package on stdout
    unwrap: bool = False  # -o unwrap: the resources as a plain YAML stream
    output_dir: Path | None = None  # -o DIR: the rendered package there, the source untouched
    exclude_local_config: bool = False  # Kptfiles and local-config resources left out of stdout
    origin_annotations: bool = False
    transformer_annotations: bool = False
    file_names: str | None = None  # kind_name | name_kind; None: render names as kpt, run as fnrun
    diff: bool = False  # print the diff of what is written
    results_dir: Path | None = None
    quiet: bool = False
    verbose: bool = False


@dataclass(frozen=True)
class CI:
    """What a CI job asks: a check that writes nothing, a results document, its share of the work."""

    check: bool = False  # render in memory, print the diff, fail (exit 3) when anything would change
    rerun: str | None = None  # the command line that writes what the check finds (the user's, without --check)
    results_format: str | None = None  # text | json | yaml: the run's results as one document on stdout
    shard: str | None = None  # "I/N": this job's share of the independent packages (select.shard)


@dataclass(frozen=True)
class Speed:
    """Ways to the same result in less time; each also has an environment switch."""

    cache: bool = True  # the result cache (FNRUN_CACHE=0 turns it off too)
    builtin: bool = True  # fnrun's catalog images in-process where equal (FNRUN_BUILTIN=0)
    builtin_catalog: bool = False  # kpt's catalog images by fnrun's code (FNRUN_BUILTIN_CATALOG=1)
    warm: bool = True  # one warm container per image called more than once (FNRUN_WARM=0)
    jobs: int | None = None  # work at once; None: FNRUN_JOBS or min(4, CPUs)
    server: str | None = None  # container functions evaluated by `fnrun serve` there (FNRUN_SERVER)


@dataclass(frozen=True)
class Command:
    """What the shared path of run and render reads of the command it serves."""

    name: str  # run | render: what the summary and the drift message say
    file_names: str  # how a new resource without a path is named unless --file-names says
    package_paths: bool  # a step sees paths relative to its own package (render, as kpt)
    error_results_fail: bool  # an error result fails a function that exits 0
    global_scope: bool = False  # declared functions see the whole package


@dataclass(frozen=True)
class RunRequest:
    """`fnrun run`: the functions a package declares, or the one `functions` names."""

    directory: str = "."  # or - for a ResourceList on stdin
    functions: Functions = Functions()
    images: Images = Images()
    sandbox: SandboxSettings = SandboxSettings()
    output: Output = Output()
    ci: CI = CI()
    speed: Speed = Speed()

    @property
    def command(self) -> Command:
        return Command("run", "name_kind", package_paths=False, error_results_fail=True, global_scope=self.functions.global_scope)


@dataclass(frozen=True)
class RenderRequest:
    """`fnrun render`: a kpt package's Kptfile pipelines, subpackages first."""

    directory: str = "."
    images: Images = Images()
    sandbox: SandboxSettings = SandboxSettings()
    output: Output = Output()
    ci: CI = CI()
    speed: Speed = Speed()
    record_status: bool = True  # status.conditions/renderStatus in the root Kptfile (in place only)
    strict_results: bool = False  # an error result fails a step that exits 0 (kpt records it and goes on)

    @property
    def command(self) -> Command:
        return Command("render", "kind_name", package_paths=True, error_results_fail=self.strict_results)


Request = RunRequest | RenderRequest
