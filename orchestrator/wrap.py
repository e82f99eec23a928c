"""`fnrun wrap -- CMD [ARGS...]` and `fnrun xargs -- CMD [ARGS...]`: a shell template as a KRM function.

Runs inside function images on every call, so this path imports no CLI framework and no Docker
SDK (`entry` routes here before `cli` is imported). What it does, and the choices made where
the spec leaves room:

1. Read the ResourceList on stdin (a `kind: List` or a plain stream works too; empty stdin is an
   empty list with no functionConfig).
2. Export the functionConfig as environment variables (`envvars` has the naming rules: NAME,
   NAMESPACE, scalars under spec/data with camelCase split) on top of fnrun's own environment,
   except over PATH, HOME, PWD, IFS, SHELL and LD_* (one note on stderr when a field is refused).
   `xargs` also appends them as `--key=value` to CMD's own arguments, after them, then the
   functionConfig's `items:` list as positional arguments.
3. Run CMD. Its stdin is the ResourceList exactly as fnrun received it (a template may ignore it,
   or read the items with grep, jq, python); its stderr is fnrun's stderr.
   SIGTERM/SIGINT reaching fnrun are passed on to CMD.
4. Parse CMD's stdout as resources: a stream of documents, or a ResourceList / List (whose
   `results` are passed on). A document that is not a resource is an error.
5. Merge them onto the input items by identity with the project's 2-way merge (`merge2_resources`):
   an item CMD did not print is kept as it came; an item the merge leaves equal keeps its exact
   text; a changed one is re-rendered from its own text (comments and layout kept); a new one
   keeps the text CMD printed (a template's comments reach the file) and gets no path, so
   `fnrun run` files it under `<dir of the function config>/<name>_<kind>.yaml`.
6. Print the ResourceList: the items, the functionConfig echoed, CMD's results if it gave any.

Failures are one line on stderr, `fnrun wrap: error: ...`: CMD's exit code n != 0 is fnrun's exit code
(128+N when killed by signal N; 127 when CMD does not exist, 126 when it cannot be run); bad
output from CMD exits 1, bad input 2.

Cost, measured on the 2-core build machine (median of 30 runs, a 3-item ResourceList, load ~1.5):
inside fnrun/nginx-template:v1 (Debian python3.11) `python3 -c pass` takes 17-22 ms,
`fnrun wrap -- true` 92-103 ms and the whole nginx-template.sh call (sh, wrap, heredoc, merge)
107-122 ms. Imports are ~76 ms of that: PyYAML 18, and ruamel.yaml 17 although only a changed
item needs it (`orchestrator.resource` imports the round-trip editor eagerly). On the host's
virtualenv: `python -c pass` 39 ms, `fnrun wrap -- true` 136 ms. Either way it is small next to
the container start around it (`fnrun run` on samples/nginx: 0.36-0.47 s for the function).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from . import annotations as ann, envvars
from .errors import FnrunError, FunctionError, InputError
from .resource import Resource
from .run import resourcelist
from .settings import chosen_workers
from .yamlio import fast

USAGE = (
    "usage: fnrun wrap -- CMD [ARGS...]\n"
    "       fnrun xargs -- CMD [ARGS...]   (also passes the fields as --key=value)\n\n"
    "Inside a function image: read a ResourceList on stdin, export its functionConfig as environment\n"
    "variables (metadata.name -> NAME, spec.maxSurge -> MAX_SURGE), run CMD, merge the resources it\n"
    "prints onto the items by identity, and print the ResourceList.\n\n"
    "Example (a script that wraps itself, as samples/nginx's template does):\n"
    '  if [ -z "$WRAPPED" ]; then export WRAPPED=true; exec fnrun wrap -- "$0" "$@"; fi'
)
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def main(args: list[str]) -> int:
    """`args[0]` is `wrap` or `xargs`; the rest is `-- CMD [ARGS...]`. Returns the exit code."""
    command = args[0] if args else "wrap"
    try:
        cmd = parse_args(args[1:])
        if cmd is None:
            print(USAGE)
            return 0
        output = wrap(sys.stdin.buffer.read(), cmd, xargs=command == "xargs", workers=chosen_workers())
    except FnrunError as err:
        print(f"fnrun {command}: error: {err}", file=sys.stderr)
        return err.exit_code
    sys.stdout.buffer.write(output.encode("utf-8"))
    sys.stdout.flush()
    return 0


def parse_args(args: list[str]) -> list[str] | None:
    """CMD and its arguments; None when help was asked for. `--` is optional before a CMD that
    does not start with `-`."""
    if args[:1] in (["-h"], ["--help"]):
        return None
    if args[:1] == ["--"]:
        args = args[1:]
    elif args and args[0].startswith("-"):
        raise InputError(f"unknown option {args[0]} (put the command after --)")
    if not args:
        raise InputError("no command given: fnrun wrap -- CMD [ARGS...]")
    return args


def wrap(stdin: bytes, cmd: list[str], xargs: bool = False, env: Mapping[str, str] | None = None, workers: int | None = None) -> str:
    """The whole command as a function: the ResourceList in, the merged ResourceList out
    (`workers`: FNRUN_WORKERS as `main` read it, for big lists)."""
    decoded = resourcelist.decode(fast.decode(stdin, "stdin"), "stdin", workers)
    config = decoded.function_config
    environment = command_environment(config, os.environ if env is None else env)
    argv = [*cmd, *envvars.flags(config), *envvars.positional(config)] if xargs else list(cmd)
    stdout = run_command(argv, stdin, environment)
    produced = parse_output(stdout, cmd[0], workers)
    items = merge_onto(decoded.items, produced.items, cmd[0])
    return encode(items, config, produced.results, workers)


def command_environment(config: dict | None, inherited: Mapping[str, str]) -> dict[str, str]:
    """fnrun's environment plus the functionConfig's variables, except over protected names."""
    exported = envvars.environment(config)
    refused = sorted(name for name in exported if envvars.protected(name))
    if refused:
        print(f"fnrun: note: kept fnrun's own {', '.join(refused)} (functionConfig fields mapping there are not exported)", file=sys.stderr)
    return {**inherited, **{name: value for name, value in exported.items() if name not in refused}}


def run_command(argv: list[str], stdin: bytes, env: Mapping[str, str]) -> bytes:
    """CMD's stdout; stderr goes straight through. A failure becomes fnrun's exit code."""
    name = argv[0]
    with _forwarding_signals() as attach:
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(env))
        except FileNotFoundError:
            raise FnrunError(f"{name}: command not found", exit_code=127) from None
        except OSError as err:
            hint = " (a script needs a #! line)" if err.errno == errno.ENOEXEC else ""
            raise FnrunError(f"{name}: cannot run: {err.strerror}{hint}", exit_code=126) from None
        attach(process)
        stdout, _ = process.communicate(stdin)
    code = process.returncode
    if code < 0:
        raise FunctionError(f"{name} was killed by {signal.Signals(-code).name}", exit_code=128 - code)
    if code > 0:
        raise FunctionError(f"{name} exited with code {code}", exit_code=code)
    return stdout


@contextmanager
def _forwarding_signals() -> Iterator[Callable[[subprocess.Popen], None]]:
    """While CMD runs, a stop request for fnrun (docker stop, Ctrl-C, a timeout) is one for CMD:
    fnrun waits for it to exit instead of dying first and leaving it orphaned. Installed before
    CMD starts, so a request that arrives meanwhile is passed on as soon as it exists."""
    target: list[subprocess.Popen] = []
    pending: list[int] = []

    def forward(signum: int, frame: object) -> None:
        if target:
            target[0].send_signal(signum)
        else:
            pending.append(signum)

    def attach(process: subprocess.Popen) -> None:
        target.append(process)
        for signum in pending:
            process.send_signal(signum)

    previous = {}
    for number in FORWARDED_SIGNALS:
        try:
            previous[number] = signal.signal(number, forward)
        except ValueError:  # not the main thread: leave signals alone
            break
    try:
        yield attach
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def parse_output(stdout: bytes, name: str, workers: int | None = None) -> resourcelist.Decoded:
    """CMD's stdout as resources; anything else is a one-line error naming the line."""
    source = f"stdout of {name}"
    try:
        return resourcelist.decode(fast.decode(stdout, source), source, workers)
    except InputError as err:
        raise FunctionError(str(err)) from None


