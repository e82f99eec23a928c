"""`fnrun run` and `fnrun render`: the same options under the same names (kpt's spellings too),
grouped in help panels, with DIR defaulting to the current directory as kpt's does."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from ..option_schema import spellings
from . import options as opts
from .app import app
from .helptext import PanelCommand
from .options import CI, FUNCTIONS, OUTPUT, SANDBOX, SELECTION


class DefaultDirectoryCommand(PanelCommand):
    """kpt's `kpt fn eval -i IMAGE -- k=v` runs on the current directory: with no positional
    before `--`, what follows it is the function's arguments, not DIR."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            if not _positionals(self, ctx, args[:cut]):
                args = [*args[:cut], ".", *args[cut:]]
        return super().parse_args(ctx, args)


def _positionals(command: Any, ctx: Any, args: list[str]) -> bool:
    """Whether any of `args` (all before `--`) is a positional rather than an option or its value."""
    takes_value = set()
    for param in command.get_params(ctx):
        if param.param_type_name == "option" and not (param.is_flag or param.count):
            takes_value.update(param.opts + param.secondary_opts)
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "-" or not arg.startswith("-"):
            return True
        if "=" not in arg and arg in takes_value:
            position += 1
    return False


RUN_EXAMPLES = """Examples:
  fnrun run samples/nginx
  fnrun run samples/nginx --check             # CI gate; exit 3: the files would change
  fnrun run samples/nginx --check --results-format json > results.json   # exit 3
  fnrun run samples/nginx -o stdout --origin-annotations
  fnrun run samples/nginx -i fnrun/set-namespace:v1 -- namespace=prod
  fnrun run samples/kpt-package -i fnrun/set-labels:v1 --save -- team=web
  fnrun run samples/nginx -i fnrun/set-labels:v1 --match-kind Nginx -- team=web
  fnrun source samples/nginx | fnrun run - -i fnrun/set-labels:v1 -- team=web
  cd samples/set-labels && fnrun run -o unwrap --exclude-local-config | kubectl apply -f -"""


