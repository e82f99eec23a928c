"""The gRPC messages and services of evaluator.proto, the one source of the wire contract.

Their code is generated when the package is built (`evaluator_pb2.py`, `evaluator_pb2_grpc.py`,
written by orchestrator/prebuilt.py, never kept in the repository), so a call imports
two small modules instead of compiling the .proto with grpcio-tools at every start. A checkout
that was never set up has no generated files: there the .proto is compiled at first need, as
before, which needs grpcio-tools (the `serve` extra) and costs its import and a compile.

grpcio is the `serve` extra (`pip install 'fnrun[serve]'`); without it `fnrun serve` says so in
one line instead of failing on an import."""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from ...errors import EnvironmentProblem

PROTO = "orchestrator/runtimes/remote/evaluator.proto"  # its import name: found on sys.path, as grpc_tools resolves imports
SERVICE = "evaluator.FunctionEvaluator"
GENERATED = (f"{__package__}.evaluator_pb2", f"{__package__}.evaluator_pb2_grpc")
REMEDY = "python -m orchestrator.prebuilt"  # what writes them into a checkout (.ci/setup runs it)


@lru_cache(maxsize=1)
def modules() -> tuple[ModuleType, ModuleType]:
    """(messages, services) of evaluator.proto."""
    try:
        import grpc
    except ImportError:
        raise EnvironmentProblem("fnrun serve needs grpcio: pip install 'fnrun[serve]'") from None
    if find_spec(GENERATED[0]) is not None and find_spec(GENERATED[1]) is not None:
        try:
            return import_module(GENERATED[0]), import_module(GENERATED[1])
        except (ImportError, RuntimeError) as err:  # generated for a newer grpcio or protobuf than installed
            raise EnvironmentProblem(f"the gRPC code generated from {PROTO} does not load: {_first_line(err)}") from None
    try:
        return grpc.protos_and_services(PROTO)
    except (ImportError, NotImplementedError):
        raise EnvironmentProblem(f"no gRPC code generated from {PROTO}: run `{REMEDY}` (it needs grpcio-tools)") from None


def health() -> tuple[ModuleType, ModuleType, ModuleType]:
    """grpc.health.v1: (the servicer module, its messages, its services)."""
    try:
        from grpc_health.v1 import health as servicer, health_pb2, health_pb2_grpc
    except ImportError:
        raise EnvironmentProblem("fnrun serve needs grpcio-health-checking: pip install 'fnrun[serve]'") from None
    return servicer, health_pb2, health_pb2_grpc


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
