"""The libraries kpt's starlark image lets a script `load()`, as far as fnrun can give them.

kpt's image bundles qri-io's starlib (`encoding/json.star`, `encoding/yaml.star`, `re.star`...)
plus `krmfn.star`. The starlark-go binding has no load hook, so fnrun rewrites each one-line
`load('module.star', 'name', alias='name')` into assignments from a table of Python functions
(same line, so error lines still match), and a loaded module's `mod.fn` into `mod["fn"]`.
Modules that need a network, a clock or binary formats (http, time, geo, bsoup, html, xlsx,
zipfile, csv) load as empty, so a script that only loads them still runs; calling into them fails
with a key error naming the function.
"""

from __future__ import annotations

import ast
import base64 as _b64
import hashlib
import io
import json as _json
import math as _math
import re as _re
from collections.abc import Callable
from typing import Any

from functions.kpt_catalog import regex

_LOAD = _re.compile(r"^load\s*\(.*\)\s*(#.*)?$")


def _json_encode(value: Any) -> str:
    return _json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _json_indent(text: str, prefix: str = "", indent: str = "\t") -> str:
    out = _json.dumps(_json.loads(text), indent=indent, ensure_ascii=False)
    return out.replace("\n", "\n" + prefix)


def _yaml_loads(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def _yaml_dumps(value: Any) -> str:
    from ruamel.yaml import YAML

    out = io.StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump(value, out)
    return out.getvalue()


_B64 = {"standard": (_b64.b64encode, _b64.b64decode, True), "standard_raw": (_b64.b64encode, _b64.b64decode, False),
        "url": (_b64.urlsafe_b64encode, _b64.urlsafe_b64decode, True), "url_raw": (_b64.urlsafe_b64encode, _b64.urlsafe_b64decode, False)}


def _b64_encode(text: str, encoding: str = "standard") -> str:
    encode, _, padded = _B64[encoding]
    out = encode(text.encode()).decode()
    return out if padded else out.rstrip("=")


def _b64_decode(text: str, encoding: str = "standard") -> str:
    _, decode, _ = _B64[encoding]
    return decode(text + "=" * (-len(text) % 4)).decode()


def _field(resource: dict, *keys: str) -> Any:
    value: Any = resource
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _match_gvk(resource: dict, api_version: str, kind: str) -> bool:
    return _field(resource, "apiVersion") == api_version and _field(resource, "kind") == kind


def _match_name(resource: dict, name: str) -> bool:
    return _field(resource, "metadata", "name") == name


def _match_namespace(resource: dict, namespace: str) -> bool:
    return (_field(resource, "metadata", "namespace") or "") == namespace


def _math_module() -> dict[str, Any]:
    module: dict[str, Any] = {"e": _math.e, "pi": _math.pi, "ceil": lambda x: _math.ceil(x), "floor": lambda x: _math.floor(x),
                              "round": lambda x: float(_math.floor(x + 0.5)) if x >= 0 else -float(_math.floor(-x + 0.5)),
                              "pow": lambda x, y: float(x) ** float(y), "log": lambda x, base=_math.e: _math.log(x, base)}
    for name in ("sqrt", "fabs", "exp", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "hypot", "sinh", "cosh", "tanh", "degrees", "radians", "copysign", "mod", "remainder"):
        function = getattr(_math, "fmod" if name == "mod" else name)
        module[name] = (lambda f: lambda *args: float(f(*args)))(function)
    return module


def _functions(table: dict[str, Any]) -> dict[str, Any]:
    def wrap(f: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            return f(*args, **kwargs)
        return call
    return {k: wrap(v) if callable(v) else v for k, v in table.items()}


_TABLE: dict[str, dict[str, Any]] = {}


def modules() -> dict[str, dict[str, Any]]:
    """module file -> {name a script may load -> value}. Built once and kept: the binding does not
    hold a reference to the Python functions it is given, so they must outlive the interpreter."""
    if not _TABLE:
        _TABLE.update(_build())
    return _TABLE


def _build() -> dict[str, dict[str, Any]]:
    empty: dict[str, Any] = {}
    return {
        "encoding/json.star": {"json": _functions({"encode": _json_encode, "decode": _json.loads, "indent": _json_indent})},
        "encoding/yaml.star": {"yaml": _functions({"loads": _yaml_loads, "dumps": _yaml_dumps})},
        "encoding/base64.star": {"base64": _functions({"encode": _b64_encode, "decode": _b64_decode})},
        "hash.star": {"hash": _functions({name: (lambda h: lambda s: h(s.encode()).hexdigest())(getattr(hashlib, name)) for name in ("md5", "sha1", "sha256")})},
        "math.star": {"math": _functions(_math_module())},
        "re.star": {"re": _functions({"sub": lambda pattern, repl, text, count=0: regex.compile(pattern).sub(repl, text, count=count),
                                      "split": lambda pattern, text, maxsplit=0: regex.compile(pattern).split(text, maxsplit=maxsplit),
                                      "findall": lambda pattern, text: [m.group(0) for m in regex.compile(pattern).finditer(text)]})},
        "krmfn.star": {"krmfn": _functions({"match_gvk": _match_gvk, "match_name": _match_name, "match_namespace": _match_namespace})},
        "encoding/csv.star": {"csv": empty}, "bsoup.star": {"bsoup": empty}, "geo.star": {"geo": empty}, "html.star": {"html": empty},
        "http.star": {"http": empty}, "time.star": {"time": empty}, "xlsx.star": {"xlsx": empty}, "zipfile.star": {"ZipFile": empty},
    }


def _load_of(line: str) -> tuple[str, list[tuple[str, str]]] | None:
    """`load("m.star", "a", b="c")` as its module and (local, name) pairs, [("a", "a"), ("b", "c")];
    None for a line that is not such a call of strings only."""
    try:
        body = ast.parse(line.strip()).body
    except (SyntaxError, ValueError):
        return None
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    if not isinstance(call, ast.Call) or not call.args:
        return None
    strings = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    named = [(k.arg, k.value.value) for k in call.keywords
             if k.arg is not None and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
    if len(strings) != len(call.args) or len(named) != len(call.keywords):
        return None
    module, *names = strings
    return module, [(name, name) for name in names] + named


def rewrite_loads(source: str) -> tuple[str, set[str]]:
    """Each one-line top-level load() as assignments from `_fnrun_lib`; returns the new source and
    the names bound (whose `name.fn` reads become index reads). Others are left for Starlark to
    refuse at their line."""
    known = modules()
    bound: set[str] = set()
    lines = source.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if not _LOAD.match(line):
            continue
        load = _load_of(line)
        if load is None:
            continue
        module, pairs = load
        if module not in known or not all(name in known[module] for _, name in pairs):
            continue
        ending = "\n" if line.endswith("\n") else ""
        lines[number] = "; ".join(f"{local} = _fnrun_lib[{module!r}][{name!r}]" for local, name in pairs) + ending
        bound.update(local for local, _ in pairs)
    return "".join(lines), bound