@app.command(cls=DefaultDirectoryCommand, epilog=RUN_EXAMPLES)
def run(
    ctx: typer.Context,
    directory: str = typer.Argument(".", metavar="[DIR]", show_default=False, help="Package directory (default: the current one), or - for a ResourceList on stdin."),
    function_args: list[str] | None = typer.Argument(None, metavar="[-- KEY=VALUE...]", help="key=value after -- : the data of --image/--exec's functionConfig."),
    image: str | None = typer.Option(None, *spellings("image"), metavar="IMAGE", help="Run this image over the whole package instead of the declared functions.", rich_help_panel=FUNCTIONS),
    tag: str | None = typer.Option(None, *spellings("tag"), metavar="TAG", help="The --image's tag, or a semver constraint (~0.4) met by the best local tag.", rich_help_panel=FUNCTIONS),
    exec_path: str | None = typer.Option(None, *spellings("exec_path"), metavar="COMMAND", help='Run this executable instead ("./fn arg1 arg2", a bare name from PATH; needs --allow-exec).', rich_help_panel=FUNCTIONS),
    fn_config: Path | None = typer.Option(None, *spellings("fn_config"), metavar="FILE", help="File holding the functionConfig for --image/--exec.", rich_help_panel=FUNCTIONS),
    image_prefix: opts.ImagePrefix = None,
    save: bool = typer.Option(False, *spellings("save"), help="Also add the --image/--exec function to the Kptfile pipeline (kpt fn eval --save).", rich_help_panel=FUNCTIONS),
    function_type: str = typer.Option("mutator", *spellings("function_type"), metavar="TYPE", show_default=False, help="With --save: mutator (default) or validator.", rich_help_panel=FUNCTIONS),
    allow_exec: opts.AllowExec = False,
    global_scope: bool = typer.Option(False, *spellings("global_scope"), help="Declared functions see the whole package, not just their directory.", rich_help_panel=SELECTION),
    match_api_version: str | None = typer.Option(None, *spellings("match_api_version"), help="Send only resources with this apiVersion.", rich_help_panel=SELECTION),
    match_kind: str | None = typer.Option(None, *spellings("match_kind"), help="Send only resources of this kind.", rich_help_panel=SELECTION),
    match_name: str | None = typer.Option(None, *spellings("match_name"), help="Send only resources with this name.", rich_help_panel=SELECTION),
    match_namespace: str | None = typer.Option(None, *spellings("match_namespace"), help="Send only resources in this namespace.", rich_help_panel=SELECTION),
    match_labels: list[str] | None = typer.Option(None, *spellings("match_labels"), help="KEY=VALUE: only resources with this label.", rich_help_panel=SELECTION),
    match_annotations: list[str] | None = typer.Option(None, *spellings("match_annotations"), help="KEY=VALUE: only resources with this annotation.", rich_help_panel=SELECTION),
    exclude_api_version: str | None = typer.Option(None, *spellings("exclude_api_version"), help="Hold back resources with this apiVersion.", rich_help_panel=SELECTION),
    exclude_kind: str | None = typer.Option(None, *spellings("exclude_kind"), help="Hold back resources of this kind.", rich_help_panel=SELECTION),
    exclude_name: str | None = typer.Option(None, *spellings("exclude_name"), help="Hold back resources with this name.", rich_help_panel=SELECTION),
    exclude_namespace: str | None = typer.Option(None, *spellings("exclude_namespace"), help="Hold back resources in this namespace.", rich_help_panel=SELECTION),
    exclude_labels: list[str] | None = typer.Option(None, *spellings("exclude_labels"), help="KEY=VALUE: hold back resources with this label.", rich_help_panel=SELECTION),
    exclude_annotations: list[str] | None = typer.Option(None, *spellings("exclude_annotations"), help="KEY=VALUE: hold back resources with this annotation.", rich_help_panel=SELECTION),
    output: opts.Output = None,
    exclude_local_config: opts.ExcludeLocalConfig = False,
    origin_annotations: bool = typer.Option(False, *spellings("origin_annotations"), help="With -o stdout: annotate where each resource came from.", rich_help_panel=OUTPUT),
    transformer_annotations: bool = typer.Option(False, *spellings("transformer_annotations"), help="With -o stdout: list the functions that changed each resource.", rich_help_panel=OUTPUT),
    file_names: opts.FileNames = None,
    fn_config_as_item: bool = typer.Option(False, *spellings("fn_config_as_item"), hidden=True, help="The default: a --fn-config file inside the package is one of the items too, as in kpt fn eval."),
    fn_config_only: bool = typer.Option(False, *spellings("fn_config_only"), help="Keep a --fn-config file inside the package out of the items.", rich_help_panel=FUNCTIONS),
    include_meta_resources: bool = typer.Option(False, *spellings("include_meta_resources"), hidden=True, help="kpt's old flag: does nothing (with a note), the Kptfile is an item already."),
    diff: opts.Diff = False,
    results_dir: opts.ResultsDir = None,
    quiet: opts.Quiet = False,
    verbose: opts.Verbose = False,
    check: opts.Check = False,
    results_format: opts.ResultsFormat = None,
    shard: opts.Shard = None,
    network: opts.Network = False,
    as_current_user: opts.AsCurrentUser = False,
    mount: list[str] | None = typer.Option(None, *spellings("mount"), metavar="SPEC", help="type=bind,src=DIR,dst=/PATH[,rw=true] (DIR inside the package); repeatable.", rich_help_panel=SANDBOX),
    env: opts.Env = None,
    timeout: opts.Timeout = 300.0,
    max_output: opts.MaxOutput = "256M",
    memory: opts.Memory = "512m",
    pids_limit: opts.PidsLimit = 256,
    cpus: opts.Cpus = 1.0,
    tmpfs_size: opts.TmpfsSize = "64m",
    writable_root: opts.WritableRoot = False,
    keep_capabilities: opts.KeepCapabilities = False,
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    oci_runtime: opts.OciRuntime = None,
    mount_mode: opts.MountMode = "auto",
    jobs: opts.Jobs = None,
    no_cache: opts.NoCache = False,
    no_builtin: opts.NoBuiltin = False,
    no_warm: opts.NoWarm = False,
    builtin_catalog: opts.BuiltinCatalog = False,
    server: opts.Server = None,
    no_lock: opts.NoLock = False,
) -> None:
    """Run functions over a package and write back only what they changed.

    Functions come from the package (`config.kubernetes.io/function` annotations, deepest
    directory first) or from --image/--exec. Nothing is written unless every function succeeds.
    stdout carries data only: a diff, the rendered package, or the results document. For a kpt
    package's Kptfile pipelines, use `fnrun render`."""
    from .. import api

    if include_meta_resources:  # kpt refuses it; the catalog's own example scripts still pass it
        print("fnrun: note: --include-meta-resources does nothing: the Kptfile and kustomization files are items already", file=sys.stderr)
    if fn_config_as_item and fn_config_only:
        from ..errors import InputError

        raise InputError("--fn-config-as-item and --fn-config-only contradict each other; choose one (--fn-config-as-item is the default)")
    request = api.RunRequest(
        directory=directory,
        functions=api.Functions(
            image=image, tag=tag, exec_path=exec_path, fn_config=fn_config, arguments=tuple(function_args or ()),
            fn_config_as_item=not fn_config_only, global_scope=global_scope,
            match=_selection(match_api_version, match_kind, match_name, match_namespace, match_labels, match_annotations),
            exclude=_selection(exclude_api_version, exclude_kind, exclude_name, exclude_namespace, exclude_labels, exclude_annotations),
            save=save, function_type=function_type,
        ),
        images=opts.images(image_prefix=image_prefix, no_lock=no_lock),
        sandbox=opts.sandbox(
            allow_exec=allow_exec, network=network, as_current_user=as_current_user, env=env, mount=mount, timeout=timeout,
            max_output=max_output, memory=memory, pids_limit=pids_limit, cpus=cpus, tmpfs_size=tmpfs_size, writable_root=writable_root,
            keep_capabilities=keep_capabilities, image_pull_policy=image_pull_policy, oci_runtime=oci_runtime, mount_mode=mount_mode,
        ),
        output=opts.output_group(
            output, exclude_local_config=exclude_local_config, file_names=file_names, diff=diff, results_dir=results_dir, quiet=quiet,
            verbose=verbose, origin_annotations=origin_annotations, transformer_annotations=transformer_annotations,
        ),
        ci=api.CI(check=check, rerun=_rerun(ctx), results_format=results_format, shard=shard),
        speed=opts.speed(jobs=jobs, no_cache=no_cache, no_builtin=no_builtin, no_warm=no_warm, builtin_catalog=builtin_catalog, server=server),
    )
    with _paths_as_typed(directory):
        api.run(request)


