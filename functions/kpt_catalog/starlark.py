"""starlark (kpt's `starlark` image; kustomize's `starlark: {path: ...}` functions): run a Starlark
script over the ResourceList.

The script comes from a `StarlarkRun`'s `source` (its `params` are read through the
functionConfig), a ConfigMap's `data.source`, or `--source TEXT --name FILE` (kustomize's declared
form: fnrun reads the file). It sees `ctx.resource_list` (`items`, `functionConfig`) and edits it in
place; `ctx.environment` is the function's environment; `ctx.open_api` is the Kubernetes API
schema shipped in data/kubernetes-openapi.json.gz (read only by scripts that name it; made by
scripts/gen_k8s_openapi.py). `print` goes to stderr, `fail(msg)` is an error result. The interpreter is
go.starlark.net, kpt's own, with kpt's options: `set`, recursion and `while`, global reassignment.
It has no file system or network; `load()` gives the libraries functions/kpt_catalog/starlib.py
provides of those kpt's image bundles.

Starlark has no structs in this binding, so `ctx` is a dict and attribute reads of its fields
(`x.resource_list`) are rewritten to index reads (`x["resource_list"]`) before the script runs.
Values handed in are frozen, so one line put before the script copies them into mutable ones;
error messages subtract it, so they give the user's line numbers.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tokenize
from typing import Any

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm, starlib

CTX_FIELDS = ("resource_list", "environment", "open_api")
_LOCATION = re.compile(r"^\s*(?P<where>\S+:\d+:\d+): in ")
# One line (so the user's lines move by exactly one): a mutable deep copy of the frozen input.
PRELUDE = (
    '_fnrun_thaw = lambda v: {k: _fnrun_thaw(x) for k, x in v.items()} if type(v) == "dict" '
    'else [_fnrun_thaw(x) for x in v] if type(v) == "list" else v; ctx = _fnrun_thaw(_fnrun_ctx)\n'
)


def script_of(config: krm.Item, given: tuple[str, str] | None) -> tuple[str, str]:
    """(source, the file name error messages give)."""
    if given is not None:
        return given
    kind = config.get("kind")
    source = (config.get("data") or {}).get("source") if kind == "ConfigMap" else config.get("source")
    if not isinstance(source, str) or not source.strip():
        where = "data.source" if kind == "ConfigMap" else "source"
        raise krm.ConfigError(f"functionConfig {kind or '(none)'} has no Starlark script in `{where}`")
    name = krm.metadata(config).get("name") or "script"
    return source, f"{name}.star"


def with_indexed_ctx(source: str, loaded: frozenset[str] | set[str] = frozenset()) -> str:
    """`x.resource_list` -> `x["resource_list"]`, and `json.decode` -> `json["decode"]` for the
    names a load() bound (same lines, so line numbers still match)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source  # let Starlark report the syntax error at its line
    lines = source.splitlines(keepends=True)
    edits = []
    for owner, before, token in zip([None, *tokens], tokens, tokens[1:]):
        if before.string != "." or token.type != tokenize.NAME or before.end != token.start:
            continue
        if token.string in CTX_FIELDS or (owner is not None and owner.type == tokenize.NAME and owner.string in loaded and owner.end == before.start):
            edits.append((before.start, token.end, f'["{token.string}"]'))
    for (row, col), (end_row, end_col), text in reversed(edits):
        if row == end_row:
            line = lines[row - 1]
            lines[row - 1] = line[:col] + text + line[end_col:]
    return "".join(lines)


def one_line(err: Exception, filename: str) -> str:
    """A Starlark error as one line naming the script's line: the innermost frame in the script."""
    import starlark_go

    if isinstance(err, starlark_go.EvalError):
        frames = [m.group("where") for m in map(_LOCATION.match, err.backtrace.splitlines()) if m and m.group("where").startswith(filename + ":")]
        message = err.backtrace.strip().splitlines()[-1]
        message = re.sub(r"^Error( in \w+)?: ", "", message)
        line = f"{frames[-1] if frames else filename}: {message}"
    elif isinstance(err, starlark_go.ResolveError):
        line = "; ".join(f"{filename}:{e.line}:{e.column}: {e.msg}" for e in err.errors) or str(err)
    elif isinstance(err, starlark_go.SyntaxError):
        line = f"{filename}:{err.line}:{err.column}: {err.msg}"
    else:
        line = str(getattr(err, "error", err))
    line = " ".join(line.split())  # one line, whatever the message held
    return re.sub(re.escape(filename) + r":(\d+):", lambda m: f"{filename}:{int(m.group(1)) - 1}:", line)


OPENAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "kubernetes-openapi.json.gz")


def kubernetes_openapi() -> dict:
    """The Kubernetes API schema (OpenAPI 2 `definitions`), as kpt's starlark gives `ctx.open_api`."""
    import gzip
    import json

    with gzip.open(OPENAPI, "rb") as handle:
        return json.load(handle)


def run_script(items: list[krm.Item], config: krm.Item, given: tuple[str, str] | None = None) -> list[dict]:
    import starlark_go

    source, filename = script_of(config, given)
    starlark_go.configure_starlark(allow_set=True, allow_global_reassign=True, allow_recursion=True)
    resource_list = {"items": items, "functionConfig": config}
    interpreter = starlark_go.Starlark(print=lambda text: print(text, file=sys.stderr, flush=True))
    open_api = kubernetes_openapi() if "open_api" in source else {}
    interpreter.set(_fnrun_ctx={"resource_list": resource_list, "environment": dict(os.environ), "open_api": open_api})
    source, loaded = starlib.rewrite_loads(source)
    if loaded:
        interpreter.set(_fnrun_lib=starlib.modules())
    try:
        interpreter.exec(PRELUDE + with_indexed_ctx(source, loaded), filename=filename)
        ctx: Any = interpreter.get("ctx")  # type: ignore[func-returns-value]  # starlark-go's stub says None; it returns the value
        edited = ctx["resource_list"]
    except starlark_go.StarlarkError as err:
        line = one_line(err, filename)
        print(f"starlark: {line}", file=sys.stderr)
        return [krm.result(line, "error")]
    new_items = edited.get("items") if isinstance(edited, dict) else None
    if not isinstance(new_items, list) or not all(isinstance(i, dict) for i in new_items):
        return [krm.result("the script left ctx.resource_list[\"items\"] not a list of resources", "error")]
    items[:] = new_items
    return []


def main() -> None:
    args = sys.argv[1:]
    given = (args[1], args[3]) if len(args) == 4 and args[0] == "--source" and args[2] == "--name" else None
    krm.main(lambda items, config: run_script(items, config, given), "starlark")


if __name__ == "__main__":
    main()
