"""The command line: a thin typer shell over `orchestrator.api`. Options become arguments of
library calls; no YAML or Docker here. Errors are turned into one line and an exit code once, in
`run_app`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

try:  # typer 0.29+ vendors click as typer._click and raises its exceptions, even with click installed
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort, Exit
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import Abort, ClickException, Exit  # type: ignore[assignment]

from . import cli_options as opts
from .errors import FnrunError

app = typer.Typer(
    name="fnrun",
    help="Run sandboxed KRM configuration functions over a package of Kubernetes YAML and write back only what changed.\n\n"
    "Example:  fnrun run samples/nginx\n\n"
    "Inside function images, `fnrun wrap -- CMD` and `fnrun xargs -- CMD` run shell templates as functions "
    "(see `fnrun wrap --help`).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def version() -> str:
    """The installed distribution's version (what `pip show fnrun` says), or the source tree's."""
    from importlib import metadata

    try:
        return metadata.version("fnrun")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _print_version(value: bool) -> None:
    if value:
        print(f"fnrun {version()}")
        raise Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Options before the command."""


@app.command(epilog="Example:  fnrun source samples/nginx > package.yaml")
def source(directory: Path = typer.Argument(..., help="Package directory to read.")) -> None:
    """Print a package as a ResourceList (with path/index annotations and comments) on stdout."""
    from . import api

    api.write_source(directory, sys.stdout)


@app.command(epilog="Example:  fnrun source pkg | fnrun sink out/")
def sink(directory: Path = typer.Argument(..., help="Package directory to write (created when missing).")) -> None:
    """Write a ResourceList, List or YAML stream from stdin into a package directory.

    Unchanged files keep their bytes; resource files missing from the input are deleted."""
    from . import api

    plan = api.sink(directory, sys.stdin.buffer)
    print(f"fnrun sink: {plan.summary()}", file=sys.stderr)


@app.command("list", epilog="Example:  fnrun list samples/")
def list_(
    directory: Path = typer.Argument(..., help="Package directory."),
    global_scope: bool = typer.Option(False, "--global-scope", help="Show scopes as `fnrun run --global-scope` would use them."),
) -> None:
    """Print the package's function pipeline in run order, without running anything.

    Order: deepest directory first, then file path, then position in the file. For a kpt package
    (a Kptfile at its root): the Kptfile pipelines in the order `fnrun render` runs them."""
    from . import api

    if (directory / "Kptfile").is_file():  # a kpt package: its pipelines, as `fnrun render` runs them
        for number, (where, spec) in enumerate(api.list_pipeline(directory), 1):
            what = spec.image if spec.kind == "container" else f"exec {spec.exec_path}"
            print(f"{number}. {what}  scope: {spec.scope}  declared in: {where}")
        return
    specs = api.list_functions(directory, global_scope)
    if not specs:
        print(f"{directory}: no functions declared", file=sys.stderr)
    for number, spec in enumerate(specs, 1):
        what = spec.image if spec.kind == "container" else f"{spec.kind} {spec.exec_path}"
        print(f"{number}. {what}  scope: {spec.scope}  declared in: {spec.declared_in}[{spec.declared_index}]")


@app.command(epilog="Example:  fnrun merge upstream/ overlay/ my-package/")
def merge(
    directories: list[Path] = typer.Argument(..., help="SRC_DIR... DEST_DIR: source packages, then the destination."),
) -> None:
    """Two-way merge source packages onto a destination package (sources win where set).

    Resources match by apiVersion group, kind, namespace and name; `null` in a source clears a
    field; lists of Kubernetes fields merge by their real keys (containers by name, ...)."""
    from . import api

    if len(directories) < 2:
        raise typer.BadParameter("give at least one source and the destination", param_hint="DIRECTORIES")
    plan = api.merge(list(directories[:-1]), directories[-1])
    print(f"fnrun merge: {plan.summary()}", file=sys.stderr)


