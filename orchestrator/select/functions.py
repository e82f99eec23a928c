"""Which functions run, in what order, and with what they are allowed: discovery from the
`config.kubernetes.io/function` annotation (and its legacy forms), validation, ordering."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import annotations as ann
from ..errors import InputError
from ..kinds import KINDS, Kind
from ..resource import Resource
from ..yamlio import fast
from .selectors import Selector

_TOP_KEYS = {*KINDS, "deferFailure"}
_CONTAINER_KEYS = {"image", "network", "mounts", "envs"}
_EXEC_KEYS = {"path", "args", "envs"}
_STARLARK_KEYS = {"path", "name"}  # kustomize's declared Starlark (its `url:` is not fetched)
_MOUNT_KEYS = {"type", "src", "source", "dst", "target", "destination", "rw", "readonly", "readOnly"}


@dataclass(frozen=True)
class MountSpec:
    """A bind mount a function asks for; `source` is relative to the declaring file's directory."""

    source: str
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class FunctionSpec:
    """One function to run. Declared ones carry their config resource and scope directory; ad-hoc
    ones (`--image`, `--exec`) see the whole package."""

    kind: Kind  # starlark is kustomize's; its exec_path is the script
    image: str | None = None
    exec_path: str | None = None
    args: tuple[str, ...] = ()
    envs: tuple[str, ...] = ()
    network: bool = False
    mounts: tuple[MountSpec, ...] = ()
    defer_failure: bool = False
    config: Resource | None = field(default=None, compare=False)
    declared_in: str | None = None  # package-relative path of the declaring file
    declared_index: int = 0
    global_scope: bool = False
    selectors: tuple[Selector, ...] = ()  # the function sees the resources any of these match
    exclude: tuple[Selector, ...] = ()  # ... and none of these matches
    config_in_package: bool = False  # render: a configPath/configRef resource, read as earlier steps left it
    config_also_item: bool = False  # run --fn-config of a file in the package: its resource is an item too, as in kpt fn eval

    @property
    def name(self) -> str:
        return self.image or self.exec_path or "function"

    @property
    def directory(self) -> str:
        """The function's scope and default directory for new resources ('' is the package root)."""
        if self.declared_in is None:
            return ""
        return posixpath.dirname(self.declared_in)

    @property
    def scope(self) -> str:
        return "package" if self.global_scope or self.declared_in is None else (self.directory or ".") + "/"


def declaration(data: dict) -> tuple[str, Any] | None:
    """The function annotation a resource carries, as (annotation key, raw value), if any."""
    annotations = ann.annotations_of(data)
    for key in (ann.FUNCTION, ann.LEGACY_FUNCTION, ann.LEGACY_CONTAINER):
        if key in annotations:
            return key, annotations[key]
    return None


def parse_declaration(resource: Resource) -> FunctionSpec | None:
    """The function a resource declares, or None. Every mistake is an InputError naming the file."""
    found = declaration(resource.data)
    if found is None:
        return None
    key, raw = found
    where = _where(resource)
    base: dict[str, Any] = dict(config=resource, declared_in=resource.path, declared_index=resource.index)
    if key == ann.LEGACY_CONTAINER:
        if not isinstance(raw, str) or not raw.strip():
            raise InputError(f"{where}: {key} must name an image")
        return FunctionSpec(kind=Kind.CONTAINER, image=raw.strip(), **base)
    if not isinstance(raw, str):
        raise InputError(f"{where}: {key} must be a YAML string (use `{key}: |`)")
    value = fast.load(raw, f"{where}: {key}")
    if not isinstance(value, dict):
        raise InputError(f"{where}: {key} must hold a mapping with `container` or `exec`")
    _only(value, _TOP_KEYS, where, key)
    defer = value.get("deferFailure", False)
    if not isinstance(defer, bool):
        raise InputError(f"{where}: {key}: deferFailure must be true or false")
    if sum(k in value for k in KINDS) != 1:
        raise InputError(f"{where}: {key} must declare exactly one of `container`, `exec` or `starlark`")
    if Kind.STARLARK in value:
        spec = _section(value[Kind.STARLARK], _STARLARK_KEYS, where, f"{key}: starlark")
        path = spec.get("path")
        if not isinstance(path, str) or not path.strip():
            raise InputError(f"{where}: {key}: starlark.path is required (fnrun runs local scripts only)")
        return FunctionSpec(kind=Kind.STARLARK, exec_path=path.strip(), defer_failure=defer, **base)
    if Kind.CONTAINER in value:
        spec = _section(value[Kind.CONTAINER], _CONTAINER_KEYS, where, f"{key}: container")
        image = spec.get("image")
        if not isinstance(image, str) or not image.strip():
            raise InputError(f"{where}: {key}: container.image is required")
        network = spec.get("network", False)
        if not isinstance(network, bool):
            raise InputError(f"{where}: {key}: container.network must be true or false")
        return FunctionSpec(
            kind=Kind.CONTAINER,
            image=image.strip(),
            envs=_strings(spec.get("envs"), where, f"{key}: container.envs"),
            network=network,
            mounts=tuple(_mount(m, where, key) for m in _list(spec.get("mounts"), where, f"{key}: container.mounts")),
            defer_failure=defer,
            **base,
        )
    spec = _section(value[Kind.EXEC], _EXEC_KEYS, where, f"{key}: exec")
    path = spec.get("path")
    if not isinstance(path, str) or not path.strip():
        raise InputError(f"{where}: {key}: exec.path is required")
    return FunctionSpec(
        kind=Kind.EXEC,
        exec_path=path.strip(),
        args=_strings(spec.get("args"), where, f"{key}: exec.args"),
        envs=_strings(spec.get("envs"), where, f"{key}: exec.envs"),
        defer_failure=defer,
        **base,
    )