@contextmanager
def _paths_as_typed(directory: Path) -> Iterator[None]:
    """An error naming a package file names it from where the user typed the command."""
    from ..errors import FnrunError
    from ..report.paths import as_typed

    try:
        yield
    except FnrunError as err:
        if str(directory) != "-":
            err.args = (as_typed(str(err), Path(directory)),)
        raise


def _rerun(ctx: typer.Context) -> str | None:
    """The user's command line without --check: what writes the changes a check found, with the
    same flags (another --shard, --image-prefix or --builtin-catalog could render otherwise)."""
    import shlex

    args = (ctx.obj or {}).get("args")
    if not args:
        return None
    return shlex.join(["fnrun", *(arg for arg in args if arg != "--check")])


def _selection(
    api_version: str | None, kind: str | None, name: str | None, namespace: str | None, labels: list[str] | None, annotations: list[str] | None
) -> tuple[tuple[str, str], ...]:
    """The --match-*/--exclude-* flags as (selector field, value) pairs; all of them must hold."""
    single = (("apiVersion", api_version), ("kind", kind), ("name", name), ("namespace", namespace))
    return tuple((f, v) for f, v in single if v is not None) + tuple(("labels", v) for v in labels or ()) + tuple(("annotations", v) for v in annotations or ())


RENDER_EXAMPLES = """Examples:
  fnrun render samples/kpt-package --image-prefix fnrun
  fnrun render samples/kpt-package --image-prefix fnrun --check   # exit 3: not rendered yet
  fnrun render samples/kpt-package --image-prefix fnrun -o stdout
  fnrun render samples/kpt-package --image-prefix fnrun -o unwrap --exclude-local-config | kubectl apply -f -
  cd samples/kpt-package && KPT_IMAGE_PREFIX=fnrun fnrun render -o ../shop-rendered/"""


