"""`fnrun serve`: an edge beside the CLI that evaluates functions for other programs over gRPC
(Porch's function-runner contract, evaluator.proto). Below it nothing knows it exists: a call goes
through the same runtime registry, sandbox and result cache as `fnrun run`.

- `wire`: the messages and services, generated from evaluator.proto at start.
- `evaluate`: one call, bytes and an image in, the function's answer or a typed refusal out.
- `server`: listening (loopback, unix socket, TLS), status codes, the operator's log, the stop."""