def _where(resource: Resource) -> str:
    meta = resource.data.get("metadata") or {}
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{resource.path or 'stdin'} ({resource.data.get('kind')}/{name})"


def _only(value: dict, allowed: set[str], where: str, what: str) -> None:
    unknown = sorted(str(k) for k in value if k not in allowed)
    if unknown:
        raise InputError(f"{where}: {what}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _section(value: Any, allowed: set[str], where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{where}: {what} must be a mapping")
    _only(value, allowed, where, what)
    return value


def _list(value: Any, where: str, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}: {what} must be a list")
    return value


def _strings(value: Any, where: str, what: str) -> tuple[str, ...]:
    items = _list(value, where, what)
    if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
        raise InputError(f"{where}: {what} must be a list of strings")
    return tuple(str(v) for v in items)


def _mount(value: Any, where: str, key: str) -> MountSpec:
    spec = _section(value, _MOUNT_KEYS, where, f"{key}: container.mounts[]")
    if spec.get("type", "bind") != "bind":
        raise InputError(f"{where}: {key}: only bind mounts are supported, not {spec.get('type')!r}")
    source = spec.get("src", spec.get("source"))
    target = spec.get("dst", spec.get("target", spec.get("destination")))
    if not isinstance(source, str) or not isinstance(target, str):
        raise InputError(f"{where}: {key}: a mount needs `src` and `dst`")
    read_only = not _truthy(spec.get("rw", False)) and _truthy(spec.get("readonly", spec.get("readOnly", True)))
    return MountSpec(source, target, read_only)


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def discover(resources: list[Resource]) -> list[FunctionSpec]:
    """Every declared function, in run order: deepest directory first, then file path, then index
    (so a package's sub-packages are rendered before the package that contains them)."""
    specs = [spec for spec in map(parse_declaration, resources) if spec is not None]
    return sorted(specs, key=order_key)


def order_key(spec: FunctionSpec) -> tuple[int, str, int]:
    directory = spec.directory
    depth = len(directory.split("/")) if directory else 0
    return (-depth, spec.declared_in or "", spec.declared_index)


def in_scope(spec: FunctionSpec, path: str | None) -> bool:
    """Whether a resource at `path` is visible to the function: its directory and below, compared
    by path components (`app/` does not contain `apps/`)."""
    if spec.global_scope or spec.declared_in is None or not spec.directory:
        return True
    if path is None:
        return False
    scope = spec.directory.split("/")
    return path.split("/")[: len(scope)] == scope and len(path.split("/")) > len(scope)


def adhoc(
    root: Path | None,
    image: str | None = None,
    exec_path: str | None = None,
    fn_config: Path | None = None,
    arguments: tuple[str, ...] = (),
    config_as_item: bool = True,
) -> FunctionSpec:
    """The one function given on the command line: `--image`/`--exec` with `k=v` arguments (a
    ConfigMap functionConfig, as kpt builds it) or `--fn-config FILE`. It sees the whole package;
    FILE's resource, when FILE lies in it, is the functionConfig and, with `config_as_item`, one
    of the items too, as kpt fn eval hands it over (so a function that namespaces every resource
    namespaces its own config file); without, the config only (docs/reference/declaring-functions.md)."""
    if (image is None) == (exec_path is None):
        raise InputError("give exactly one of --image or --exec")
    if fn_config is not None and arguments:
        raise InputError("give either --fn-config or key=value arguments, not both")
    declared_in = None
    if fn_config is not None:
        config, declared_in = config_file(root, fn_config)
    else:
        data: dict[str, Any] = {}
        for argument in arguments:
            key, sep, value = argument.partition("=")
            if not sep or not key:
                raise InputError(f"function argument {argument!r} must be key=value")
            data[key] = value
        config = Resource(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "function-input", "annotations": {ann.LOCAL_CONFIG: "true"}},
                "data": data,
            }
        )
    kind = Kind.CONTAINER if image else Kind.EXEC
    if exec_path is not None:
        exec_path = str(Path(exec_path).absolute())  # relative to where the user typed it, not to the config
    return FunctionSpec(kind=kind, image=image, exec_path=exec_path, config=config, declared_in=declared_in, global_scope=True,
                        config_also_item=config_as_item and declared_in is not None)


def config_file(root: Path | None, path: Path) -> tuple[Resource, str | None]:
    """A --fn-config FILE's one resource, and its path in the package at `root` (None outside it)."""
    from ..read.package import parse_stream

    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read --fn-config: {err.strerror}") from None
    rel = None
    if root is not None:
        real, real_root = path.resolve(), root.resolve()
        if real_root in real.parents:
            rel = real.relative_to(real_root).as_posix()
    resources = parse_stream(fast.decode(raw, str(path)), str(path), path=rel)
    if len(resources) != 1:
        raise InputError(f"{path}: --fn-config must hold exactly one resource, found {len(resources)}")
    metadata = resources[0].data.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        raise InputError(f"{path}: --fn-config resource must have metadata.name (kpt refuses it too)")
    return resources[0], rel


def parse_mount_flag(value: str) -> MountSpec:
    """`--mount type=bind,src=DIR,dst=/PATH[,rw=true]`, the syntax kpt and docker use."""
    fields: dict[str, str] = {}
    for part in value.split(","):
        key, sep, item = part.partition("=")
        if not sep:
            raise InputError(f"--mount {value!r}: expected comma-separated key=value pairs")
        fields[key.strip()] = item.strip()
    return _mount(fields, "--mount", value)
