"""`fnrun serve`: Porch's function-runner service over fnrun's runtimes, until SIGTERM or Ctrl-C.

Each call runs on a thread of the server's pool through orchestrator.serve.calls (the one call path
both transports share: this gRPC service, and on a unix socket fnrun's own framing beside it,
orchestrator.serve.framed); the answer's status says whose problem a refusal is: INVALID_ARGUMENT (the request), NOT_FOUND (no builtin has
the image and the engine neither holds nor can pull it; porch-server, which asks its own builtins
first, fails that render), RESOURCE_EXHAUSTED (too many calls waiting, or a
request over the size limit), UNAVAILABLE (the engine), INTERNAL (the function failed: its
ResourceList with its results, its stderr and its exit code travel in the trailing metadata,
`resource-list-bin`, `log-bin` and `exit-code`: orchestrator.runtimes.remote reads them). A stop
drains the calls under way for the grace period, then removes every container still running and
ends."""

from __future__ import annotations

import ipaddress
import signal
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import stops
from ..errors import EnvironmentProblem, InputError
from ..runtimes import Registry
from ..runtimes.remote import EXIT_CODE_KEY, LOG_KEY, RESOURCE_LIST_KEY, frames, read_pem, wire
from .calls import Calls
from .evaluate import Evaluator, Settings

if TYPE_CHECKING:
    from .framed import FramedListener
    from .metrics import Metrics

#: Porch's function runner takes requests up to 6 MiB unless told otherwise.
DEFAULT_MAX_REQUEST = 6 * 1024 * 1024
DEFAULT_ADDRESS = "127.0.0.1:9445"
STOP_LIMIT = 5.0  # seconds after the grace period: containers removed, the process gone


@dataclass(frozen=True)
class Listen:
    """Where and how the server listens."""

    address: str = DEFAULT_ADDRESS  # HOST:PORT, or unix:PATH
    insecure: bool = False  # plaintext beyond loopback, because the operator said so
    tls_cert: Path | None = None
    tls_key: Path | None = None
    client_ca: Path | None = None  # mutual TLS: clients must present a certificate this CA signed
    max_request: int = DEFAULT_MAX_REQUEST
    grace: float = 10.0  # seconds a stop lets calls under way finish
    metrics: str | None = None  # HOST:PORT of the Prometheus endpoint; None: none


def local_only(address: str) -> bool:
    """A unix socket or a loopback address: nobody else can connect, so plaintext is fine."""
    if address.startswith("unix:"):
        return True
    host = address.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credentials(listen: Listen) -> Any:
    """The server's TLS credentials, or None for plaintext (refused beyond loopback unless --insecure)."""
    if listen.tls_cert is None and listen.tls_key is None:
        if listen.client_ca is not None:
            raise InputError("--client-ca needs --tls-cert and --tls-key: mutual TLS is TLS first")
        if not (listen.insecure or local_only(listen.address)):
            raise InputError(f"--address {listen.address} is reachable from other machines: give --tls-cert and --tls-key, or --insecure for plaintext")
        return None
    if listen.tls_cert is None or listen.tls_key is None:
        raise InputError("--tls-cert and --tls-key go together")
    import grpc

    pair = [(read_pem(listen.tls_key, f"--tls-key {listen.tls_key}"), read_pem(listen.tls_cert, f"--tls-cert {listen.tls_cert}"))]
    if listen.client_ca is None:
        return grpc.ssl_server_credentials(pair)
    return grpc.ssl_server_credentials(pair, root_certificates=read_pem(listen.client_ca, f"--client-ca {listen.client_ca}"),
                                       require_client_auth=True)


class FunctionEvaluator:
    """The servicer: one method, EvaluateFunction, answered by the server's one call path."""

    def __init__(self, calls: Calls, messages: Any) -> None:
        self.calls = calls
        self.messages = messages

    def EvaluateFunction(self, request: Any, context: Any) -> Any:
        import grpc

        reply = self.calls.answer(request.resource_list, request.image, context.add_callback)
        if reply.status == "OK":
            return self.messages.EvaluateFunctionResponse(resource_list=reply.resource_list, log=reply.log)
        if reply.status == "INTERNAL" and reply.exit_code != 0:  # the function ran and failed: what it answered
            context.set_trailing_metadata(((RESOURCE_LIST_KEY, reply.resource_list), (LOG_KEY, reply.log), (EXIT_CODE_KEY, str(reply.exit_code))))
        context.abort(getattr(grpc.StatusCode, reply.status), reply.message)


