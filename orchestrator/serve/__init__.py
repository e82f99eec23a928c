"""`fnrun serve`: an edge beside the CLI that evaluates functions for other programs over gRPC
(Porch's function-runner contract, evaluator.proto). Below it nothing knows it exists: a call goes
through the same runtime registry, sandbox and result cache as `fnrun run`.

- `wire`: the messages and services, generated from evaluator.proto at start.
- `evaluate`: one call, bytes and an image in, the function's answer or a typed refusal out.
- `calls`: one call as every transport answers it: cancellation, status, the log line, the counters.
- `server`: listening (loopback, unix socket, TLS), the gRPC service, the stop.
- `framed`: fnrun's own framing beside gRPC on a unix socket, for clients that import no grpcio."""
