"""fnrun's end of a warm container's call protocol: the container's attach stream, held for its
whole life, carries every call to its PID 1 (fnrun-warm.c `serve`) and the function's answers back.

Why not the engine's exec: each exec is a create, an attach, a runc exec and a wait through the
engine, ~60 ms of CPU on a 2-core machine before the function's own process even starts; over the
stream a call is one frame out, a fork and exec in the container, and frames back. The frames
(fnrun-warm.c describes them) carry stdin, stdout, stderr and the exit code; the output cap, the
timeout and the stderr lines are the cold path's own (supervise.streams).
"""

from __future__ import annotations

import selectors
import struct
import time
from collections.abc import Callable

from functions import forkwire
from orchestrator.errors import FunctionError
from orchestrator.runtimes.container.runtime import Attached, timed_out
from orchestrator.runtimes.protocol import Invocation, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.streams import (
    BoundedOutput,
    FrameDemux,
    FrameSplitter,
    LineSplitter,
    OutputTooLarge,
    pump,
    too_large,
)

_HEAD = struct.Struct(">cL")
PIECE = 65536  # stdin goes in frames of at most this (the helper holds one at a time)
SEND_TIMEOUT = 30.0


class NotClean(Exception):
    """The warm container could not serve the call as a cold one would; the function did not run."""


def frames(kind: bytes, data: bytes) -> bytes:
    """`data` as frames of `kind`, none longer than PIECE."""
    view = memoryview(data)
    return b"".join(_HEAD.pack(kind, len(view[at:at + PIECE])) + view[at:at + PIECE] for at in range(0, len(view), PIECE))


def start_frame(argv: tuple[str, ...], env: dict[str, str], zygote: tuple[str, ...] = ()) -> bytes:
    """The `S` frame: a fork-server request body (functions/forkwire.py) whose third group is the
    image fork server's command; the helper cuts that off and relays the rest to that server."""
    try:
        payload = forkwire.pack(argv, env, zygote)
    except forkwire.WireError as err:
        raise NotClean(f"a warm call cannot carry this call: {err}") from None
    return _HEAD.pack(b"S", len(payload)) + payload


class Channel:
    """One warm container's attach stream, used by one call at a time."""

    def __init__(self, attached: Attached) -> None:
        self.attached = attached
        self._server = LineSplitter(None)  # the helper's own stderr: what it says when it cannot serve at all
        # the helper's frames; the current call adds where its stdout and stderr go (converse)
        self._sinks: dict[object, Callable[[bytes], None]] = {b"X": self._exited, b"N": self._refusal, b"U": self._unfit}
        self._demux = FrameDemux(FrameSplitter(_HEAD, self._sinks).feed, self._server.feed)
        self._code: int | None = None
        self._refused: str | None = None
        #: why the container may serve no further call, though this one ran ('U': something the call
        #: started outlives it); the container is then discarded, the call's result kept
        self.unfit: str | None = None

    def start(self, argv: tuple[str, ...], env: dict[str, str], zygote: tuple[str, ...] = ()) -> None:
        """Have the helper clean the container and start the function (forked by `zygote`, the
        image's fork server, when given), which then waits for its stdin (its turn may come
        later: warm.spawn)."""
        frame = start_frame(argv, env, zygote)
        stream = self.attached.stream
        deadline = time.monotonic() + SEND_TIMEOUT
        view = memoryview(frame)
        with selectors.DefaultSelector() as selector:
            selector.register(stream.write_fd, selectors.EVENT_WRITE)
            while view:
                if not selector.select(deadline - time.monotonic()):
                    raise NotClean("the container took no call")
                try:
                    view = view[stream.send(view):]
                except BlockingIOError:
                    continue
                except OSError as err:
                    raise NotClean(f"the container's stream broke: {err}") from None

    def converse(self, inv: Invocation, stdin: bytes, on_stderr: StderrSink | None,
                 on_stdout: StdoutSink | None) -> tuple[bytes, str, int]:
        """Feed the started function `stdin`, collect its output and exit code; the timeout counts
        from here, as for a cold container started ahead."""
        out = BoundedOutput(inv.sandbox.max_output)
        err = LineSplitter(on_stderr)
        self._sinks.update({b"O": out.feed if on_stdout is None else out.tee(on_stdout), b"E": err.feed})
        self._code = self._refused = None
        stream = self.attached.stream
        deadline = time.monotonic() + inv.sandbox.timeout if inv.sandbox.timeout else None
        try:
            finished = pump(stream.write_fd, frames(b"I", stdin) + _HEAD.pack(b"C", 0), stream.send, lambda: None,
                            {stream.fd: self._demux.feed}, deadline, {stream.fd: stream.recv} if stream.recv else None,
                            until=lambda: self._code is not None or self._refused is not None)
        except OutputTooLarge as cap:
            raise too_large(inv.name, cap.limit) from None
        finally:
            del self._sinks[b"O"], self._sinks[b"E"]
        if not finished:
            raise timed_out(inv)
        if self._refused is not None and self._code is None:
            raise NotClean(self._refused)
        if self._code is None:
            said = self._server.close().strip()
            if not out.value() and not err.close():
                raise NotClean(f"the container ended{': ' + said if said else ''}")
            raise FunctionError(f"function {inv.name}: its warm container ended during the call{': ' + said if said else ''}")
        return out.value(), err.close(), self._code

    def _exited(self, body: bytes) -> None:
        self._code = struct.unpack(">L", body)[0]

    def _unfit(self, body: bytes) -> None:
        self.unfit = body.decode("utf-8", "replace")

    def _refusal(self, body: bytes) -> None:
        self._refused = body.decode("utf-8", "replace")

    def close(self) -> None:
        self.attached.close()
