"""The gRPC code fnrun ships (orchestrator/prebuilt.py generates it from evaluator.proto when the
package is built, and for this checkout): a client or server imports it instead of compiling the
.proto at start, and it is exactly what grpcio-tools makes of the .proto now."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator import prebuilt
from testing.pipeline_helpers import REPO


def test_wire_loads_the_generated_modules_without_the_proto_compiler() -> None:
    probe = ("import sys; from orchestrator.runtimes.remote import wire\n"
             "messages, services = wire.modules()\n"
             "print(messages.__name__, services.__name__, 'grpc_tools.protoc' in sys.modules)\n"
             "print(messages.EvaluateFunctionRequest(resource_list=b'x', image='i').SerializeToString().hex())")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    names, encoded = done.stdout.splitlines()
    assert names == "orchestrator.runtimes.remote.evaluator_pb2 orchestrator.runtimes.remote.evaluator_pb2_grpc False"
    assert encoded == "0a0178" + "120169", "field 1 bytes, field 2 string: Porch's numbers"


def test_the_checkout_s_generated_code_is_what_the_proto_gives_now(tmp_path: Path) -> None:
    prebuilt.generate_protos(tmp_path)
    for name in prebuilt.PROTO_MODULES:
        made = tmp_path / "orchestrator" / "runtimes" / "remote" / name
        assert made.read_bytes() == (prebuilt.PROTO.parent / name).read_bytes(), f"{name} is stale: run `python -m orchestrator.prebuilt`"
