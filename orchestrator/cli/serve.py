"""`fnrun serve`: the function runner porch-server (or any gRPC client) calls; see orchestrator.serve."""

from __future__ import annotations

from typing import Any

from ..option_schema import SERVE_OPTIONS
from . import options as opts
from .app import app
from .helptext import PanelCommand


@app.command(cls=PanelCommand, epilog="Examples:\n"
             "  fnrun serve                                   # 127.0.0.1:9445, plaintext on loopback\n"
             "  fnrun serve --address unix:/run/fnrun.sock --builtin-catalog\n"
             "  fnrun serve --address 0.0.0.0:9445 --tls-cert tls.crt --tls-key tls.key --client-ca ca.crt")
@opts.takes(SERVE_OPTIONS)
def serve(**values: Any) -> int:
    """Evaluate functions for porch-server and other gRPC clients until SIGTERM.

    Porch's FunctionEvaluator service (EvaluateFunction: a ResourceList and an image in, the
    function's ResourceList and its stderr out) and the standard health service. Every call runs
    as `fnrun run` runs a function: sandboxed, kpt's catalog in-process with --builtin-catalog,
    behind the result cache; an image's calls share warm containers across requests, each call a
    fresh process in it."""
    from ..serve.command import serve_command

    values = dict(values)
    cache, warm = not values.pop("no_cache"), not values.pop("no_warm")
    return serve_command(**values, cache=cache, warm=warm)
