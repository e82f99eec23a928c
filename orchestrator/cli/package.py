"""The package tools: source, sink, list, merge, merge3, explain."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from .. import edge
from ..kinds import Kind
from ..option_schema import EXPLAIN_OPTIONS
from ..settings import chosen_workers
from . import options as opts
from .app import app
from .helptext import PanelCommand


@app.command(cls=PanelCommand, epilog="Examples:\n  fnrun source samples/nginx > package.yaml\n"
             "  fnrun source samples/set-labels --fn-config samples/set-labels/fn-config.yaml > list.yaml   # for a function's stdin")
def source(
    directory: Path = typer.Argument(Path("."), help="Package directory to read (default: the current one)."),
    fn_config: Path | None = typer.Option(None, "--fn-config", help="A file whose one resource becomes the list's functionConfig, as kpt's."),
) -> None:
    """Print a package as a ResourceList (with path/index annotations and comments) on stdout."""
    edge.source(directory, fn_config)


@app.command(cls=PanelCommand, epilog="Example:\n  fnrun source samples/nginx | fnrun sink nginx-copy/")
def sink(directory: Path = typer.Argument(..., help="Package directory to write (created when missing).")) -> None:
    """Write a ResourceList, List or YAML stream from stdin into a package directory.

    Unchanged files keep their bytes; resource files missing from the input are deleted."""
    edge.sink(directory)


@app.command("list", cls=PanelCommand, epilog="Examples:\n  fnrun list samples/nginx\n  fnrun list samples/kpt-package")
def list_(
    directory: Path = typer.Argument(Path("."), help="Package directory (default: the current one)."),
    global_scope: bool = typer.Option(False, "--global-scope", help="Show scopes as `fnrun run --global-scope` would use them."),
    image_prefix: str | None = typer.Option(None, "--image-prefix", envvar="KPT_IMAGE_PREFIX",
                                            help="Registry prefix for short Kptfile image names, as `fnrun render --image-prefix`."),
) -> None:
    """Print the package's function pipeline in run order, without running anything.

    Order: deepest directory first, then file path, then position in the file. For a kpt package
    (a Kptfile at its root): the Kptfile pipelines in the order `fnrun render` runs them."""
    from .. import api

    if (directory / "Kptfile").is_file():  # a kpt package: its pipelines, as `fnrun render` runs them
        for number, (where, spec) in enumerate(api.list_pipeline(directory, image_prefix, chosen_workers()), 1):
            what = spec.image if spec.kind == Kind.CONTAINER else f"exec {spec.exec_path}"
            print(f"{number}. {what}  scope: {spec.scope}  declared in: {where}")
        return
    specs = api.list_functions(directory, global_scope, chosen_workers())
    if not specs:
        print(f"{directory}: no functions declared", file=sys.stderr)
    for number, spec in enumerate(specs, 1):
        what = spec.image if spec.kind == Kind.CONTAINER else f"{spec.kind} {spec.exec_path}"
        print(f"{number}. {what}  scope: {spec.scope}  declared in: {spec.declared_in}[{spec.declared_index}]")


@app.command(cls=PanelCommand, epilog="Example:\n  fnrun merge samples/set-labels/ samples/set-namespace/   # set-labels onto set-namespace")
def merge(
    directories: list[Path] = typer.Argument(..., help="SRC_DIR... DEST_DIR: source packages, then the destination."),
) -> None:
    """Two-way merge source packages onto a destination package (sources win where set).

    Resources match by apiVersion group, kind, namespace and name; `null` in a source clears a
    field; lists of Kubernetes fields merge by their real keys (containers by name, ...)."""
    from .. import api

    if len(directories) < 2:
        raise typer.BadParameter("give at least one source and the destination", param_hint="DIRECTORIES")
    plan = api.merge(list(directories[:-1]), directories[-1], chosen_workers())
    print(f"fnrun merge: {plan.summary()}", file=sys.stderr)


@app.command(cls=PanelCommand, epilog="Example:\n  fnrun merge3 --ancestor samples/nginx --from samples/set-labels --to samples/set-namespace")
def merge3(
    ancestor: Path = typer.Option(..., "--ancestor", help="The upstream package your destination started from."),
    updated: Path = typer.Option(..., "--from", help="The new upstream package."),
    destination: Path = typer.Option(..., "--to", help="Your package, updated in place."),
) -> None:
    """Three-way merge: apply what changed between --ancestor and --from to --to, keeping your edits."""
    from .. import api

    plan = api.merge3(ancestor, updated, destination, chosen_workers())
    print(f"fnrun merge3: {plan.summary()}", file=sys.stderr)


@app.command(
    cls=PanelCommand,
    epilog="Examples:\n  fnrun explain samples/nginx Deployment/my-instance\n  fnrun explain samples/nginx apps/v1/Deployment/my-instance",
)
@opts.takes(EXPLAIN_OPTIONS)
def explain(
    directory: str = typer.Argument(..., help="Package directory."),
    resource: str = typer.Argument(..., help="KIND/NAME, KIND/NAMESPACE/NAME, or apiVersion first: apps/v1/Deployment/ns/web."),
    **values: Any,
) -> None:
    """Where a resource came from and which functions changed it, in order.

    Renders the package in memory (nothing is written) and prints the file RESOURCE was read from,
    or the function that created it and where that function is configured, then each function
    that changed it: the story --origin-annotations and --transformer-annotations tell."""
    from .. import api

    request = api.RunRequest(
        directory=directory,
        functions=api.Functions(global_scope=values["global_scope"]),
        sandbox=api.SandboxSettings(
            enable_exec=values["allow_exec"], network=values["network"], env=tuple(values["env"] or ()),
            image_pull_policy=values["image_pull_policy"], timeout=values["timeout"],
        ),
        output=api.Output(quiet=values["quiet"]),
    )
    sys.stdout.write(api.explain(request, resource))
