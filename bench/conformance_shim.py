"""A `kpt` stand-in for the suites' exec.sh cases (bench/conformance_render.py puts it first on
PATH): `kpt fn eval` and `kpt fn render` become `fnrun run` / `fnrun render` with the same
flags; anything else exits 127 with a line the script reports as "cannot run here".

    FNRUN="fnrun --builtin-catalog" conformance_shim.py fn eval --image IMG --fn-config F -- k=v
"""

from __future__ import annotations

import os
import shlex
import sys

UNSUPPORTED = "conformance shim: kpt"
# kpt flag -> fnrun flag (None: dropped; fnrun's run --image already sees every resource)
EVAL_FLAGS = {"--image": "--image", "-i": "--image", "--fn-config": "--fn-config", "--image-pull-policy": "--image-pull-policy",
              "--network": "--network", "--include-meta-resources": None, "--truncate-output": None}


def main(argv: list[str]) -> int:
    fnrun = shlex.split(os.environ["FNRUN"])
    if argv[:2] == ["fn", "render"] and all(a.startswith("-") or a == "." for a in argv[2:]):
        os.execvp(fnrun[0], [*fnrun[:1], "render", ".", *argv[2:], *fnrun[1:]])
    if argv[:2] != ["fn", "eval"]:
        print(f"{UNSUPPORTED} {' '.join(argv[:2])} is not supported", file=sys.stderr)
        return 127
    args, rest = argv[2:], []
    if "--" in args:
        args, rest = args[: args.index("--")], args[args.index("--"):]
    translated, directory = [], "."
    while args:
        flag, _, inline = args.pop(0).partition("=")
        if flag not in EVAL_FLAGS:
            if flag.startswith("-"):
                print(f"{UNSUPPORTED} fn eval {flag} is not supported", file=sys.stderr)
                return 127
            directory = flag
            continue
        takes_value = flag not in ("--include-meta-resources", "--network", "--truncate-output")
        value = (inline or args.pop(0)) if takes_value else None
        if EVAL_FLAGS[flag]:
            translated += [EVAL_FLAGS[flag], *([value] if value is not None else [])]
    os.execvp(fnrun[0], [*fnrun[:1], "run", directory, *translated, *fnrun[1:], *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
