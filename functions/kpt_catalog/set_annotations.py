"""set-annotations (kpt catalog): add annotations to every resource and, as kustomize's
commonAnnotations does, to workloads' pod templates (CronJobs' job templates too), plus the
`additionalAnnotationFields` the config names.

Config: a ConfigMap's `data`, or `SetAnnotations` with `annotations:` and
`additionalAnnotationFields: [{group, version, kind, path, create}]` (the legacy
`SetAnnotationConfig` calls them `fieldSpecs`)."""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm

_TEMPLATE = ["spec/template/metadata/annotations"]
FIELDS: dict[str, list[str]] = {
    **{kind: _TEMPLATE for kind in ("ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job")},
    "CronJob": ["spec/jobTemplate/metadata/annotations", "spec/jobTemplate/spec/template/metadata/annotations"],
}


def set_annotations(items: list[krm.Item], config: krm.Item) -> list[dict]:
    annotations = krm.string_map(config, "annotations", "SetAnnotations", "SetAnnotationConfig")
    if not annotations:
        raise krm.ConfigError("input annotation list cannot be empty")
    extra = config.get("additionalAnnotationFields") or config.get("fieldSpecs") or [] if config.get("kind") != "ConfigMap" else []
    if not isinstance(extra, list) or not all(isinstance(f, dict) and f.get("path") for f in extra):
        raise krm.ConfigError("set-annotations: each additionalAnnotationFields entry needs a `path`")
    for item in items:
        targets = [(["metadata", "annotations"], True), *((p.split("/"), True) for p in FIELDS.get(str(item.get("kind")), []))]
        version = str(item.get("apiVersion") or "").rpartition("/")[2]
        for field in extra:
            if all(field.get(k) in (None, "", v) for k, v in (("group", krm.group_of(item)), ("version", version), ("kind", item.get("kind")))):
                targets.append((str(field["path"]).strip("/").split("/"), bool(field.get("create"))))
        for path, create in targets:
            for mapping in krm.walk(item, path, create):
                mapping.update(annotations)
    return []


if __name__ == "__main__":
    krm.main(set_annotations, "set-annotations")