def merge_onto(items: list[Resource], produced: list[Resource], name: str) -> list[Resource]:
    """The input items with CMD's resources merged in by identity, then CMD's new resources.
    Only the items CMD printed go through the merge: two input items sharing an identity (one
    name in two directories) are an error only when CMD's output makes them ambiguous."""
    if not produced:
        return list(items)
    from .merge import merge2_resources
    from .yamlio.roundtrip import same

    printed = {ann.identity(r.data): r for r in produced}
    targets = [position for position, item in enumerate(items) if ann.identity(item.data) in printed]
    try:
        merged = merge2_resources([r.data for r in produced], [items[p].data for p in targets])
    except InputError as err:
        raise FunctionError(f"merging the output of {name} (source) onto the input items (destination): {err}") from None
    result = list(items)
    for position, value in zip(targets, merged):
        item = items[position]
        result[position] = item if same(value, item.data) else item.replaced(value)
    for value in merged[len(targets) :]:
        origin = printed[ann.identity(value)]
        result.append(origin if same(value, origin.data) else Resource(value))
    return result


def encode(items: list[Resource], config: dict | None, results: list, workers: int | None = None) -> str:
    """The ResourceList fnrun prints: resourcelist's encoding, plus CMD's results."""
    out = resourcelist.encode(items, config, workers)
    if results:
        out += "results:\n" + "".join("  " + line if line.strip() else line for line in fast.dump(results).splitlines(keepends=True))
    return out