def serve(settings: Settings, listen: Listen, ready: threading.Event | None = None) -> int:
    """Serve until SIGTERM or SIGINT (to the main thread); 0 after a clean stop."""
    import grpc

    messages, services = wire.modules()
    health_servicer, health_messages, health_services = wire.health()
    creds = credentials(listen)
    registry = Registry()  # the server's for its life: the evaluator owns it from here
    _sweep_orphans(registry)
    # The pool's threads must not take the stop signals: the main thread waits for them below.
    stops.block()
    evaluator = Evaluator(settings, registry)
    try:
        calls = Calls(evaluator, _metrics(evaluator, listen.metrics))
        options = [("grpc.max_receive_message_length", listen.max_request), ("grpc.max_send_message_length", -1), ("grpc.so_reuseport", 0)]
        workers = max(8, settings.parallel * 4)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fnrun-call"), options=options)
        services.add_FunctionEvaluatorServicer_to_server(FunctionEvaluator(calls, messages), server)
        health = health_servicer.HealthServicer()
        health_services.add_HealthServicer_to_server(health, server)
        try:
            port = server.add_secure_port(listen.address, creds) if creds is not None else server.add_insecure_port(listen.address)
        except RuntimeError as err:
            raise EnvironmentProblem(f"--address {listen.address}: cannot listen there: {err}") from None
        if port == 0 and not listen.address.startswith("unix:"):
            raise EnvironmentProblem(f"--address {listen.address}: cannot listen there (in use, or not this machine's)")
        framed = _framed(listen, creds is not None, calls, workers + settings.queue)  # there by the time gRPC answers
        server.start()
        for name in ("", wire.SERVICE):
            health.set(name, health_messages.HealthCheckResponse.SERVING)
        print(f"fnrun serve: listening on {listen.address}{' (TLS)' if creds is not None else ''}", file=sys.stderr, flush=True)
        if ready is not None:
            ready.set()
        done = threading.Event()
        expiry = threading.Thread(target=_expire, args=(evaluator, done), name="fnrun-expire", daemon=True)
        expiry.start()
        signum = stops.wait()
        print(f"fnrun serve: {signal.Signals(signum).name}: draining calls for up to {listen.grace:g}s", file=sys.stderr, flush=True)
        done.set()
        health.enter_graceful_shutdown()
        if framed is not None:
            framed.stop()
        end = time.monotonic() + listen.grace + STOP_LIMIT / 2
        stopped = server.stop(listen.grace)
        stopped.wait(listen.grace + STOP_LIMIT / 2)
        if framed is not None:
            framed.wait(min(listen.grace, end - time.monotonic()))
        _remove_containers()
        print("fnrun serve: stopped", file=sys.stderr, flush=True)
        return 0
    finally:
        evaluator.close()


def _framed(listen: Listen, tls: bool, calls: Calls, connections: int) -> FramedListener | None:
    """fnrun's own framing beside gRPC on a plaintext unix socket (orchestrator.serve.framed); None
    elsewhere, or where its socket cannot be made (fnrun's clients then speak gRPC)."""
    path = frames.framed_path(listen.address) if not tls else None
    if path is None:
        return None
    from .framed import FramedListener

    try:
        framed = FramedListener(path, calls, listen.max_request, connections)
    except OSError as err:
        print(f"fnrun serve: warning: no framed socket ({err}); fnrun clients use gRPC", file=sys.stderr, flush=True)
        return None
    print(f"fnrun serve: fnrun clients' framed calls on {path}", file=sys.stderr, flush=True)
    return framed


def _metrics(evaluator: Evaluator, address: str | None) -> Metrics | None:
    """The counters, served at `address` from now on (None: not asked for)."""
    if address is None:
        return None
    from .metrics import Metrics

    pool = evaluator.pool
    metrics = Metrics(evaluator.waiting, lambda: pool.served if pool is not None else 0, lambda: pool.started if pool is not None else 0)
    metrics.listen(address)
    print(f"fnrun serve: metrics on http://{address}/metrics", file=sys.stderr, flush=True)
    return metrics


def _expire(evaluator: Evaluator, done: threading.Event) -> None:
    """Every so often, the warm containers idle for the TTL go."""
    every = min(30.0, max(0.05, evaluator.settings.idle_ttl / 4))
    while not done.wait(every):
        removed = evaluator.expire()
        if removed:
            print(f"fnrun serve: removed {removed} warm container(s) idle for {evaluator.settings.idle_ttl:g}s", file=sys.stderr, flush=True)


def _sweep_orphans(registry: Registry) -> None:
    """What an earlier server killed with SIGKILL left: its containers, by their owner labels."""
    from ..runtimes.container import orphans

    try:
        removed = orphans.sweep(registry.engine.api(), registry.engine.remove_quietly)
    except Exception as err:  # noqa: BLE001 - no engine yet is no reason not to serve builtins
        print(f"fnrun serve: warning: {err}; container calls answer UNAVAILABLE until the engine answers", file=sys.stderr, flush=True)
        return
    if removed:
        print(f"fnrun serve: removed {removed} container(s) gone fnrun processes left", file=sys.stderr, flush=True)


def _remove_containers() -> None:
    from ..runtimes.container import live

    live.cancel_all()
