"""Which lists merge element by element, and by what key.

Known Kubernetes fields use their real merge key (docs/reference/merge.md). Ports use the key pair the API
server itself uses (`containerPort`/`port` with `protocol`, defaulting to TCP), because a DNS server
legitimately lists port 53 twice, once per protocol; pairing by the port alone would report a
conflict on every CoreDNS manifest. Any other list whose elements all carry one of the seed's keys
is associative by the first of them, in the seed's order, that is unique within each list: a key
that repeats (`type: string` in two printer columns) cannot be what identifies the elements.
"""

from __future__ import annotations

from typing import Any

from orchestrator.merge._common import SCALARS, MergeConflict, Where

#: Marks a key field that has no default: an element without it cannot be paired.
REQUIRED: Any = object()

#: A list's key: (field, default) pairs; an element's key is the tuple of their values.
KeySpec = tuple[tuple[str, Any], ...]

SEED_KEYS = ("mountPath", "devicePath", "ip", "type", "topologyKey", "name", "containerPort")
CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})


def _by(field: str) -> KeySpec:
    return ((field, REQUIRED),)


KNOWN_FIELDS: dict[str, KeySpec] = {
    **{name: _by("name") for name in (*CONTAINER_LISTS, "env", "volumes", "imagePullSecrets")},
    "volumeMounts": _by("mountPath"),
    "volumeDevices": _by("devicePath"),
    "hostAliases": _by("ip"),
    "conditions": _by("type"),
    "topologySpreadConstraints": _by("topologyKey"),
}
CONTAINER_PORTS: KeySpec = (("containerPort", REQUIRED), ("protocol", "TCP"))
SERVICE_PORTS: KeySpec = (("port", REQUIRED), ("protocol", "TCP"))


def _known_spec(where: Where) -> KeySpec | None:
    path = where.path
    if not path:
        return None
    if path[-1] != "ports":
        return KNOWN_FIELDS.get(path[-1])
    if len(path) >= 3 and path[-2].startswith("[") and path[-3] in CONTAINER_LISTS:
        return CONTAINER_PORTS
    if where.kind == "Service" and path == ("spec", "ports"):
        return SERVICE_PORTS
    return None


def key_of(element: Any, spec: KeySpec) -> tuple | None:
    """The element's identity under `spec`, or None when it lacks a key field. Values carry their
    type so that `name: "1"` and `name: 1` are different elements, as they are in YAML."""
    if not isinstance(element, dict):
        return None
    values = []
    for field, default in spec:
        value = element.get(field)
        value = default if value is None else value
        if not isinstance(value, SCALARS):
            return None
        values.append((type(value), value))
    return tuple(values)


def selector(element: dict, spec: KeySpec) -> str:
    """`[name=nginx]`, `[containerPort=53,protocol=UDP]`: how paths and messages name an element."""
    parts = [f"{field}={element[field]}" for field, _ in spec if element.get(field) is not None]
    return "[" + ",".join(parts) + "]"


def associative_key(lists: list[list], where: Where) -> KeySpec | None:
    """The key all `lists` (the versions of one field being merged) share, or None for a plain
    list. Empty lists carry no evidence either way, so they never make a list plain."""
    elements = [element for items in lists for element in items]
    spec = _known_spec(where)
    if spec is not None and all(key_of(element, spec) is not None for element in elements):
        return spec
    if not elements:
        return None
    return _seed_key(lists, elements, where)


def _seed_key(lists: list[list], elements: list, where: Where) -> KeySpec | None:
    carried = [field for field in SEED_KEYS if all(key_of(e, _by(field)) is not None for e in elements)]
    for field in carried:
        if all(_unique(items, _by(field)) for items in lists):
            return _by(field)
    if carried:
        raise MergeConflict(where, f"elements repeat every key they could be paired by ({', '.join(carried)})")
    return None


def _unique(items: list, spec: KeySpec) -> bool:
    keys = [key_of(element, spec) for element in items]
    return len(set(keys)) == len(keys)


def index(items: list, spec: KeySpec, where: Where) -> dict[tuple, dict]:
    """The elements by key, in list order; two elements with one key cannot be paired."""
    by_key: dict[tuple, dict] = {}
    for element in items:
        key = key_of(element, spec)
        assert key is not None, "associative_key chose a key every element carries"
        if key in by_key:
            raise MergeConflict(where.element(selector(element, spec)), "two elements in one list have this key")
        by_key[key] = element
    return by_key
