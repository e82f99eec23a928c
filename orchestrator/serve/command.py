"""`fnrun serve`'s options as the user spells them, parsed once into the server's settings."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..requests import SandboxSettings
from ..requests.parse import sandbox_of
from ..runtimes.remote import check_address
from ..sizes import parse_size
from .evaluate import Settings
from .server import Listen, serve


def serve_command(*, address: str, insecure: bool, tls_cert: Path | None, tls_key: Path | None, client_ca: Path | None,
                  max_request: str, metrics: str | None, parallel: int, queue: int, grace: float, builtin_catalog: bool,
                  image_pull_policy: str, timeout: float, memory: str, oci_runtime: str | None, mount_mode: str, cache: bool,
                  warm: bool, idle_ttl: float) -> int:
    """Parse, then serve until stopped."""
    from ..settings import Settings as Switches

    try:
        request_limit = parse_size(max_request)
    except ValueError:
        raise InputError(f"--max-request {max_request!r}: use a size such as 6M or 64M") from None
    address = check_address(address, "--address")
    if metrics is not None and metrics.startswith("unix:"):
        raise InputError(f"--metrics {metrics!r}: use HOST:PORT (Prometheus scrapes over TCP)")
    sandbox = sandbox_of(SandboxSettings(timeout=timeout, memory=memory, image_pull_policy=image_pull_policy, oci_runtime=oci_runtime,
                                         mount_mode=mount_mode))
    switches = Switches.from_environ()
    settings = Settings(sandbox=sandbox, builtin_catalog=builtin_catalog or switches.builtin_catalog,
                        cache=cache, parallel=parallel, queue=queue,
                        warm=warm and switches.warm, idle_ttl=idle_ttl, cache_size=switches.cache_size, cache_dir=switches.cache_dir,
                        workers=switches.workers, helper=switches.helper)
    listen = Listen(address=address, insecure=insecure, tls_cert=tls_cert, tls_key=tls_key, client_ca=client_ca,
                    max_request=request_limit, grace=grace,
                    metrics=check_address(metrics, "--metrics") if metrics is not None else None)
    return serve(settings, listen)
