"""`kpt` for a case's exec.sh: `kpt fn render ARGS` is `fnrun render ARGS`, `kpt fn eval ARGS`
`fnrun run ARGS` (new files named as kpt names them), `kpt fn source/sink ARGS` `fnrun source/sink
ARGS`, the arguments as the script wrote them; fnrun's pass-through flags (orchestrator.casetest
.commands) are added to render and eval. Any other kpt command exits 127 with a line saying so."""

from __future__ import annotations

import os
import shlex
import sys

from .commands import EVAL_FLAGS, SHIM_EVAL_FLAGS, SHIM_FLAGS

COMMANDS = {"render": "render", "eval": "run", "source": "source", "sink": "sink"}


def command_for(argv: list[str], flags: str = "", eval_flags: str = "") -> list[str] | None:
    """fnrun's arguments for kpt's, or None for a kpt command fnrun has no stand-in for."""
    if argv[:1] != ["fn"] or len(argv) < 2 or argv[1] not in COMMANDS:
        return None
    args, rest = argv[2:], []
    if "--" in args:
        args, rest = args[: args.index("--")], args[args.index("--"):]
    own = shlex.split(flags) if argv[1] in ("render", "eval") else []
    if argv[1] == "eval":
        own += [*EVAL_FLAGS, *shlex.split(eval_flags)]
    return [COMMANDS[argv[1]], *args, *own, *rest]


def main(argv: list[str]) -> int:
    args = command_for(argv, os.environ.get(SHIM_FLAGS, ""), os.environ.get(SHIM_EVAL_FLAGS, ""))
    if args is None:
        print(f"fnrun test: kpt {' '.join(argv[:2])} has no fnrun stand-in (kpt fn render/eval/source/sink only)", file=sys.stderr)
        return 127
    from ..launch import main as launch

    launch(args)  # exits with fnrun's code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
