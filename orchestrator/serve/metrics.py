"""The server's counters for an operator, in Prometheus' text format on `--metrics HOST:PORT`
(prometheus-client, the maintained exporter; off unless asked for). A registry of the server's
own, so nothing else the process might register is exposed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import EnvironmentProblem

#: Seconds buckets: builtins answer in milliseconds, warm calls in tens of them, cold ones in seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    """Calls by outcome, their durations, warm containers' work and the waiting list."""

    def __init__(self, waiting: Callable[[], int], warm_calls: Callable[[], int], warm_started: Callable[[], int]) -> None:
        try:
            from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        except ImportError:
            raise EnvironmentProblem("--metrics needs prometheus-client: pip install 'fnrun[serve]'") from None
        self.registry = CollectorRegistry()
        self.calls = Counter("fnrun_serve_calls", "Calls answered, by outcome (ok, failed: the function, or the status code's name).",
                             ["outcome"], registry=self.registry)
        self.seconds = Histogram("fnrun_serve_call_seconds", "How long calls took, from request to answer.",
                                 buckets=BUCKETS, registry=self.registry)
        self.bytes_in = Counter("fnrun_serve_request_bytes", "ResourceList bytes received.", registry=self.registry)
        self.bytes_out = Counter("fnrun_serve_response_bytes", "ResourceList bytes answered.", registry=self.registry)
        Gauge("fnrun_serve_waiting_calls", "Calls waiting for a container of their image now.",
              registry=self.registry).set_function(lambda: float(waiting()))
        Gauge("fnrun_serve_warm_calls", "Calls that ran in a warm container since the start (a warm hit each).",
              registry=self.registry).set_function(lambda: float(warm_calls()))
        Gauge("fnrun_serve_warm_containers_started", "Warm containers started since the start.",
              registry=self.registry).set_function(lambda: float(warm_started()))

    def record(self, outcome: str, seconds: float, bytes_in: int, bytes_out: int) -> None:
        self.calls.labels(outcome).inc()
        self.seconds.observe(seconds)
        self.bytes_in.inc(bytes_in)
        self.bytes_out.inc(bytes_out)

    def listen(self, address: str) -> Any:
        """Serve /metrics at HOST:PORT in a thread of its own; the server to shut down at the stop."""
        from prometheus_client import start_http_server

        host, _, port = address.rpartition(":")
        try:
            server, _thread = start_http_server(int(port), addr=host.strip("[]") or "127.0.0.1", registry=self.registry)
        except (OSError, ValueError) as err:
            raise EnvironmentProblem(f"--metrics {address}: cannot listen there: {err}") from None
        return server