@app.command(cls=DefaultDirectoryCommand, epilog=RENDER_EXAMPLES)
def render(
    ctx: typer.Context,
    directory: str = typer.Argument(".", metavar="[DIR]", show_default=False, help="kpt package directory (its root holds a Kptfile; default: the current one)."),
    image_prefix: opts.ImagePrefix = None,
    allow_exec: opts.AllowExec = False,
    output: opts.Output = None,
    exclude_local_config: opts.ExcludeLocalConfig = False,
    no_status: bool = typer.Option(False, *spellings("no_status"), help="Do not record status in the root Kptfile.", rich_help_panel=OUTPUT),
    file_names: opts.FileNames = None,
    strict_results: bool = typer.Option(False, *spellings("strict_results"), help="Fail a step whose function reports an error result though it exits 0 (kpt goes on).", rich_help_panel=CI),
    diff: opts.Diff = False,
    results_dir: opts.ResultsDir = None,
    quiet: opts.Quiet = False,
    verbose: opts.Verbose = False,
    check: opts.Check = False,
    results_format: opts.ResultsFormat = None,
    shard: opts.Shard = None,
    network: opts.Network = False,
    as_current_user: opts.AsCurrentUser = False,
    env: opts.Env = None,
    timeout: opts.Timeout = 300.0,
    max_output: opts.MaxOutput = "256M",
    memory: opts.Memory = "512m",
    pids_limit: opts.PidsLimit = 256,
    cpus: opts.Cpus = 1.0,
    tmpfs_size: opts.TmpfsSize = "64m",
    writable_root: opts.WritableRoot = False,
    keep_capabilities: opts.KeepCapabilities = False,
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    oci_runtime: opts.OciRuntime = None,
    mount_mode: opts.MountMode = "auto",
    jobs: opts.Jobs = None,
    no_cache: opts.NoCache = False,
    no_builtin: opts.NoBuiltin = False,
    no_warm: opts.NoWarm = False,
    builtin_catalog: opts.BuiltinCatalog = False,
    server: opts.Server = None,
    no_lock: opts.NoLock = False,
) -> None:
    """Render a kpt package: every Kptfile pipeline (subpackages first), written back only where changed.

    Short image names get the catalog prefix; `tag:` may be a semver constraint, resolved against
    the local engine's images. Nothing is written unless every step succeeds, except the root
    Kptfile's status (--no-status turns it off)."""
    from .. import api

    request = api.RenderRequest(
        directory=directory,
        images=opts.images(image_prefix=image_prefix, no_lock=no_lock),
        sandbox=opts.sandbox(
            allow_exec=allow_exec, network=network, as_current_user=as_current_user, env=env, timeout=timeout,
            max_output=max_output, memory=memory, pids_limit=pids_limit, cpus=cpus, tmpfs_size=tmpfs_size, writable_root=writable_root,
            keep_capabilities=keep_capabilities, image_pull_policy=image_pull_policy, oci_runtime=oci_runtime, mount_mode=mount_mode,
        ),
        output=opts.output_group(
            output, exclude_local_config=exclude_local_config, file_names=file_names, diff=diff, results_dir=results_dir, quiet=quiet,
            verbose=verbose,
        ),
        ci=api.CI(check=check, rerun=_rerun(ctx), results_format=results_format, shard=shard),
        speed=opts.speed(jobs=jobs, no_cache=no_cache, no_builtin=no_builtin, no_warm=no_warm, builtin_catalog=builtin_catalog, server=server),
        record_status=not no_status,
        strict_results=strict_results,
    )
    with _paths_as_typed(directory):
        api.render(request)
