"""The spec's process contract in one place: ResourceList on stdin, on stdout, messages on stderr, and
the exit code (0 ok; 1 for a bad input or config, or when an error-severity result was reported)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, TextIO

from .config import Error, load_config
from .resourcelist import ResourceList

Function = Callable[..., Any]  # fn(resource_list) or fn(resource_list, config)


def process(text: str, fn: Function, config: type | None = None) -> ResourceList:
    """Parse, load the typed config, apply `fn`; the library form of `run` (raises sdk.Error)."""
    resource_list = ResourceList.parse(text)
    if config is None:
        fn(resource_list)
    else:
        fn(resource_list, load_config(resource_list.function_config, config))
    return resource_list


def run(fn: Function, config: type | None = None, *, stdin: TextIO | None = None,
        stdout: TextIO | None = None, stderr: TextIO | None = None, prog: str | None = None) -> int:
    """Run `fn` as a KRM function over stdin; return the exit code."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    prog = prog or Path(sys.argv[0]).stem.replace("_", "-") or "function"
    try:
        resource_list = process(stdin.read(), fn, config)
    except Error as err:
        print(f"{prog}: {err}", file=stderr)
        return 1
    stdout.write(resource_list.dump())
    if resource_list.shape != "ResourceList":
        for result in resource_list.results:
            print(f"{prog}: {result.to_line()}", file=stderr)
    return 1 if resource_list.has_errors else 0


def main(fn: Function, config: type | None = None) -> NoReturn:
    """`if __name__ == "__main__": main(fn, Config)` — run over the process's stdin and exit."""
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    sys.exit(run(fn, config))
