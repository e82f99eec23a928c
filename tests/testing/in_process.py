"""fnrun's command line without starting a new interpreter, for a test whose subject is what a
command does (what it reads, writes and says), not how fnrun starts, stops or meets signals: the
test's process, which has fnrun imported, forks, and the child runs the CLI function the launcher
ends in (orchestrator.entry.main: `wrap` and `xargs` by themselves, the rest through the typer
app) with the arguments, standard input, working directory and
environment a started fnrun would have; its exit code, stdout and stderr come back as
`pipeline_helpers.fnrun` gives them. It saves the start of an interpreter and the import of fnrun
(a quarter of a second each on a small machine), and, being a child, leaves nothing of the run
in the test's process (no memory grown, no process-wide state). tests/test_in_process.py holds
the two side by side on the same commands.

Not for a test of the process's edge (the launcher, signals, stdin a pipe or a terminal): those
start fnrun as users do. `script_here` does the same for a script run as `__main__` (a catalog
function as an exec function runs). The module imports nothing else of the suite's, so a test
re-run without the suite's conftest (under another ruamel.yaml, tests/functions/test_sdk.py)
can import it as `tests.testing.in_process`."""

from __future__ import annotations

import gc
import os
import pickle
import runpy
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Result:
    """A command's exit code, stdout and stderr (as text)."""

    code: int
    stdout: str
    stderr: str


def fnrun_here(*args: str, stdin: str | None = None, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """`fnrun ARGS` run by a fork of this process; stdout and stderr decoded as
    `subprocess.run(text=True)` decodes a child's (UTF-8, line ends made `\\n`)."""
    code, out, err = run_here(list(args), (stdin or "").encode(), cwd, env)
    return Result(code, _text(out), _text(err))


def run_here(args: list[str], stdin: bytes = b"", cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """`fnrun ARGS` run by a fork of this process: its exit code, stdout and stderr as bytes."""
    import orchestrator.cli
    import orchestrator.wrap  # noqa: F401 - both imported once, here, so each child starts with them

    def cli() -> int:
        from orchestrator.entry import main

        main(args)  # ends in SystemExit, with the command's code
        return 1

    return _forked(cli, stdin, cwd, env or {})


def script_here(path: Path, *args: str, stdin: str = "", cwd: Path | None = None) -> Result:
    """`python PATH ARGS` (a script run as `__main__`, as an exec function is) by a fork of this
    process, which has the script's imports done; decoded as `fnrun_here` decodes."""
    def script() -> int:
        sys.argv = [str(path), *args]
        runpy.run_path(str(path), run_name="__main__")
        return 0

    code, out, err = _forked(script, stdin.encode(), cwd, {})
    return Result(code, _text(out), _text(err))


def _forked(main: Callable[[], int], stdin: bytes, cwd: Path | None, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        given.write(stdin)
        given.seek(0)
        sys.stdout.flush()
        sys.stderr.flush()
        gc.freeze()  # the child shares the test process's pages instead of touching them all
        pid = os.fork()
        if pid == 0:
            _child(main, given.fileno(), out.fileno(), err.fileno(), cwd, env)
        gc.unfreeze()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return code, out.read(), err.read()


def _child(main: Callable[[], int], stdin: int, stdout: int, stderr: int, cwd: Path | None, env: dict[str, str]) -> None:
    """Run `main` on the given descriptors and exit with its code; never returns into the test."""
    code = 1
    try:
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main()
        except SystemExit as exit:  # as the interpreter ends on it: a code, none (0), or a message (1)
            if exit.code is None or isinstance(exit.code, int):
                code = exit.code or 0
            else:
                print(exit.code, file=sys.stderr)
                code = 1
    except BaseException:  # noqa: BLE001 - as an uncaught error ends a started process: its traceback, exit 1
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _text(data: bytes) -> str:
    import io

    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read()


def in_a_fork(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """`function(*args, **kwargs)` called in a fork of this process, its value pickled back; an
    exception there fails here with the fork's traceback. For a test that needs this process as
    it would be alone (one thread: a fork copies only the thread that forked), or that uses a
    module which would leave threads of its own here (starlark-go's import starts the Go
    runtime's)."""
    with tempfile.TemporaryFile() as answer:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                try:
                    outcome: tuple[bool, object] = (True, function(*args, **kwargs))
                except BaseException:  # noqa: BLE001 - carried to the test as its failure
                    outcome = (False, traceback.format_exc())
                pickle.dump(outcome, answer)
                answer.flush()
                code = 0
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        answer.seek(0)
        data = answer.read()
    if os.waitstatus_to_exitcode(status) != 0 or not data:
        raise AssertionError(f"the fork ended with status {os.waitstatus_to_exitcode(status)} before it answered")
    done, value = pickle.loads(data)
    if not done:
        raise AssertionError(f"in a fork of the test process:\n{value}")
    return value  # type: ignore[no-any-return]
