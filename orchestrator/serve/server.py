"""`fnrun serve`: Porch's function-runner service over fnrun's runtimes, until SIGTERM or Ctrl-C.

Each call runs on a thread of the server's pool through orchestrator.serve.evaluate; the answer's
status says whose problem a refusal is: INVALID_ARGUMENT (the request), NOT_FOUND (no builtin has
the image and the engine neither holds nor can pull it; porch-server, which asks its own builtins
first, fails that render), RESOURCE_EXHAUSTED (too many calls waiting, or a
request over the size limit), UNAVAILABLE (the engine), INTERNAL (the function failed: its
ResourceList with its results, its stderr and its exit code travel in the trailing metadata,
`resource-list-bin`, `log-bin` and `exit-code`: orchestrator.runtimes.remote reads them). A stop drains the calls under way for the grace period, then removes every
container still running and ends."""

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

from ..errors import EnvironmentProblem, FnrunError, FunctionError, ImageUnavailable, InputError
from ..runtimes.remote import EXIT_CODE_KEY, LOG_KEY, RESOURCE_LIST_KEY, wire
from ..stops import STOPS
from .evaluate import Answer, Busy, Evaluator, Settings

if TYPE_CHECKING:
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

    def read(path: Path, flag: str) -> bytes:
        try:
            return path.read_bytes()
        except OSError as err:
            raise InputError(f"{flag} {path}: cannot read it: {err.strerror}") from None

    pair = [(read(listen.tls_key, "--tls-key"), read(listen.tls_cert, "--tls-cert"))]
    if listen.client_ca is None:
        return grpc.ssl_server_credentials(pair)
    return grpc.ssl_server_credentials(pair, root_certificates=read(listen.client_ca, "--client-ca"), require_client_auth=True)


class FunctionEvaluator:
    """The servicer: one method, EvaluateFunction."""

    def __init__(self, evaluator: Evaluator, messages: Any, metrics: Metrics | None = None) -> None:
        self.evaluator = evaluator
        self.messages = messages
        self.metrics = metrics

    def EvaluateFunction(self, request: Any, context: Any) -> Any:  # the service's name for it
        import grpc

        from ..runtimes.container import live

        started = time.monotonic()
        image, size = request.image, len(request.resource_list)
        with live.call_scope() as scope:
            context.add_callback(scope.cancel)  # the client went away: its containers go now (a no-op once answered)
            try:
                answer = self.evaluator.evaluate(request.resource_list, image)
            except (FnrunError, KeyboardInterrupt) as err:
                if not scope.cancelled and isinstance(err, KeyboardInterrupt):
                    raise
                code = grpc.StatusCode.CANCELLED if scope.cancelled else status_of(err)  # type: ignore[arg-type]
                self._done(image, started, code.name, code.name, size, 0)
                context.abort(code, "the client cancelled the call" if scope.cancelled else str(err))
            if scope.cancelled:  # its container went under it: whatever it answered is not the function's
                self._done(image, started, "CANCELLED", "CANCELLED", size, 0)
                context.abort(grpc.StatusCode.CANCELLED, "the client cancelled the call")
        outcome = "ok" if answer.exit_code == 0 else "failed"
        self._done(answer.image, started, f"exit {answer.exit_code}", outcome, size, len(answer.resource_list), answer)
        if answer.exit_code != 0:
            context.set_trailing_metadata(((RESOURCE_LIST_KEY, answer.resource_list), (LOG_KEY, answer.log), (EXIT_CODE_KEY, str(answer.exit_code))))
            context.abort(grpc.StatusCode.INTERNAL, failure(answer))
        return self.messages.EvaluateFunctionResponse(resource_list=answer.resource_list, log=answer.log)


    def _done(self, image: str, started: float, said: str, outcome: str, bytes_in: int, bytes_out: int, answer: Answer | None = None) -> None:
        seconds = time.monotonic() - started
        log_line(image, seconds, said, bytes_in, bytes_out, answer)
        if self.metrics is not None:
            self.metrics.record(outcome, seconds, bytes_in, bytes_out)


