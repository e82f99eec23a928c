"""Typed function configuration: a ConfigMap's `data` or a custom resource's `spec` into a dataclass.

ConfigMap data is all strings, so values convert to what the field's type asks (int, float, bool,
list from `a, b, c`); a value that does not convert is a ConfigError naming the field. YAML keys may
be camelCase (`annotationName`) for a snake_case field (`annotation_name`). Fields typed `Any`, bare
`dict` or bare `list` receive the YAML node itself, comments included.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, TypeVar, Union

from .resource import Resource

T = TypeVar("T")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class Error(Exception):
    """An expected failure: the runner prints it as one line on stderr and exits 1, no traceback."""


class ConfigError(Error):
    """The functionConfig is missing, malformed or holds a bad value."""


def rest() -> Any:
    """Declare a `dict` field that takes every key no other field claims (e.g. a labels map given as
    ConfigMap data). A key with the field's own name, holding a mapping, is merged into it as well."""
    return dataclasses.field(default_factory=dict, metadata={"fnrun.rest": True})


def source_of(function_config: Resource | None) -> dict:
    """The mapping a config is read from: ConfigMap `data`, else `spec`, else the top-level fields
    (kpt-style resources such as `kind: SetLabels` with `labels:` at the top)."""
    if function_config is None:
        return {}
    data = function_config.data
    if function_config.kind == "ConfigMap" and function_config.group == "":
        return data.get("data") or {}
    if isinstance(data.get("spec"), dict):
        return data["spec"]
    return {k: v for k, v in data.items() if k not in ("apiVersion", "kind", "metadata")}


def load_config(function_config: Resource | None, cls: type[T]) -> T:
    """Build `cls` from the function config; raise ConfigError naming the field at fault."""
    return _dataclass(source_of(function_config), cls, "")


def _camel(name: str) -> str:
    head, *rest_ = name.split("_")
    return head + "".join(part.title() for part in rest_)


def _dataclass(source: Any, cls: type[T], where: str) -> T:
    if not isinstance(source, dict):
        raise ConfigError(f"{where or 'config'}: expected a mapping, got {_show(source)}")
    if not dataclasses.is_dataclass(cls):  # the function's author's mistake, not the config's
        raise TypeError(f"config class {cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.init]
    rest_field = next((f for f in fields if f.metadata.get("fnrun.rest")), None)
    by_key = {}
    for f in fields:
        by_key[f.name] = by_key[_camel(f.name)] = f
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in source.items():
        claimed = by_key.get(str(key))
        if claimed is None or (claimed is rest_field and not isinstance(value, dict)):
            if rest_field is None:
                known = ", ".join(_camel(f.name) for f in fields) or "none"
                raise ConfigError(f"unknown config field {where}{key!r} (known: {known})")
            extra[str(key)] = value
        elif claimed is rest_field:
            extra.update((str(k), v) for k, v in value.items())
        else:
            kwargs[claimed.name] = _convert(value, hints[claimed.name], f"{where}{_camel(claimed.name)}")
    if rest_field is not None:
        kwargs[rest_field.name] = _convert(extra, hints[rest_field.name], f"{where}{_camel(rest_field.name)}")
    for f in fields:
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in kwargs:
            raise ConfigError(f"missing required config field {where}{_camel(f.name)!r}")
    return cls(**kwargs)


def _convert(value: Any, tp: Any, where: str) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any or tp in (dict, list):
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1:
            return _convert(value, inner[0], where)
    if value is None:
        raise ConfigError(f"config field {where!r}: a value is required")
    if origin is Literal:
        if str(value) in [str(a) for a in args]:
            return str(value)
        raise ConfigError(f"config field {where!r}: expected one of {', '.join(map(str, args))}, got {_show(value)}")
    if tp is bool:
        text = str(value).strip().lower()
        if isinstance(value, bool) or text in _TRUE | _FALSE:
            return value if isinstance(value, bool) else text in _TRUE
        raise ConfigError(f"config field {where!r}: expected true or false, got {_show(value)}")
    if tp in (int, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if tp is int and value != int(value):
                raise ConfigError(f"config field {where!r}: expected an integer, got {_show(value)}")
            return tp(value)
        try:
            return tp(str(value).strip())
        except ValueError:
            noun = "an integer" if tp is int else "a number"
            raise ConfigError(f"config field {where!r}: expected {noun}, got {_show(value)}") from None
    if tp is str:
        if isinstance(value, (dict, list)):
            raise ConfigError(f"config field {where!r}: expected a string, got {_show(value)}")
        return str(value).lower() if isinstance(value, bool) else str(value)
    if origin is list:
        items = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise ConfigError(f"config field {where!r}: expected a list, got {_show(value)}")
        return [_convert(v, args[0] if args else Any, f"{where}[{i}]") for i, v in enumerate(items)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"config field {where!r}: expected a mapping, got {_show(value)}")
        value_type = args[1] if args else Any
        return {str(k): _convert(v, value_type, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(value, tp, f"{where}.")
    raise TypeError(f"config field {where!r}: unsupported type {tp!r}")


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(str(value)) if isinstance(value, str) else repr(value)
