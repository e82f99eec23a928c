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

    Order: deepest directory first, then file path, then position in the file."""
    from . import api

    specs = api.list_functions(directory, global_scope)
    if not specs:
        print(f"{directory}: no functions declared", file=sys.stderr)
    for number, spec in enumerate(specs, 1):
        what = spec.image if spec.kind == "container" else f"exec {spec.exec_path}"
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
    as_current_user: bool = typer.Option(False, "--as-current-user", help="Run containers as your uid/gid instead of nobody (65534)."),
    mount: Optional[list[str]] = typer.Option(None, "--mount", help="type=bind,src=DIR,dst=/PATH[,rw=true] (source inside the package); repeatable."),
    env: Optional[list[str]] = typer.Option(None, "--env", "-e", help="KEY=VALUE, or KEY to pass yours through; repeatable, wins over declared envs."),
    image_pull_policy: str = typer.Option("ifNotPresent", "--image-pull-policy", help="always | ifNotPresent | never."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds before a function is killed and the run fails."),
    memory: str = typer.Option("512m", "--memory", help="Memory limit per function container."),
    pids_limit: int = typer.Option(256, "--pids-limit", help="Process limit per function container."),
    cpus: float = typer.Option(1.0, "--cpus", help="CPU limit per function container."),
    tmpfs_size: str = typer.Option("64m", "--tmpfs-size", help="Size of the writable tmpfs at /tmp."),
    writable_root: bool = typer.Option(False, "--writable-root", help="Do not make the container's root filesystem read-only."),
    keep_capabilities: bool = typer.Option(False, "--keep-capabilities", help="Do not drop all Linux capabilities."),
    oci_runtime: Optional[str] = typer.Option(None, "--runtime", envvar="FNRUN_RUNTIME", help="OCI runtime registered with the engine to run function containers (runsc, crun); default: the engine's."),
    check: bool = typer.Option(False, "--check", help="Write nothing; print a unified diff of every file that would change and exit 1 if any would."),
    diff: bool = typer.Option(False, "--diff", help="Write, and print a unified diff of what was written."),
    results_format: Optional[str] = typer.Option(None, "--results-format", help="text | json | yaml: the results of every function as one document on stdout."),
    results_dir: Optional[Path] = typer.Option(None, "--results-dir", help="Write every function's results to DIR/results.yaml."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="- : print the rendered package as a ResourceList on stdout instead of writing it."),
    exclude_local_config: bool = typer.Option(False, "--exclude-local-config", help="With --output - or stdin: leave out resources marked config.kubernetes.io/local-config (output meant for a cluster)."),
    origin_annotations: bool = typer.Option(False, "--origin-annotations", help="With --output -: annotate where each resource came from (config.kubernetes.io/origin)."),
    transformer_annotations: bool = typer.Option(False, "--transformer-annotations", help="With --output -: list the functions that changed each resource (config.kubernetes.io/transformations)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only print failures and the final error."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print what each function ran on, its stderr in full, and every file written."),
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
        as_current_user=as_current_user,
        mounts=tuple(mount or ()),
        env=tuple(env or ()),
        image_pull_policy=image_pull_policy,
        timeout=timeout,
        memory=memory,
        pids_limit=pids_limit,
        cpus=cpus,
        tmpfs_size=tmpfs_size,
        read_only_root=not writable_root,
        drop_capabilities=not keep_capabilities,
        oci_runtime=oci_runtime,
        results_dir=results_dir,
        to_stdout=output == "-",
        exclude_local_config=exclude_local_config,
        quiet=quiet,
        verbose=verbose,
        check=check,
        diff=diff,
        results_format=results_format,
        origin_annotations=origin_annotations,
        transformer_annotations=transformer_annotations,
    )
    api.run(request)


@app.command(epilog="Examples:\n\n  fnrun explain samples/nginx Deployment/my-instance\n\n  fnrun explain app/ apps/v1/Deployment/prod/web")
def explain(
    directory: str = typer.Argument(..., help="Package directory."),
    resource: str = typer.Argument(..., help="KIND/NAME, KIND/NAMESPACE/NAME, or with the apiVersion first: apps/v1/Deployment/ns/web."),
    enable_exec: bool = typer.Option(False, "--enable-exec", help="Allow exec functions (they run unsandboxed on this machine)."),
    global_scope: bool = typer.Option(False, "--global-scope", help="Render as `fnrun run --global-scope` would."),
    network: bool = typer.Option(False, "--network", help="Allow functions that declare `network: true` to use the network."),
    env: Optional[list[str]] = typer.Option(None, "--env", "-e", help="KEY=VALUE, or KEY to pass yours through; repeatable."),
    image_pull_policy: str = typer.Option("ifNotPresent", "--image-pull-policy", help="always | ifNotPresent | never."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds before a function is killed and the run fails."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only print failures and the final error."),
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


@app.command(epilog="Example:  fnrun doctor samples/set-labels")
def doctor(
    directory: Optional[Path] = typer.Argument(None, help="Package whose function images to look for."),
    oci_runtime: Optional[str] = typer.Option(None, "--runtime", envvar="FNRUN_RUNTIME", help="Check that the engine offers this OCI runtime."),
) -> int:
    """Check the container engine fnrun would use: where it answers, API version, rootless or not,
    runtimes, the package's images, and what of the sandbox will not hold there (each with its fix).
    Exit 1 when there is a problem."""
    from . import api
    from .doctor import render

    findings = api.doctor(directory, oci_runtime)
    print(render(findings), end="")
    return 1 if any(f.problem for f in findings) else 0


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
