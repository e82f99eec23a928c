"""The options `run` and `render` share: declared once, so both commands spell, default and
explain them alike (kpt's spellings too, where they do not clash with fnrun's), grouped under the
same help panels, and turned into request fields in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

FUNCTIONS, SELECTION, OUTPUT, CI, SANDBOX, ENGINE = "Functions", "Selection", "Output", "CI", "Sandbox", "Engine and speed"

AllowExec = Annotated[bool, typer.Option("--allow-exec", "--enable-exec", help="Allow exec functions (they run unsandboxed, on this machine).", rich_help_panel=SANDBOX)]
Network = Annotated[bool, typer.Option("--network", "--allow-network", help="Give the network to functions that declare `network: true` (render: to every function).", rich_help_panel=SANDBOX)]
ImagePrefix = Annotated[Optional[str], typer.Option("--image-prefix", metavar="PREFIX", help="Registry for short image names (default $KPT_IMAGE_PREFIX, else kpt's catalog).", rich_help_panel=FUNCTIONS)]
AsCurrentUser = Annotated[bool, typer.Option("--as-current-user", help="Run containers as your uid/gid, not nobody (65534).", rich_help_panel=SANDBOX)]
Env = Annotated[Optional[list[str]], typer.Option("--env", "-e", metavar="KEY[=VALUE]", help="KEY=VALUE, or KEY to pass yours; repeatable.", rich_help_panel=SANDBOX)]
PullPolicy = Annotated[str, typer.Option("--image-pull-policy", help="always | ifNotPresent (default) | never.", show_default=False, rich_help_panel=ENGINE)]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds before a function is killed (300).", show_default=False, rich_help_panel=SANDBOX)]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Run functions even when a result is cached (FNRUN_CACHE=0).", rich_help_panel=ENGINE)]
NoBuiltin = Annotated[bool, typer.Option("--no-builtin", help="Always start fnrun's catalog images as containers (FNRUN_BUILTIN=0).", rich_help_panel=ENGINE)]
NoWarm = Annotated[bool, typer.Option("--no-warm", help="Start a container per call even for an image called more than once (FNRUN_WARM=0).", rich_help_panel=ENGINE)]
BuiltinCatalog = Annotated[bool, typer.Option("--builtin-catalog", help="Run kpt's catalog functions in-process (FNRUN_BUILTIN_CATALOG=1).", rich_help_panel=ENGINE)]
MaxOutput = Annotated[str, typer.Option("--max-output", help="Most a function may print before it is killed (256M).", show_default=False, rich_help_panel=SANDBOX)]
Memory = Annotated[str, typer.Option("--memory", help="Memory limit per container (512m).", show_default=False, rich_help_panel=SANDBOX)]
PidsLimit = Annotated[int, typer.Option("--pids-limit", help="Process limit per container (256).", show_default=False, rich_help_panel=SANDBOX)]
Cpus = Annotated[float, typer.Option("--cpus", help="CPU limit per container (1.0).", show_default=False, rich_help_panel=SANDBOX)]
TmpfsSize = Annotated[str, typer.Option("--tmpfs-size", help="Size of the writable /tmp (64m).", show_default=False, rich_help_panel=SANDBOX)]
WritableRoot = Annotated[bool, typer.Option("--writable-root", help="Do not make the root filesystem read-only.", rich_help_panel=SANDBOX)]
KeepCapabilities = Annotated[bool, typer.Option("--keep-capabilities", help="Do not drop all Linux capabilities.", rich_help_panel=SANDBOX)]
OciRuntime = Annotated[Optional[str], typer.Option("--runtime", envvar="FNRUN_RUNTIME", help="OCI runtime for function containers (runsc, crun).", rich_help_panel=ENGINE)]
MountMode = Annotated[str, typer.Option("--mounts", envvar="FNRUN_MOUNTS", help="bind | upload | auto (default): how /local and --mount reach the engine.", show_default=False, rich_help_panel=ENGINE)]
Check = Annotated[bool, typer.Option("--check", help="Write nothing; print the diff; exit 3 if anything would change.", rich_help_panel=CI)]
Diff = Annotated[bool, typer.Option("--diff", help="Write, and print the diff of what was written.", rich_help_panel=OUTPUT)]
ResultsFormat = Annotated[Optional[str], typer.Option("--results-format", metavar="FORMAT", help="text | json | yaml: all results as one document on stdout.", rich_help_panel=CI)]
ResultsDir = Annotated[Optional[Path], typer.Option("--results-dir", metavar="DIR", help="Write all results to DIR/results.yaml.", rich_help_panel=OUTPUT)]
Jobs = Annotated[Optional[int], typer.Option("--jobs", "-j", help="Work at once (default min(4, CPUs); FNRUN_JOBS).", rich_help_panel=ENGINE)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Only print failures.", rich_help_panel=OUTPUT)]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Also print each function's stderr and every file written.", rich_help_panel=OUTPUT)]
Output = Annotated[Optional[str], typer.Option("--output", "-o", metavar="stdout|unwrap|DIR", help="stdout (a ResourceList; also -), unwrap (plain YAML) or a new DIR; the package is left alone.", rich_help_panel=OUTPUT)]
ExcludeLocalConfig = Annotated[bool, typer.Option("--exclude-local-config", help="With -o stdout/unwrap: leave out Kptfiles and local-config resources (for a cluster).", rich_help_panel=OUTPUT)]
Shard = Annotated[Optional[str], typer.Option("--shard", metavar="I/N", help="I/N: only CI job I's share of the packages in DIR.", rich_help_panel=CI)]
NoLock = Annotated[bool, typer.Option("--no-lock", help="Run images by their tags even where a fnrun.lock pins them.", rich_help_panel=ENGINE)]
FileNames = Annotated[Optional[str], typer.Option("--file-names", metavar="kind_name|name_kind", help="How a new resource without a path is named: kpt's deployment_web.yaml (render's default) or fnrun's web_deployment.yaml (run's).", rich_help_panel=OUTPUT)]

SHARED = (
    "as_current_user", "env", "image_pull_policy", "timeout", "no_cache", "no_builtin", "no_warm", "builtin_catalog",
    "max_output", "memory", "pids_limit", "cpus", "tmpfs_size", "writable_root", "keep_capabilities",
    "oci_runtime", "mount_mode", "jobs", "check", "diff", "results_format", "results_dir", "quiet", "verbose",
    "image_prefix", "exclude_local_config", "shard", "no_lock",
)


def shared_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The request fields of the shared options, from a command's arguments (its `locals()`)."""
    given = {name: options[name] for name in SHARED}
    fields = dict(given)
    fields["env"] = tuple(given["env"] or ())
    fields["cache"] = not fields.pop("no_cache")
    fields["builtin"] = not fields.pop("no_builtin")
    fields["warm"] = not fields.pop("no_warm")
    fields["read_only_root"] = not fields.pop("writable_root")
    fields["drop_capabilities"] = not fields.pop("keep_capabilities")
    fields["lock"] = not fields.pop("no_lock")
    return fields


def output_fields(output: str | None) -> dict[str, Any]:
    """`-o` as kpt spells it, for run and render alike: stdout (or -), unwrap, or a directory."""
    to_stdout = output in ("stdout", "-", "unwrap")
    return {
        "to_stdout": to_stdout,
        "unwrap": output == "unwrap",
        "output_dir": Path(output) if output is not None and not to_stdout else None,
    }
