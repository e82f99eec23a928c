"""The options `run` and `render` share: declared once, so both commands spell, default and
explain them alike (kpt's spellings too, where they do not clash with fnrun's; the spellings are
orchestrator.option_schema's, which the launcher reads too), grouped under the same help panels,
and turned into the request's typed groups in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..option_schema import spellings
from ..requests import groups

FUNCTIONS, SELECTION, OUTPUT, CI, SANDBOX, ENGINE = "Functions", "Selection", "Output", "CI", "Sandbox", "Engine and speed"

AllowExec = Annotated[bool, typer.Option(*spellings("allow_exec"), help="Allow exec functions (they run unsandboxed, on this machine).", rich_help_panel=SANDBOX)]
Network = Annotated[bool, typer.Option(*spellings("network"), help="Give the network to functions that declare `network: true` (render: to every function).", rich_help_panel=SANDBOX)]
ImagePrefix = Annotated[str | None, typer.Option(*spellings("image_prefix"), metavar="PREFIX", help="Registry for short image names (default $KPT_IMAGE_PREFIX, else kpt's catalog).", rich_help_panel=FUNCTIONS)]
AsCurrentUser = Annotated[bool, typer.Option(*spellings("as_current_user"), help="Run containers as your uid/gid, not nobody (65534).", rich_help_panel=SANDBOX)]
Env = Annotated[list[str] | None, typer.Option(*spellings("env"), metavar="KEY[=VALUE]", help="KEY=VALUE, or KEY to pass yours; repeatable.", rich_help_panel=SANDBOX)]
PullPolicy = Annotated[str, typer.Option(*spellings("image_pull_policy"), help="always | ifNotPresent (default) | never.", show_default=False, rich_help_panel=ENGINE)]
Timeout = Annotated[float, typer.Option(*spellings("timeout"), help="Seconds before a function is killed (300).", show_default=False, rich_help_panel=SANDBOX)]
NoCache = Annotated[bool, typer.Option(*spellings("no_cache"), help="Run functions even when a result is cached (FNRUN_CACHE=0).", rich_help_panel=ENGINE)]
NoBuiltin = Annotated[bool, typer.Option(*spellings("no_builtin"), help="Always start fnrun's catalog images as containers (FNRUN_BUILTIN=0).", rich_help_panel=ENGINE)]
NoWarm = Annotated[bool, typer.Option(*spellings("no_warm"), help="Start a container per call even for an image called more than once (FNRUN_WARM=0).", rich_help_panel=ENGINE)]
Server = Annotated[str | None, typer.Option(*spellings("server"), envvar="FNRUN_SERVER", metavar="ADDR", help="Container calls go to fnrun serve (FNRUN_SERVER).", show_default=False, show_envvar=False, rich_help_panel=ENGINE)]
BuiltinCatalog = Annotated[bool, typer.Option(*spellings("builtin_catalog"), help="Run kpt's catalog functions in-process (FNRUN_BUILTIN_CATALOG=1).", rich_help_panel=ENGINE)]
MaxOutput = Annotated[str, typer.Option(*spellings("max_output"), help="Most a function may print before it is killed (256M).", show_default=False, rich_help_panel=SANDBOX)]
Memory = Annotated[str, typer.Option(*spellings("memory"), help="Memory limit per container (512m).", show_default=False, rich_help_panel=SANDBOX)]
PidsLimit = Annotated[int, typer.Option(*spellings("pids_limit"), help="Process limit per container (256).", show_default=False, rich_help_panel=SANDBOX)]
Cpus = Annotated[float, typer.Option(*spellings("cpus"), help="CPU limit per container (1.0).", show_default=False, rich_help_panel=SANDBOX)]
TmpfsSize = Annotated[str, typer.Option(*spellings("tmpfs_size"), help="Size of the writable /tmp (64m).", show_default=False, rich_help_panel=SANDBOX)]
WritableRoot = Annotated[bool, typer.Option(*spellings("writable_root"), help="Do not make the root filesystem read-only.", rich_help_panel=SANDBOX)]
KeepCapabilities = Annotated[bool, typer.Option(*spellings("keep_capabilities"), help="Do not drop all Linux capabilities.", rich_help_panel=SANDBOX)]
OciRuntime = Annotated[str | None, typer.Option(*spellings("oci_runtime"), envvar="FNRUN_RUNTIME", help="OCI runtime for function containers (runsc, crun).", rich_help_panel=ENGINE)]
MountMode = Annotated[str, typer.Option(*spellings("mount_mode"), envvar="FNRUN_MOUNTS", help="bind | upload | auto (default): how /local and --mount reach the engine.", show_default=False, rich_help_panel=ENGINE)]
Check = Annotated[bool, typer.Option(*spellings("check"), help="Write nothing; print the diff; exit 3 if anything would change.", rich_help_panel=CI)]
Diff = Annotated[bool, typer.Option(*spellings("diff"), help="Write, then print what changed as a diff.", rich_help_panel=OUTPUT)]
ResultsFormat = Annotated[str | None, typer.Option(*spellings("results_format"), metavar="FORMAT", help="text | json | yaml: all results as one document on stdout.", rich_help_panel=CI)]
ResultsDir = Annotated[Path | None, typer.Option(*spellings("results_dir"), metavar="DIR", help="Write all results to DIR/results.yaml.", rich_help_panel=OUTPUT)]
Jobs = Annotated[int | None, typer.Option(*spellings("jobs"), help="Work at once (default min(4, CPUs); FNRUN_JOBS).", rich_help_panel=ENGINE)]
Quiet = Annotated[bool, typer.Option(*spellings("quiet"), help="Only print failures.", rich_help_panel=OUTPUT)]
Verbose = Annotated[bool, typer.Option(*spellings("verbose"), help="Also print each function's stderr and every file written.", rich_help_panel=OUTPUT)]
Output = Annotated[str | None, typer.Option(*spellings("output"), metavar="stdout|unwrap|DIR", help="stdout (a ResourceList; also -), unwrap (plain YAML) or a new DIR; the package is left alone.", rich_help_panel=OUTPUT)]
ExcludeLocalConfig = Annotated[bool, typer.Option(*spellings("exclude_local_config"), help="With -o stdout/unwrap: leave out Kptfiles and local-config resources (for a cluster).", rich_help_panel=OUTPUT)]
Shard = Annotated[str | None, typer.Option(*spellings("shard"), metavar="I/N", help="I/N: only CI job I's share of the packages in DIR.", rich_help_panel=CI)]
NoLock = Annotated[bool, typer.Option(*spellings("no_lock"), help="Run images by their tags even where a fnrun.lock pins them.", rich_help_panel=ENGINE)]
FileNames = Annotated[str | None, typer.Option(*spellings("file_names"), metavar="kind_name|name_kind", help="How a new resource without a path is named: kpt's deployment_web.yaml (render's default) or fnrun's web_deployment.yaml (run's).", rich_help_panel=OUTPUT)]

def images(*, image_prefix: str | None, no_lock: bool) -> groups.Images:
    return groups.Images(prefix=image_prefix, lock=not no_lock)


def sandbox(
    *, allow_exec: bool, network: bool, as_current_user: bool, env: list[str] | None, timeout: float, max_output: str, memory: str,
    pids_limit: int, cpus: float, tmpfs_size: str, writable_root: bool, keep_capabilities: bool, image_pull_policy: str,
    oci_runtime: str | None, mount_mode: str, mount: list[str] | None = None,
) -> groups.SandboxSettings:
    return groups.SandboxSettings(
        enable_exec=allow_exec, network=network, as_current_user=as_current_user, mounts=tuple(mount or ()), env=tuple(env or ()),
        timeout=timeout, max_output=max_output, memory=memory, pids_limit=pids_limit, cpus=cpus, tmpfs_size=tmpfs_size,
        read_only_root=not writable_root, drop_capabilities=not keep_capabilities, image_pull_policy=image_pull_policy,
        oci_runtime=oci_runtime, mount_mode=mount_mode,
    )


def output_group(
    output: str | None, *, exclude_local_config: bool, file_names: str | None, diff: bool, results_dir: Path | None, quiet: bool,
    verbose: bool, origin_annotations: bool = False, transformer_annotations: bool = False,
) -> groups.Output:
    """`-o` as kpt spells it, for run and render alike: stdout (or -), unwrap, or a directory."""
    to_stdout = output in ("stdout", "-", "unwrap")
    return groups.Output(
        to_stdout=to_stdout, unwrap=output == "unwrap", output_dir=Path(output) if output is not None and not to_stdout else None,
        exclude_local_config=exclude_local_config, origin_annotations=origin_annotations, transformer_annotations=transformer_annotations,
        file_names=file_names, diff=diff, results_dir=results_dir, quiet=quiet, verbose=verbose,
    )


def speed(*, jobs: int | None, no_cache: bool, no_builtin: bool, no_warm: bool, builtin_catalog: bool, server: str | None) -> groups.Speed:
    return groups.Speed(cache=not no_cache, builtin=not no_builtin, builtin_catalog=builtin_catalog, warm=not no_warm, jobs=jobs,
                        server=server or None)
