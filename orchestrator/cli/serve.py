"""`fnrun serve`: the function runner porch-server (or any gRPC client) calls; see orchestrator.serve."""

from __future__ import annotations

from pathlib import Path

import typer

from . import options as opts
from .app import app
from .helptext import PanelCommand


@app.command(cls=PanelCommand, epilog="Examples:\n"
             "  fnrun serve                                   # 127.0.0.1:9445, plaintext on loopback\n"
             "  fnrun serve --address unix:/run/fnrun.sock --builtin-catalog\n"
             "  fnrun serve --address 0.0.0.0:9445 --tls-cert tls.crt --tls-key tls.key --client-ca ca.crt")
def serve(
    address: str = typer.Option("127.0.0.1:9445", "--address", help="HOST:PORT or unix:PATH to listen on."),
    insecure: bool = typer.Option(False, "--insecure", help="Plaintext on an address other machines can reach."),
    tls_cert: Path | None = typer.Option(None, "--tls-cert", help="The server's certificate (PEM)."),
    tls_key: Path | None = typer.Option(None, "--tls-key", help="The server's private key (PEM)."),
    client_ca: Path | None = typer.Option(None, "--client-ca", help="Mutual TLS: accept only clients whose certificate this CA signed."),
    max_request: str = typer.Option("6M", "--max-request", help="Largest request accepted (Porch's default, 6M)."),
    parallel: int = typer.Option(4, "--parallel", min=1, help="Containers of one image running at once."),
    queue: int = typer.Option(64, "--queue", min=0, help="Calls of one image that may wait; more are RESOURCE_EXHAUSTED."),
    grace: float = typer.Option(10.0, "--grace", min=0, help="Seconds a stop lets calls under way finish."),
    metrics: str | None = typer.Option(None, "--metrics", metavar="HOST:PORT", help="Serve Prometheus counters at http://HOST:PORT/metrics."),
    idle_ttl: float = typer.Option(1800.0, "--idle-ttl", min=1, help="Seconds a warm container waits for its next call (Porch's 30 minutes)."),
    builtin_catalog: opts.BuiltinCatalog = False,
    image_pull_policy: opts.PullPolicy = "ifNotPresent",
    timeout: opts.Timeout = 300.0,
    memory: opts.Memory = "512m",
    oci_runtime: opts.OciRuntime = None,
    mount_mode: opts.MountMode = "auto",
    no_cache: opts.NoCache = False,
    no_warm: opts.NoWarm = False,
) -> int:
    """Evaluate functions for porch-server and other gRPC clients until SIGTERM.

    Porch's FunctionEvaluator service (EvaluateFunction: a ResourceList and an image in, the
    function's ResourceList and its stderr out) and the standard health service. Every call runs
    as `fnrun run` runs a function: sandboxed, kpt's catalog in-process with --builtin-catalog,
    behind the result cache; an image's calls share warm containers across requests, each call a
    fresh process in it."""
    from ..serve.command import serve_command

    return serve_command(
        address=address, insecure=insecure, tls_cert=tls_cert, tls_key=tls_key, client_ca=client_ca,
        max_request=max_request, metrics=metrics, parallel=parallel, queue=queue, grace=grace, builtin_catalog=builtin_catalog,
        image_pull_policy=image_pull_policy, timeout=timeout, memory=memory, oci_runtime=oci_runtime, mount_mode=mount_mode, cache=not no_cache,
        warm=not no_warm, idle_ttl=idle_ttl,
    )
