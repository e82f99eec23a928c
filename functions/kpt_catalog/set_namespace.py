"""set-namespace (kpt catalog): move a package's resources to one namespace.

Config: a ConfigMap with `data.namespace` (or `data.name`, as in kpt's package-context.yaml), or
`SetNamespace` with `namespace:`; `namespaceMatcher` limits the change to that old namespace.
What changes (for the old namespace, or any when there is no matcher): namespaced resources'
`metadata.namespace` (built-in kinds get one when they have none; other kinds only when they
have one), the Namespace object's name, ServiceAccount subjects of (Cluster)RoleBindings, CRD
conversion webhooks' and APIServices' service namespaces when set, and the namespace in
`config.kubernetes.io/depends-on` references to resources of this package. Local-config
resources are left alone."""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm
from functions.sdk.resource import CLUSTER_SCOPED_KINDS

DEPENDS_ON = "config.kubernetes.io/depends-on"


def is_builtin(item: krm.Item) -> bool:
    group = krm.group_of(item)
    return "." not in group or group.endswith(".k8s.io")


def set_namespace(items: list[krm.Item], config: krm.Item) -> list[dict]:
    krm.check_kind(config, "SetNamespace")
    data = krm.config_data(config, "namespace", "namespaceMatcher")
    namespace = data.get("namespace") or (data.get("name") if config.get("kind") == "ConfigMap" else None)
    if not isinstance(namespace, str) or not namespace:
        raise krm.ConfigError("`namespace` should not be empty")
    matcher = data.get("namespaceMatcher") or None

    def matches(old: object) -> bool:
        return matcher is None or old == matcher

    def move(mapping: dict | None, key: str = "namespace") -> None:
        if isinstance(mapping, dict) and mapping.get(key) and matches(mapping[key]):
            mapping[key] = namespace

    moved: set[tuple[str, str, str, str]] = set()  # (group, kind, old namespace, name) of what moved
    for item in items:
        if krm.is_local_config(item):
            continue
        kind, meta = str(item.get("kind")), krm.metadata(item)
        if kind == "Namespace" and krm.group_of(item) == "":
            move(meta, "name")
        elif kind in ("RoleBinding", "ClusterRoleBinding"):
            for subject in item.get("subjects") or []:
                if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount":
                    move(subject)
        elif kind == "CustomResourceDefinition":
            for service in krm.walk(item, ["spec", "conversion", "webhook", "clientConfig", "service"], False):
                move(service)
        elif kind == "APIService":
            move((item.get("spec") or {}).get("service"))
        if kind in CLUSTER_SCOPED_KINDS:
            continue
        old = meta.get("namespace")
        if (old and matches(old)) or (not old and matcher is None and is_builtin(item)):
            moved.add((krm.group_of(item), kind, str(old or ""), str(meta.get("name"))))
            meta["namespace"] = namespace
    for item in items:
        annotations = krm.annotations_of(item)
        if isinstance(annotations.get(DEPENDS_ON), str):
            annotations[DEPENDS_ON] = ",".join(_depends_on(ref, moved, namespace) for ref in annotations[DEPENDS_ON].split(","))
    return []


def _depends_on(ref: str, moved: set[tuple[str, str, str, str]], namespace: str) -> str:
    """`group/namespaces/<ns>/Kind/name`: the namespace follows the resource it names, if it moved."""
    parts = ref.strip().split("/")
    if len(parts) == 5 and parts[1] == "namespaces" and (parts[0], parts[3], parts[2], parts[4]) in moved:
        parts[2] = namespace
        return "/".join(parts)
    return ref


if __name__ == "__main__":
    krm.main(set_namespace, "set-namespace", error_exit=0)  # as the catalog's: a bad config is an error result, exit 0
