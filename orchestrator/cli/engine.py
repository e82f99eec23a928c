"""The engine side: the result cache and `doctor`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from . import options as opts
from .app import app
from .helptext import PanelCommand, PanelGroup

if TYPE_CHECKING:
    from ..runtimes.cache import ResultCache

cache_app = typer.Typer(cls=PanelGroup, help="The result cache of container functions (see --no-cache on run and render).", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


@cache_app.command("info", cls=PanelCommand, epilog="Example:\n  fnrun cache info")
def cache_info() -> None:
    """Where the cache is, how many results it holds, and its size against its bound."""
    from ..sizes import human_size

    info = _result_cache().info()
    print(f"location: {info.location}\nentries:  {info.entries}\nsize:     {info.size} bytes (bound {human_size(info.bound)}, FNRUN_CACHE_SIZE)")


@cache_app.command("prune", cls=PanelCommand, epilog="Example:\n  fnrun cache prune --all")
def cache_prune(everything: bool = typer.Option(False, "--all", help="Remove every entry, not just what is over the bound.")) -> None:
    """Remove least recently used results until the cache fits its bound (or all of them)."""
    removed = _result_cache().prune(0 if everything else None)
    print(f"fnrun cache: removed {removed} entr{'y' if removed == 1 else 'ies'}", file=sys.stderr)


def _result_cache() -> ResultCache:
    """The cache where FNRUN_CACHE_DIR puts it, bounded by FNRUN_CACHE_SIZE (read here, the edge)."""
    from ..runtimes.cache import ResultCache
    from ..settings import Settings

    settings = Settings.from_environ()
    return ResultCache(settings.cache_dir, bound=settings.cache_size)


@app.command(cls=PanelCommand, epilog="Examples:\n  fnrun doctor\n  fnrun doctor samples/set-labels\n  fnrun doctor samples/kpt-package --builtin-catalog   # kpt's catalog in-process (exit 1: require-resource-limits has no builtin)")
@opts.takes(opts.named("oci_runtime", "mount_mode", "image_prefix", "builtin_catalog"))
def doctor(
    directory: Path | None = typer.Argument(None, help="Package whose function images to look for."),
    **values: Any,
) -> int:
    """Check the container engine fnrun would use, and what of the sandbox will not hold there.

    Where the engine answers, API version, rootless or not, runtimes, the package's images (and
    what a fnrun.lock would refuse), each problem with its fix; then one real function container
    started in the full sandbox. Exit 1 when there is a problem, 0 only when that container ran."""
    from .. import api
    from ..doctor import render
    from ..settings import Settings

    switches = Settings.from_environ()
    findings = api.doctor(directory, values["oci_runtime"], values["mount_mode"], values["image_prefix"],
                          values["builtin_catalog"] or switches.builtin_catalog, switches)
    print(render(findings), end="")
    return 1 if any(f.problem for f in findings) else 0