def status_of(err: FnrunError) -> Any:
    """The status code that says whose problem `err` is (by its type, never its text)."""
    import grpc

    if isinstance(err, Busy):
        return grpc.StatusCode.RESOURCE_EXHAUSTED
    if isinstance(err, ImageUnavailable):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(err, EnvironmentProblem):
        return grpc.StatusCode.UNAVAILABLE
    if isinstance(err, FunctionError):
        return grpc.StatusCode.INTERNAL
    return grpc.StatusCode.INVALID_ARGUMENT


def failure(answer: Answer) -> str:
    """The status message of a failed function: its exit code and the end of its stderr."""
    tail = answer.log.decode(errors="replace").strip()[-2000:]
    return f"function {answer.image} failed with exit code {answer.exit_code}" + (f": {tail}" if tail else "")


def log_line(image: str, seconds: float, outcome: str, bytes_in: int, bytes_out: int, answer: Answer | None = None) -> None:
    """One line per call for the operator: image, duration, outcome, bytes in and out."""
    how = " (builtin)" if answer is not None and answer.builtin else " (cached)" if answer is not None and answer.cached else ""
    print(f"fnrun serve: {image} {seconds * 1000:.0f}ms {outcome}{how} in={bytes_in} out={bytes_out}", file=sys.stderr, flush=True)


def serve(settings: Settings, listen: Listen, ready: threading.Event | None = None) -> int:
    """Serve until SIGTERM or SIGINT (to the main thread); 0 after a clean stop."""
    import grpc

    messages, services = wire.modules()
    health_servicer, health_messages, health_services = wire.health()
    creds = credentials(listen)
    _sweep_orphans()
    # The pool's threads must not take the stop signals: the main thread waits for them below.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    evaluator = Evaluator(settings)
    metrics = _metrics(evaluator, listen.metrics)
    options = [("grpc.max_receive_message_length", listen.max_request), ("grpc.max_send_message_length", -1), ("grpc.so_reuseport", 0)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max(8, settings.parallel * 4), thread_name_prefix="fnrun-call"), options=options)
    services.add_FunctionEvaluatorServicer_to_server(FunctionEvaluator(evaluator, messages, metrics), server)
    health = health_servicer.HealthServicer()
    health_services.add_HealthServicer_to_server(health, server)
    try:
        port = server.add_secure_port(listen.address, creds) if creds is not None else server.add_insecure_port(listen.address)
    except RuntimeError as err:
        raise EnvironmentProblem(f"--address {listen.address}: cannot listen there: {err}") from None
    if port == 0 and not listen.address.startswith("unix:"):
        raise EnvironmentProblem(f"--address {listen.address}: cannot listen there (in use, or not this machine's)")
    server.start()
    for name in ("", wire.SERVICE):
        health.set(name, health_messages.HealthCheckResponse.SERVING)
    print(f"fnrun serve: listening on {listen.address}{' (TLS)' if creds is not None else ''}", file=sys.stderr, flush=True)
    if ready is not None:
        ready.set()
    done = threading.Event()
    expiry = threading.Thread(target=_expire, args=(evaluator, done), name="fnrun-expire", daemon=True)
    expiry.start()
    signum = signal.sigwait(STOPS)
    print(f"fnrun serve: {signal.Signals(signum).name}: draining calls for up to {listen.grace:g}s", file=sys.stderr, flush=True)
    done.set()
    health.enter_graceful_shutdown()
    stopped = server.stop(listen.grace)
    stopped.wait(listen.grace + STOP_LIMIT / 2)
    _remove_containers()
    evaluator.close()
    print("fnrun serve: stopped", file=sys.stderr, flush=True)
    return 0


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


def _sweep_orphans() -> None:
    """What an earlier server killed with SIGKILL left: its containers, by their owner labels."""
    from ..runtimes.container import orphans
    from ..runtimes.container.runtime import api_client, remove_quietly

    try:
        removed = orphans.sweep(api_client(), remove_quietly)
    except Exception as err:  # noqa: BLE001 - no engine yet is no reason not to serve builtins
        print(f"fnrun serve: warning: {err}; container calls answer UNAVAILABLE until the engine answers", file=sys.stderr, flush=True)
        return
    if removed:
        print(f"fnrun serve: removed {removed} container(s) gone fnrun processes left", file=sys.stderr, flush=True)


def _remove_containers() -> None:
    from ..runtimes.container import live

    live.cancel_all()
