"""One call as both transports answer it (gRPC for Porch and every gRPC client, fnrun's framing
on a local socket): the evaluation, its cancellation when the client goes away, the status that
says whose problem a refusal is, the operator's log line and the counters. A transport only
carries the request in and the `Reply` out, so a call means the same whichever way it came."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import EnvironmentProblem, FnrunError, FunctionError, ImageUnavailable
from ..runtimes.remote.frames import Reply
from .evaluate import Answer, Busy, Evaluator

if TYPE_CHECKING:
    from .metrics import Metrics

CANCELLED = "the client cancelled the call"


class Calls:
    """The server's one way to answer a call."""

    def __init__(self, evaluator: Evaluator, metrics: Metrics | None = None) -> None:
        self.evaluator = evaluator
        self.metrics = metrics

    def answer(self, resource_list: bytes, image: str, on_cancel: Callable[[Callable[[], None]], object]) -> Reply:
        """Evaluate; `on_cancel` is handed what cancels the call (its containers go at once), for the
        transport to call when the client goes away."""
        from ..runtimes.container import live

        started, size = time.monotonic(), len(resource_list)
        with live.call_scope() as scope:
            on_cancel(scope.cancel)  # a no-op once answered
            try:
                answer = self.evaluator.evaluate(resource_list, image)
            except (FnrunError, KeyboardInterrupt) as err:
                if scope.cancelled:
                    return self.refuse(image, started, size, "CANCELLED", CANCELLED)
                if isinstance(err, KeyboardInterrupt):
                    raise
                return self.refuse(image, started, size, status_of(err), str(err))
            if scope.cancelled:  # its container went under it: whatever it answered is not the function's
                return self.refuse(image, started, size, "CANCELLED", CANCELLED)
        outcome = "ok" if answer.exit_code == 0 else "failed"
        self._done(answer.image, started, f"exit {answer.exit_code}", outcome, size, len(answer.resource_list), answer)
        if answer.exit_code != 0:
            return Reply("INTERNAL", failure(answer), answer.resource_list, answer.log, answer.exit_code)
        return Reply("OK", "", answer.resource_list, answer.log)

    def refuse(self, image: str, started: float, size: int, status: str, message: str) -> Reply:
        """A call answered with a refusal (logged and counted as its status)."""
        self._done(image, started, status, status, size, 0)
        return Reply(status, message)

    def _done(self, image: str, started: float, said: str, outcome: str, bytes_in: int, bytes_out: int, answer: Answer | None = None) -> None:
        seconds = time.monotonic() - started
        log_line(image, seconds, said, bytes_in, bytes_out, answer)
        if self.metrics is not None:
            self.metrics.record(outcome, seconds, bytes_in, bytes_out)


def status_of(err: FnrunError) -> str:
    """The status (gRPC's code name) that says whose problem `err` is, by its type, never its text."""
    if isinstance(err, Busy):
        return "RESOURCE_EXHAUSTED"
    if isinstance(err, ImageUnavailable):
        return "NOT_FOUND"
    if isinstance(err, EnvironmentProblem):
        return "UNAVAILABLE"
    if isinstance(err, FunctionError):
        return "INTERNAL"
    return "INVALID_ARGUMENT"


def failure(answer: Answer) -> str:
    """The status message of a failed function: its exit code and the end of its stderr."""
    tail = answer.log.decode(errors="replace").strip()[-2000:]
    return f"function {answer.image} failed with exit code {answer.exit_code}" + (f": {tail}" if tail else "")


def log_line(image: str, seconds: float, outcome: str, bytes_in: int, bytes_out: int, answer: Answer | None = None) -> None:
    """One line per call for the operator: image, duration, outcome, bytes in and out."""
    how = " (builtin)" if answer is not None and answer.builtin else " (cached)" if answer is not None and answer.cached else ""
    print(f"fnrun serve: {image} {seconds * 1000:.0f}ms {outcome}{how} in={bytes_in} out={bytes_out}", file=sys.stderr, flush=True)