@app.command(epilog="Example:  fnrun merge3 --ancestor v1/ --from v2/ --to my-package/")
def merge3(
    ancestor: Path = typer.Option(..., "--ancestor", help="The upstream package your destination started from."),
    updated: Path = typer.Option(..., "--from", help="The new upstream package."),
    destination: Path = typer.Option(..., "--to", help="Your package, updated in place."),
) -> None:
    """Three-way merge: apply what changed between --ancestor and --from to --to, keeping your edits."""
    from . import api

    plan = api.merge3(ancestor, updated, destination)
    print(f"fnrun merge3: {plan.summary()}", file=sys.stderr)


@app.command(
    epilog="Examples:\n\n"
    "  fnrun run samples/nginx                       # the functions the package declares\n\n"
    "  fnrun run app/ --check                        # CI: exit 1 and a diff when app/ is not what its functions render\n\n"
    "  fnrun run app/ --check --results-format json > results.json   # the diff travels inside the JSON\n\n"
    "  fnrun run app/ --output - --origin-annotations --transformer-annotations\n\n"
    "  fnrun run app/ --image fnrun/set-namespace:v1 -- namespace=prod\n\n"
    "  fnrun run app/ --image fnrun/set-labels:v1 --save -- team=web   # and record it in app/Kptfile\n\n"
    "  fnrun run app/ --image fnrun/set-namespace:v1 --match-kind Deployment --exclude-labels tier=db -- namespace=prod\n\n"
    "  fnrun source app/ | fnrun run - --image fnrun/set-labels:v1 -- team=web",
)
def run(
    directory: str = typer.Argument(..., help="Package directory, or - to read a ResourceList on stdin and write it on stdout."),
    function_args: Optional[list[str]] = typer.Argument(None, help="key=value pairs after -- : the functionConfig data of --image/--exec."),
    image: Optional[str] = typer.Option(None, "--image", help="Run this function image over the whole package instead of the declared functions."),
    exec_path: Optional[str] = typer.Option(None, "--exec", help="Run this local executable as the function (needs --enable-exec)."),
    fn_config: Optional[Path] = typer.Option(None, "--fn-config", help="File holding the functionConfig for --image/--exec."),
    enable_exec: bool = typer.Option(False, "--enable-exec", help="Allow exec functions (they run unsandboxed on this machine)."),
    global_scope: bool = typer.Option(False, "--global-scope", help="Let declared functions see the whole package, not just their directory."),
    network: bool = typer.Option(False, "--network", help="Allow functions that declare `network: true` to use the network."),
    as_current_user: opts.AsCurrentUser = False,
    mount: Optional[list[str]] = typer.Option(None, "--mount", help="type=bind,src=DIR,dst=/PATH[,rw=true] (source inside the package); repeatable."),
    env: opts.Env = None,
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    timeout: opts.Timeout = 300.0,
    no_cache: opts.NoCache = False,
    no_builtin: opts.NoBuiltin = False,
    builtin_catalog: opts.BuiltinCatalog = False,
    max_output: opts.MaxOutput = "256M",
    memory: opts.Memory = "512m",
    pids_limit: opts.PidsLimit = 256,
    cpus: opts.Cpus = 1.0,
    tmpfs_size: opts.TmpfsSize = "64m",
    writable_root: opts.WritableRoot = False,
    keep_capabilities: opts.KeepCapabilities = False,
    oci_runtime: opts.OciRuntime = None,
    mount_mode: opts.MountMode = "auto",
    check: opts.Check = False,
    diff: opts.Diff = False,
    results_format: opts.ResultsFormat = None,
    results_dir: opts.ResultsDir = None,
    jobs: opts.Jobs = None,
    no_lock: opts.NoLock = False,
    shard: Optional[str] = typer.Option(None, "--shard", help="I/N: run only the declared functions of this CI job's share of the kpt packages in DIR (N jobs together run them all)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="- : print the rendered package as a ResourceList on stdout instead of writing it."),
    exclude_local_config: bool = typer.Option(False, "--exclude-local-config", help="With --output - or stdin: leave out resources marked config.kubernetes.io/local-config (output meant for a cluster)."),
    origin_annotations: bool = typer.Option(False, "--origin-annotations", help="With --output -: annotate where each resource came from (config.kubernetes.io/origin)."),
    transformer_annotations: bool = typer.Option(False, "--transformer-annotations", help="With --output -: list the functions that changed each resource (config.kubernetes.io/transformations)."),
    file_names: opts.FileNames = None,
    fn_config_as_item: bool = typer.Option(False, "--fn-config-as-item", help="As kpt fn eval: the --fn-config file, when it lies in the package, is also one of the function's items (and written back as the function left it)."),
    quiet: opts.Quiet = False,
    verbose: opts.Verbose = False,
    save: bool = typer.Option(False, "--save", "-s", help="Also add the --image function (its config and selectors) to the package's Kptfile pipeline, as kpt fn eval --save does."),
    function_type: str = typer.Option("mutator", "--type", "-t", help="With --save: mutator (pipeline.mutators) or validator (pipeline.validators)."),
    match_api_version: Optional[str] = typer.Option(None, "--match-api-version", help="Send the function only resources with this apiVersion."),
    match_kind: Optional[str] = typer.Option(None, "--match-kind", help="Send the function only resources of this kind."),
    match_name: Optional[str] = typer.Option(None, "--match-name", help="Send the function only resources with this metadata.name."),
    match_namespace: Optional[str] = typer.Option(None, "--match-namespace", help="Send the function only resources in this namespace."),
    match_labels: Optional[list[str]] = typer.Option(None, "--match-labels", help="KEY=VALUE: send the function only resources with this label; repeatable."),
    match_annotations: Optional[list[str]] = typer.Option(None, "--match-annotations", help="KEY=VALUE: send the function only resources with this annotation; repeatable."),
    exclude_api_version: Optional[str] = typer.Option(None, "--exclude-api-version", help="Do not send the function resources with this apiVersion."),
    exclude_kind: Optional[str] = typer.Option(None, "--exclude-kind", help="Do not send the function resources of this kind."),
    exclude_name: Optional[str] = typer.Option(None, "--exclude-name", help="Do not send the function resources with this metadata.name."),
    exclude_namespace: Optional[str] = typer.Option(None, "--exclude-namespace", help="Do not send the function resources in this namespace."),
    exclude_labels: Optional[list[str]] = typer.Option(None, "--exclude-labels", help="KEY=VALUE: do not send the function resources with this label; repeatable."),
    exclude_annotations: Optional[list[str]] = typer.Option(None, "--exclude-annotations", help="KEY=VALUE: do not send the function resources with this annotation; repeatable."),
) -> None:
    """Run functions over a package and write back only what they changed.

    Functions come from the package (`config.kubernetes.io/function` annotations, deepest directory
    first) or from --image/--exec. Nothing is written unless every function succeeds.

    stdout carries data only, one thing at a time: the diff (--check, --diff), the rendered package
    (--output -) or the results document (--results-format). With --results-format json or yaml,
    the diff of --check/--diff is inside the document (its `diff` field); --results-format text with
    --check/--diff, and --results-format with --output -, are refused (exit 2). Progress goes to
    stderr: a live display in a terminal, `::group::`/`::error` workflow commands in GitHub Actions,
    plain lines elsewhere. --origin-annotations and --transformer-annotations only go with --output -
    (fnrun never writes them into files); `fnrun explain` tells the same story for one resource."""
    from . import api

    if output not in (None, "-"):
        raise typer.BadParameter("only - (stdout) is supported", param_hint="--output")
    request = api.RunRequest(
        directory=directory,
        image=image,
        exec_path=exec_path,
        fn_config=fn_config,
        arguments=tuple(function_args or ()),
        enable_exec=enable_exec,
        global_scope=global_scope,
        network=network,
        mounts=tuple(mount or ()),
        shard=shard,
        to_stdout=output == "-",
        exclude_local_config=exclude_local_config,
        origin_annotations=origin_annotations,
        transformer_annotations=transformer_annotations,
        file_names=file_names,
        fn_config_as_item=fn_config_as_item,
        save=save,
        function_type=function_type,
        match=_selection(match_api_version, match_kind, match_name, match_namespace, match_labels, match_annotations),
        exclude=_selection(exclude_api_version, exclude_kind, exclude_name, exclude_namespace, exclude_labels, exclude_annotations),
        **opts.shared_fields(locals()),
    )
    api.run(request)


def _selection(
    api_version: Optional[str], kind: Optional[str], name: Optional[str], namespace: Optional[str], labels: Optional[list[str]], annotations: Optional[list[str]]
) -> tuple[tuple[str, str], ...]:
    """The --match-*/--exclude-* flags as (selector field, value) pairs; all of them must hold."""
    single = (("apiVersion", api_version), ("kind", kind), ("name", name), ("namespace", namespace))
    return tuple((f, v) for f, v in single if v is not None) + tuple(("labels", v) for v in labels or ()) + tuple(("annotations", v) for v in annotations or ())


@app.command(
    epilog="Examples:\n\n"
    "  fnrun render samples/kpt-package                 # in place, like kpt fn render\n\n"
    "  fnrun render app/ --check                        # CI: exit 1 and a diff when app/ is not rendered\n\n"
    "  fnrun render app/ -o unwrap | kubectl apply -f -",
)
def render(
    directory: str = typer.Argument(..., help="kpt package directory (its root holds a Kptfile)."),
    allow_exec: bool = typer.Option(False, "--allow-exec", help="Allow `exec:` steps (they run unsandboxed on this machine)."),
    allow_network: bool = typer.Option(False, "--allow-network", help="Give every function container the network."),
    image_prefix: Optional[str] = typer.Option(None, "--image-prefix", help="Registry prefix for short image names (default: $KPT_IMAGE_PREFIX, else ghcr.io/kptdev/krm-functions-catalog/)."),
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    no_status: bool = typer.Option(False, "--no-status", help="Do not record status.conditions/renderStatus in the root Kptfile."),
    strict_results: bool = typer.Option(False, "--strict-results", help="Fail a step whose function reports an error result though it exits 0 (kpt records the result and goes on; fnrun run always fails)."),
    as_current_user: opts.AsCurrentUser = False,
    env: opts.Env = None,
    timeout: opts.Timeout = 300.0,
    memory: opts.Memory = "512m",
    pids_limit: opts.PidsLimit = 256,
    cpus: opts.Cpus = 1.0,
    tmpfs_size: opts.TmpfsSize = "64m",
    writable_root: opts.WritableRoot = False,
    keep_capabilities: opts.KeepCapabilities = False,
    check: opts.Check = False,
    diff: opts.Diff = False,
    results_format: opts.ResultsFormat = None,
    results_dir: opts.ResultsDir = None,
    output: Optional[str] = typer.Option(None, "--output", "-o", help="stdout (a ResourceList), unwrap (a plain YAML stream) or a new DIR to write to; the package is left as it is."),
    file_names: opts.FileNames = None,
    quiet: opts.Quiet = False,
    verbose: opts.Verbose = False,
    shard: Optional[str] = typer.Option(None, "--shard", help="I/N: render only this CI job's share of the independent packages (N jobs together render them all)."),
    max_output: opts.MaxOutput = "256M",
    no_cache: opts.NoCache = False,
    no_builtin: opts.NoBuiltin = False,
    builtin_catalog: opts.BuiltinCatalog = False,
    oci_runtime: opts.OciRuntime = None,
    mount_mode: opts.MountMode = "auto",
    jobs: opts.Jobs = None,
    no_lock: opts.NoLock = False,
) -> None:
    """Render a kpt package: run every Kptfile pipeline (subpackages first) and write back only what changed.

    Short image names get the catalog prefix; `tag:` may be a semver constraint, resolved against the
    images the local engine has. Nothing is written unless every step succeeds, except the root
    Kptfile's status (kpt 1.0's Rendered condition and renderStatus; --no-status turns it off)."""
    from . import api

    request = api.RenderRequest(
        directory=directory,
        enable_exec=allow_exec,
        network=allow_network,
        image_prefix=image_prefix,
        record_status=not no_status,
        strict_results=strict_results,
        to_stdout=output in ("stdout", "-", "unwrap"),
        unwrap=output == "unwrap",
        output_dir=Path(output) if output not in (None, "stdout", "-", "unwrap") else None,
        shard=shard,
        file_names=file_names,
        **opts.shared_fields(locals()),
    )
    api.run(request)


@app.command(epilog="Examples:\n\n  fnrun explain samples/nginx Deployment/my-instance\n\n  fnrun explain app/ apps/v1/Deployment/prod/web")
def explain(
    directory: str = typer.Argument(..., help="Package directory."),
    resource: str = typer.Argument(..., help="KIND/NAME, KIND/NAMESPACE/NAME, or with the apiVersion first: apps/v1/Deployment/ns/web."),
    enable_exec: bool = typer.Option(False, "--enable-exec", help="Allow exec functions (they run unsandboxed on this machine)."),
    global_scope: bool = typer.Option(False, "--global-scope", help="Render as `fnrun run --global-scope` would."),
    network: bool = typer.Option(False, "--network", help="Allow functions that declare `network: true` to use the network."),
    env: opts.Env = None,
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    timeout: opts.Timeout = 300.0,
    quiet: opts.Quiet = False,
) -> None:
    """Render the package in memory (nothing is written) and print where RESOURCE came from (the
    file it was read from, or the function that created it and where that function is configured)
    and which functions changed it, in order — the story --origin-annotations and
    --transformer-annotations tell, for one resource."""
    from . import api

    request = api.RunRequest(
        directory=directory,
        enable_exec=enable_exec,
        global_scope=global_scope,
        network=network,
        env=tuple(env or ()),
        image_pull_policy=image_pull_policy,
        timeout=timeout,
        quiet=quiet,
    )
    sys.stdout.write(api.explain(request, resource))


cache_app = typer.Typer(help="The result cache of container functions (see `fnrun run --help`, --no-cache).", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("info", epilog="Example:  fnrun cache info")
def cache_info() -> None:
    """Where the cache is, how many results it holds, and its size against its bound."""
    from .runtimes.cache import ResultCache
    from .runtimes.streams import human_size

    info = ResultCache().info()
    print(f"location: {info.location}\nentries:  {info.entries}\nsize:     {info.size} bytes (bound {human_size(info.bound)}, FNRUN_CACHE_SIZE)")


@cache_app.command("prune", epilog="Example:  fnrun cache prune --all")
def cache_prune(everything: bool = typer.Option(False, "--all", help="Remove every entry, not just what is over the bound.")) -> None:
    """Remove least recently used results until the cache fits its bound (or all of them)."""
    from .runtimes.cache import ResultCache

    removed = ResultCache().prune(0 if everything else None)
    print(f"fnrun cache: removed {removed} entr{'y' if removed == 1 else 'ies'}", file=sys.stderr)


@app.command(epilog="Example:  fnrun doctor samples/set-labels")
def doctor(
    directory: Optional[Path] = typer.Argument(None, help="Package whose function images to look for."),
    oci_runtime: Optional[str] = typer.Option(None, "--runtime", envvar="FNRUN_RUNTIME", help="Check that the engine offers this OCI runtime."),
    mount_mode: str = typer.Option("auto", "--mounts", envvar="FNRUN_MOUNTS", help="bind | upload | auto: the mount mode `run` and `render` would use."),
    image_prefix: Optional[str] = typer.Option(None, "--image-prefix", help="Registry prefix for short Kptfile image names, as `fnrun render --image-prefix`."),
) -> int:
    """Check the container engine fnrun would use: where it answers, API version, rootless or not,
    runtimes, the package's images, and what of the sandbox will not hold there (each with its fix).
    Exit 1 when there is a problem."""
    from . import api
    from .doctor import render

    findings = api.doctor(directory, oci_runtime, mount_mode, image_prefix)
    print(render(findings), end="")
    return 1 if any(f.problem for f in findings) else 0


from .cli_images import register as _register_image_commands  # noqa: E402 - `lock`, `images save/load`

_register_image_commands(app)


def run_app(args: list[str]) -> int:
    """Run the CLI; the one place where errors become an exit code and a single line on stderr."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="fnrun", standalone_mode=False)
    except FnrunError as err:
        print(f"fnrun: error: {err}", file=sys.stderr)
        return err.exit_code
    except Exit as err:
        return err.exit_code
    except Abort:
        print("fnrun: aborted", file=sys.stderr)
        return 130
    except ClickException as err:
        err.show()
        return 2
    except KeyboardInterrupt:
        print("fnrun: interrupted; nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    return result if isinstance(result, int) else 0
