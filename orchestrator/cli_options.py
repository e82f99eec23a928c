"""The options `run` and `render` share: declared once, so both commands spell, default and
explain them alike, and turned into request fields in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

AsCurrentUser = Annotated[bool, typer.Option("--as-current-user", help="Run containers as your uid/gid instead of nobody (65534).")]
Env = Annotated[Optional[list[str]], typer.Option("--env", "-e", help="KEY=VALUE, or KEY to pass yours through; repeatable, wins over declared envs.")]
PullPolicy = Annotated[str, typer.Option("--image-pull-policy", help="always | ifNotPresent | never.")]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds before a function is killed and the command fails.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Run every container function even when an identical run's result is cached (FNRUN_CACHE=0 does the same).")]
NoBuiltin = Annotated[bool, typer.Option("--no-builtin", help="Start fnrun's catalog images as containers even where their code could run in-process (FNRUN_BUILTIN=0 does the same).")]
BuiltinCatalog = Annotated[bool, typer.Option("--builtin-catalog", help="Run kpt's set-namespace, set-labels, set-annotations, set-image, apply-setters, search-replace, apply-replacements, starlark (and its test functions no-op, drop-comments) images by fnrun's own in-process versions (FNRUN_BUILTIN_CATALOG=1 does the same).")]
MaxOutput = Annotated[str, typer.Option("--max-output", help="Most a function may write on stdout (k/M/G) before it is killed and the command fails.")]
Memory = Annotated[str, typer.Option("--memory", help="Memory limit per function container.")]
PidsLimit = Annotated[int, typer.Option("--pids-limit", help="Process limit per function container.")]
Cpus = Annotated[float, typer.Option("--cpus", help="CPU limit per function container.")]
TmpfsSize = Annotated[str, typer.Option("--tmpfs-size", help="Size of the writable tmpfs at /tmp.")]
WritableRoot = Annotated[bool, typer.Option("--writable-root", help="Do not make the container's root filesystem read-only.")]
KeepCapabilities = Annotated[bool, typer.Option("--keep-capabilities", help="Do not drop all Linux capabilities.")]
OciRuntime = Annotated[Optional[str], typer.Option("--runtime", envvar="FNRUN_RUNTIME", help="OCI runtime registered with the engine to run function containers (runsc, crun); default: the engine's.")]
MountMode = Annotated[str, typer.Option("--mounts", envvar="FNRUN_MOUNTS", help="bind | upload | auto: bind-mount /local and --mount sources, or copy them into the container (read-only; what a remote engine needs); auto uploads for tcp:// to another host and ssh://.")]
Check = Annotated[bool, typer.Option("--check", help="Write nothing; print a unified diff of every file that would change and exit 1 if any would.")]
Diff = Annotated[bool, typer.Option("--diff", help="Write, and print a unified diff of what was written.")]
ResultsFormat = Annotated[Optional[str], typer.Option("--results-format", help="text | json | yaml: every function's results as one document on stdout.")]
ResultsDir = Annotated[Optional[Path], typer.Option("--results-dir", help="Write every function's results to DIR/results.yaml.")]
Jobs = Annotated[Optional[int], typer.Option("--jobs", "-j", help="Containers started ahead and independent work (sibling packages, functions with disjoint scopes) at once (default min(4, CPUs); FNRUN_JOBS); 1 runs one at a time.")]
NoLock = Annotated[bool, typer.Option("--no-lock", help="Run images by their tags even where a fnrun.lock pins them (see `fnrun lock --help`).")]
FileNames = Annotated[Optional[str], typer.Option("--file-names", help="kind_name (kpt's deployment_web.yaml; render's default) or name_kind (fnrun's web_deployment.yaml; run's default): how a new resource without a path is named.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Only print failures and the final error.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Also print what each function ran on, its stderr in full, and every file written.")]

SHARED = (
    "as_current_user", "env", "image_pull_policy", "timeout", "no_cache", "no_builtin", "builtin_catalog",
    "max_output", "memory", "pids_limit", "cpus", "tmpfs_size", "writable_root", "keep_capabilities",
    "oci_runtime", "mount_mode", "jobs", "check", "diff", "results_format", "results_dir", "quiet", "verbose", "no_lock",
)


def shared_fields(options: dict[str, Any]) -> dict[str, Any]:
    """The request fields of the shared options, from a command's arguments (its `locals()`)."""
    given = {name: options[name] for name in SHARED}
    fields = dict(given)
    fields["env"] = tuple(given["env"] or ())
    fields["cache"] = not fields.pop("no_cache")
    fields["builtin"] = not fields.pop("no_builtin")
    fields["read_only_root"] = not fields.pop("writable_root")
    fields["drop_capabilities"] = not fields.pop("keep_capabilities")
    fields["lock"] = not fields.pop("no_lock")
    return fields
