"""The KRM function protocol shared by the test function images (staged into each context by
scripts/build_images.py): one ResourceList on stdin, one on stdout, messages on stderr. libyaml's
C loader and dumper when present, because these images run in nearly every pipeline test."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

ResourceList = dict[str, Any]


def parse(raw: bytes) -> ResourceList:
    """The ResourceList in raw (an empty input is an empty list)."""
    return yaml.load(raw, Loader=LOADER) or {"apiVersion": "config.kubernetes.io/v1",
                                             "kind": "ResourceList", "items": []}


def config(resource_list: ResourceList) -> dict[str, Any]:
    """functionConfig.data: the test functions are configured by a ConfigMap."""
    return (resource_list.get("functionConfig") or {}).get("data") or {}


def emit(resource_list: ResourceList) -> None:
    """Write the ResourceList to stdout, keys in the order they came."""
    yaml.dump(resource_list, sys.stdout, Dumper=DUMPER, sort_keys=False,
              default_flow_style=False, allow_unicode=True)


def run(transform: Callable[[ResourceList], ResourceList]) -> None:
    """Read, transform, write; a failure is one line on stderr and exit 1, never a traceback."""
    try:
        emit(transform(parse(sys.stdin.buffer.read())))
    except Exception as exc:  # noqa: BLE001 - the protocol wants a message, not a traceback
        print(f"{sys.argv[0]}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
