#!/usr/bin/env python3
"""set-namespace (image fnrun/set-namespace:v1): move every namespaced resource into one namespace.

Config: ConfigMap `data.namespace`, or a custom resource's `spec.namespace`.

Decisions:
- Cluster-scoped kinds are left alone: the built-in ones (sdk.CLUSTER_SCOPED_KINDS) and the kinds of
  any CustomResourceDefinition in the list with `scope: Cluster`. Unknown kinds count as namespaced.
- Local-config resources (`config.kubernetes.io/local-config: "true"`) and kpt's Kptfiles are left
  alone: they never reach a cluster, and other functions read them as they were written (a
  `fnrun run --image` function gets the Kptfile as an item, as kpt fn eval's does).
- References follow the move when they pointed at a namespace the function moved resources out of:
  ServiceAccount subjects of RoleBindings and ClusterRoleBindings, the service of webhook
  configurations, APIServices and CRD conversion webhooks, and a Namespace resource itself is
  renamed. References to other namespaces (e.g. `kube-system`) are kept, as they name resources
  outside the package.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from functions import sdk

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

#: Fields that name a namespace, by kind: (list to walk or None, path of the namespace inside).
_SERVICE_REFS: dict[str, list[tuple[str | None, str]]] = {
    "MutatingWebhookConfiguration": [("webhooks", "clientConfig.service.namespace")],
    "ValidatingWebhookConfiguration": [("webhooks", "clientConfig.service.namespace")],
    "APIService": [(None, "spec.service.namespace")],
    "CustomResourceDefinition": [(None, "spec.conversion.webhook.clientConfig.service.namespace")],
}


@dataclass
class Config:
    namespace: str

    def __post_init__(self) -> None:
        if not _DNS_LABEL.match(self.namespace):
            raise sdk.ConfigError(f"namespace {self.namespace!r} is not a valid namespace name (RFC 1123 label)")


def cluster_scoped_kinds(items: list[sdk.Resource]) -> set[str]:
    """The built-in cluster-scoped kinds plus those declared cluster-scoped by CRDs in the list."""
    kinds = set(sdk.CLUSTER_SCOPED_KINDS)
    for crd in items:
        if crd.kind == "CustomResourceDefinition" and crd.get("spec.scope") == "Cluster":
            kinds.add(str(crd.get("spec.names.kind", "")))
    return kinds


def set_namespace(resources: sdk.ResourceList, config: Config) -> None:
    cluster_kinds = cluster_scoped_kinds(resources.items)
    movable = [r for r in resources.items if not r.is_local_config and not _is_kptfile(r)]
    moved_from = set()
    for resource in movable:
        if resource.kind not in cluster_kinds:
            if resource.namespace and resource.namespace != config.namespace:
                moved_from.add(resource.namespace)
            resource.namespace = config.namespace
    for resource in movable:
        _follow_references(resource, moved_from, config.namespace)


def _is_kptfile(resource: sdk.Resource) -> bool:
    return resource.kind == "Kptfile" and str(resource.get("apiVersion", "")).startswith("kpt.dev/")


def _follow_references(resource: sdk.Resource, moved_from: set[str], namespace: str) -> None:
    def retarget(node: dict, path: str) -> None:
        if sdk.paths.lookup(node, path) in moved_from:
            sdk.paths.assign(node, path, namespace)

    if resource.kind == "Namespace" and resource.name in moved_from:
        resource.set("metadata.name", namespace)
    if resource.kind in ("RoleBinding", "ClusterRoleBinding"):
        for subject in resource.get("subjects") or []:
            if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount":
                retarget(subject, "namespace")
    for list_path, path in _SERVICE_REFS.get(resource.kind, []):
        nodes = (resource.get(list_path) or []) if list_path else [resource.data]
        for node in nodes:
            if isinstance(node, dict):
                retarget(node, path)


if __name__ == "__main__":
    sdk.main(set_namespace, Config)
