"""`fnrun run` and `fnrun render`: the same options under the same names (kpt's spellings too),
grouped in help panels, with DIR defaulting to the current directory as kpt's does."""

from __future__ import annotations

from typing import Any

import typer

from ..option_schema import RENDER_OPTIONS, RUN_OPTIONS
from . import options as opts
from .app import app
from .helptext import PanelCommand


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
@opts.takes(RUN_OPTIONS)
def run(
    ctx: typer.Context,
    directory: str = typer.Argument(".", metavar="[DIR]", show_default=False, help="Package directory (default: the current one), or - for a ResourceList on stdin."),
    function_args: list[str] | None = typer.Argument(None, metavar="[-- KEY=VALUE...]", help="key=value after -- : the data of --image/--exec's functionConfig."),
    **values: Any,
) -> None:
    """Run functions over a package and write back only what they changed.

    Functions come from the package (`config.kubernetes.io/function` annotations, deepest
    directory first) or from --image/--exec. Nothing is written unless every function succeeds.
    stdout carries data only: a diff, the rendered package, or the results document. For a kpt
    package's Kptfile pipelines, use `fnrun render`."""
    from ..edge import carry_out

    carry_out("run", values, directory, function_args, (ctx.obj or {}).get("args"), (ctx.obj or {}).get("early"))


RENDER_EXAMPLES = """Examples:
  fnrun render samples/kpt-package --image-prefix fnrun
  fnrun render samples/kpt-package --image-prefix fnrun --check   # exit 3: not rendered yet
  fnrun render samples/kpt-package --image-prefix fnrun -o stdout
  fnrun render samples/kpt-package --image-prefix fnrun -o unwrap --exclude-local-config | kubectl apply -f -
  cd samples/kpt-package && KPT_IMAGE_PREFIX=fnrun fnrun render -o ../shop-rendered/"""


@app.command(cls=DefaultDirectoryCommand, epilog=RENDER_EXAMPLES)
@opts.takes(RENDER_OPTIONS)
def render(
    ctx: typer.Context,
    directory: str = typer.Argument(".", metavar="[DIR]", show_default=False, help="kpt package directory (its root holds a Kptfile; default: the current one)."),
    **values: Any,
) -> None:
    """Render a kpt package: every Kptfile pipeline (subpackages first), written back only where changed.

    Short image names get the catalog prefix; `tag:` may be a semver constraint, resolved against
    the local engine's images. Nothing is written unless every step succeeds, except the root
    Kptfile's status (--no-status turns it off)."""
    from ..edge import carry_out

    carry_out("render", values, directory, None, (ctx.obj or {}).get("args"), (ctx.obj or {}).get("early"))
