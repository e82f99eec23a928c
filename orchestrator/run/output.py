"""A function's output decoded: the one decoder the pipeline calls, and the one place that
chooses how.

A function's output reaches fnrun one of three ways, and `OutputDecoder.decode` takes the
fastest that applies, in this order:

- handed over: a runtime that took the items as fnrun holds them (`Runtime.run_items`) gives
  back items and results (`ItemsOutput`): there is no text to decode;
- streamed: a runtime that streams stdout (`Runtime.streams_stdout`) fed it, while the function
  still wrote it, to `run/streamed.py`, which cut and parsed the items on a thread; what that
  decoded stands when it covers the whole output in fnrun's layout;
- whole: anything else is decoded once all of it is there (`resourcelist.decode`: a big list in
  fnrun's layout is cut into items and parsed on every core, any other list or stream the general
  way), with the usual errors.

Each way gives the same `Decoded` for the same output."""

from __future__ import annotations

from ..errors import FunctionError, InputError
from ..runtimes import ItemsOutput, RunOutput, Runtime
from ..runtimes.protocol import StdoutSink
from ..yamlio import fast
from . import resourcelist
from .resourcelist import Decoded
from .streamed import StreamedDecode


class OutputDecoder:
    """One function run's output (a context: a streamed decode still running is stopped on exit)."""

    def __init__(self, name: str, workers: int | None = None) -> None:
        """`workers`: FNRUN_WORKERS as the edge read it (None: a big output is parsed on every core)."""
        self.name = name
        self.source = f"output of {name}"
        self.workers = workers
        self._streamed = StreamedDecode(self.source, workers)

    def sink(self, runtime: Runtime) -> StdoutSink | None:
        """What `runtime.run` is handed as `on_stdout`: the streamed decode, if the runtime streams."""
        return self._streamed.feed if runtime.streams_stdout else None

    def decode(self, output: RunOutput) -> Decoded | None:
        """The function's items, config and results; None when a failed function (non-zero exit)
        left nothing that decodes, for the caller to report its exit code. Raises FunctionError
        when a function that exited 0 wrote no ResourceList or an invalid one."""
        if isinstance(output, ItemsOutput) and output.items is not None:
            return Decoded(output.items, results=output.results)
        streamed = self._streamed.result()
        if streamed is not None:
            return streamed
        return self._whole(output.stdout, output.exit_code)

    def _whole(self, stdout: bytes, exit_code: int) -> Decoded | None:
        if not stdout.strip():
            if exit_code != 0:
                return None
            raise FunctionError(f"function {self.name} wrote nothing on stdout (expected a ResourceList)")
        try:
            return resourcelist.decode(fast.decode(stdout, self.source), self.source, self.workers)
        except InputError as err:
            if exit_code != 0:
                return None
            raise FunctionError(f"function {self.name} returned invalid output: {err}") from None

    def close(self) -> None:
        self._streamed.close()

    def __enter__(self) -> OutputDecoder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
