"""The spec's process contract in one place: ResourceList on stdin, on stdout, messages on stderr, and
the exit code (0 ok; 1 for a bad input or config, or when an error-severity result was reported)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, Protocol, TextIO

from .config import Error, load_config
from .resourcelist import ResourceList

Function = Callable[..., Any]  # fn(resource_list) or fn(resource_list, config)


class Transport(Protocol):
    """Where `main` gets its input and puts its output, when not as text on stdin and stdout."""

    def read(self) -> ResourceList: ...
    def write(self, resource_list: ResourceList) -> None: ...


#: Set by a host that already holds the input parsed (fnrun runs its catalog in a fork of
#: itself: orchestrator.runtimes.host.handover): `main` then runs the same function over that data,
#: without parsing or writing YAML. Everything else (config, errors, exit code) is unchanged.
transport: Transport | None = None

#: The function and config class of the last `main` call. A host that runs a module's main block
#: once with a transport that stops at `read` learns them, and can then `run` them directly.
entry: tuple[Function, type | None] | None = None


def process(text: str, fn: Function, config: type | None = None) -> ResourceList:
    """Parse, load the typed config, apply `fn`; the library form of `run` (raises sdk.Error)."""
    return apply(ResourceList.parse(text), fn, config)


def apply(resource_list: ResourceList, fn: Function, config: type | None = None) -> ResourceList:
    """Load the typed config and apply `fn` to a list already read."""
    if config is None:
        fn(resource_list)
    else:
        fn(resource_list, load_config(resource_list.function_config, config))
    return resource_list


def run(fn: Function, config: type | None = None, *, stdin: TextIO | None = None,
        stdout: TextIO | None = None, stderr: TextIO | None = None, prog: str | None = None,
        via: Transport | None = None) -> int:
    """Run `fn` as a KRM function over stdin (or `via` a host's transport); return the exit code."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    prog = prog or Path(sys.argv[0]).stem.replace("_", "-") or "function"
    try:
        resource_list = apply(via.read() if via is not None else ResourceList.parse(stdin.read()), fn, config)
    except Error as err:
        print(f"{prog}: {err}", file=stderr)
        return 1
    if via is not None:
        via.write(resource_list)
    else:
        for part in resource_list.dump_parts():  # as they come: the reader parses while the rest is dumped
            stdout.write(part)
    if resource_list.shape != "ResourceList":
        for result in resource_list.results:
            print(f"{prog}: {result.to_line()}", file=stderr)
    return 1 if resource_list.has_errors else 0


def main(fn: Function, config: type | None = None) -> NoReturn:
    """`if __name__ == "__main__": main(fn, Config)` — run over the process's stdin and exit."""
    global entry
    entry = (fn, config)
    if transport is None:
        for stream in (sys.stdin, sys.stdout):
            if isinstance(stream, io.TextIOWrapper):  # the process's own (a test may hand in another)
                stream.reconfigure(encoding="utf-8")
        # The YAML parser's imports (most of a small call's time) happen before stdin is read: a
        # process started ahead of its turn (a pre-started or warm container) has them done by then.
        from .resourcelist import new_yaml

        new_yaml().load("{}")
    sys.exit(run(fn, config, via=transport))
