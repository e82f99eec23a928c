"""The gRPC messages and services, generated from evaluator.proto when the server (or a client)
first needs them: no generated code is kept in the repository, so the .proto is the one source.

grpcio and grpcio-tools are the `serve` extra (`pip install 'fnrun[serve]'`); without them `fnrun
serve` says so in one line instead of failing on an import."""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType

from ...errors import EnvironmentProblem

PROTO = "orchestrator/runtimes/remote/evaluator.proto"  # found on sys.path, as grpc_tools resolves imports
SERVICE = "evaluator.FunctionEvaluator"


@lru_cache(maxsize=1)
def modules() -> tuple[ModuleType, ModuleType]:
    """(messages, services) of evaluator.proto."""
    try:
        import grpc
    except ImportError:
        raise EnvironmentProblem("fnrun serve needs grpcio: pip install 'fnrun[serve]'") from None
    try:
        return grpc.protos_and_services(PROTO)
    except (ImportError, NotImplementedError):
        raise EnvironmentProblem("fnrun serve needs grpcio-tools to read its .proto: pip install 'fnrun[serve]'") from None


def health() -> tuple[ModuleType, ModuleType, ModuleType]:
    """grpc.health.v1: (the servicer module, its messages, its services)."""
    try:
        from grpc_health.v1 import health as servicer, health_pb2, health_pb2_grpc
    except ImportError:
        raise EnvironmentProblem("fnrun serve needs grpcio-health-checking: pip install 'fnrun[serve]'") from None
    return servicer, health_pb2, health_pb2_grpc
