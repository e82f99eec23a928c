"""set-image (kpt catalog): for every image named `name` (any tag or digest), set
`newName:newTag` or `newName@digest`; a part not given stays as it was.

Where: every `containers` and `initContainers` list, at any depth (Pods, workloads' templates,
CronJobs), and the `additionalImageFields` the config names. Config: a ConfigMap's `data`
(name, newName, newTag, digest) or `SetImage` with `image: {name, newName, newTag, digest}` and
`additionalImageFields: [{group, version, kind, path, create}]`."""

from __future__ import annotations

import os
import sys
from typing import Any

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm


def split_image(image: str) -> tuple[str, str]:
    """(name, suffix): the suffix is `:tag`, `@digest`, both, or ''."""
    name, at, digest = image.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        return name[:colon], name[colon:] + at + digest
    return name, at + digest


def set_image(items: list[krm.Item], config: krm.Item) -> list[dict]:
    krm.check_kind(config, "SetImage")
    spec = config.get("data") if config.get("kind") == "ConfigMap" else config.get("image")
    spec = {k: str(v) for k, v in (spec or {}).items() if v not in (None, "")}
    if not spec.get("name"):
        raise krm.ConfigError("must specify `name`")
    if not (spec.keys() & {"newName", "newTag", "digest"}):
        raise krm.ConfigError("must specify one of `newName`, `newTag`, or `digest`")
    if "newTag" in spec and "digest" in spec:
        raise krm.ConfigError("image `newTag` and `digest` both specified")
    extra = config.get("additionalImageFields") or [] if config.get("kind") != "ConfigMap" else []

    def replace(image: Any) -> Any:
        if not isinstance(image, str):
            return image
        name, suffix = split_image(image)
        if name != spec["name"]:
            return image
        if "digest" in spec:
            suffix = "@" + spec["digest"]
        elif "newTag" in spec:
            suffix = ":" + spec["newTag"]
        return spec.get("newName", name) + suffix

    for item in items:
        _containers(item, replace)
        version = str(item.get("apiVersion") or "").rpartition("/")[2]
        for field in extra:
            if not isinstance(field, dict) or not field.get("path"):
                raise krm.ConfigError("each additionalImageFields entry needs a `path`")
            if all(field.get(k) in (None, "", v) for k, v in (("group", krm.group_of(item)), ("version", version), ("kind", item.get("kind")))):
                *parents, key = str(field["path"]).strip("/").split("/")
                for mapping in krm.walk(item, parents, bool(field.get("create"))):
                    if key in mapping or field.get("create"):
                        mapping[key] = replace(mapping.get(key, spec.get("newName", spec["name"])))
    return []


def _containers(node: Any, replace: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                for container in value:
                    if isinstance(container, dict) and "image" in container:
                        container["image"] = replace(container["image"])
            else:
                _containers(value, replace)
    elif isinstance(node, list):
        for value in node:
            _containers(value, replace)


if __name__ == "__main__":
    krm.main(set_image, "set-image")
