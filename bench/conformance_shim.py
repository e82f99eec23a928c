"""A `kpt` stand-in for the suites' exec.sh cases (bench/conformance_render.py puts it first on
PATH): `kpt fn render ARGS` becomes `fnrun render ARGS`, `kpt fn eval ARGS` becomes `fnrun run
ARGS` and `kpt fn source/sink ARGS` `fnrun source/sink ARGS`, the arguments as the script wrote
them (no directory, `-`, `-i`, `-o unwrap`, `--exec`...: kpt's spellings are fnrun's to accept),
with $FNRUN's own flags added to render and eval (`--builtin-catalog`) and, for eval, $FNRUN_EVAL
(`--allow-exec`) and the flag that gives kpt fn eval's behaviour where `fnrun run` differs on
purpose: new files named `kind_name.yaml` (an --fn-config file in the package stays out of the
items in both, since kpt 23c57d7). Any other kpt command exits 127 with a line saying so.

    FNRUN="fnrun --builtin-catalog" conformance_shim.py fn eval --image IMG --fn-config F -- k=v
"""

from __future__ import annotations

import os
import shlex
import sys

UNSUPPORTED = "conformance shim: kpt"
COMMANDS = {"render": "render", "eval": "run", "source": "source", "sink": "sink"}


def main(argv: list[str]) -> int:
    fnrun = shlex.split(os.environ["FNRUN"])
    if argv[:1] != ["fn"] or len(argv) < 2 or argv[1] not in COMMANDS:
        print(f"{UNSUPPORTED} {' '.join(argv[:2])} is not supported", file=sys.stderr)
        return 127
    args, rest = argv[2:], []
    if "--" in args:
        args, rest = args[: args.index("--")], args[args.index("--"):]
    own = fnrun[1:] if argv[1] in ("render", "eval") else []
    if argv[1] == "eval":
        own += ["--file-names", "kind_name", *shlex.split(os.environ.get("FNRUN_EVAL", ""))]
    os.execvp(fnrun[0], [fnrun[0], COMMANDS[argv[1]], *args, *own, *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
