"""Values that changed only in how they were read. fnrun reads YAML 1.2, as kyaml does; Kubernetes
(sigs.k8s.io/yaml) and most function libraries (PyYAML, js-yaml's defaults, go-yaml v2) read YAML
1.1 and hand keys through JSON. So `mode: 0400` is 400 to fnrun and 256 to them, `enabled: yes` is
a string to fnrun and true to them, and the key `404:` comes back as the string "404". A function
that returns those values changed nothing the cluster would see: the original's value (and so its
text) is kept, and only real changes are written."""

from __future__ import annotations

import json
from typing import Any

import yaml

from .roundtrip import same

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def kept(new: Any, old: Any, text: str) -> Any:
    """`new` with every part whose YAML 1.1 reading of `text` (the original document, whose
    YAML 1.2 value is `old`), or whose keys as JSON strings, equal it put back as `old` has it.
    Costs a walk of what differs; `text` is parsed again only where a difference could be one of
    reading."""
    if not _maybe(new, old):
        return new
    try:
        read11 = yaml.load(text, Loader=_Loader)  # the safe loader
    except yaml.YAMLError:
        read11 = None
    return _restore(new, old, read11)


def _maybe(new: Any, old: Any) -> bool:
    """Whether some difference between new and old could be a reading's: a scalar for a scalar
    of another value, or a string key where the old one was not a string."""
    if new == old:
        return False
    if isinstance(new, dict) and isinstance(old, dict):
        if any(k not in old for k in new) and any(k not in new for k in old):
            return True  # a key that may be another spelling of one that is gone
        return any(_maybe(v, old[k]) for k, v in new.items() if k in old)
    if isinstance(new, list) and isinstance(old, list):
        return len(new) == len(old) and any(_maybe(a, b) for a, b in zip(new, old))
    if isinstance(old, str):
        return not isinstance(new, (str, dict, list))  # `yes`, `1:20`, `1_000`: not strings in 1.1
    if isinstance(old, int) and not isinstance(old, bool):
        if isinstance(new, str):
            return True  # `0o400`: a string in 1.1
        digits = str(old)
        return isinstance(new, int) and digits.isdigit() and "8" not in digits and "9" not in digits and int(digits, 8) == new
    return False


def _json_key(key: Any) -> str:
    return key if isinstance(key, str) else json.dumps(key)


def _restore(new: Any, old: Any, read11: Any) -> Any:
    if isinstance(new, dict) and isinstance(old, dict):
        by11 = dict(zip(old, read11)) if isinstance(read11, dict) and len(read11) == len(old) else {}
        as_json = {}
        if any(k not in old for k in new):  # a key read another way (`on:` is true in 1.1), or as JSON
            as_json = {_json_key(k): k for k in old if not isinstance(k, str)}
            as_json.update((_json_key(k11), k) for k, k11 in by11.items() if k11 != k and not isinstance(k11, str))
        out = {}
        for key, value in new.items():
            own = key if key in old else as_json.get(key, key) if isinstance(key, str) else key
            if own in out or (own is not key and own in new):
                own = key  # both spellings present: two keys, not one read twice
            if own in old:
                out[own] = _restore(value, old[own], read11.get(by11[own]) if own in by11 else None)
            else:
                out[own] = value
        return out
    if isinstance(new, list) and isinstance(old, list):
        parts = read11 if isinstance(read11, list) and len(read11) == len(old) else [None] * len(old)
        return [_restore(a, b, c) if n < len(old) else a for n, (a, b, c) in enumerate(zip(new, old, parts))] + new[len(old) :]
    if isinstance(new, (dict, list)) or isinstance(old, (dict, list)) or same(new, old):
        return new
    return old if read11 is not None and same(new, read11) else new
