"""set-labels (kpt catalog): add labels to every resource, and where kustomize's commonLabels puts
them: workloads' selectors and pod templates, Services' selectors, and the label selectors of
affinity rules, PodDisruptionBudgets and NetworkPolicies (those only when present).

Config: a ConfigMap's `data`, or `SetLabels` with `labels:`."""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm  # noqa: E402

_AFFINITY = [
    f"spec/template/spec/affinity/{kind}/{rule}/labelSelector/matchLabels"
    for kind in ("podAffinity", "podAntiAffinity")
    for rule in ("preferredDuringSchedulingIgnoredDuringExecution[]/podAffinityTerm", "requiredDuringSchedulingIgnoredDuringExecution[]")
] + ["spec/template/spec/topologySpreadConstraints[]/labelSelector/matchLabels"]
_WORKLOAD = [("spec/selector/matchLabels", True), ("spec/template/metadata/labels", True), *((p, False) for p in _AFFINITY)]
# kind -> (path, create): where a label goes besides metadata.labels
FIELDS: dict[str, list[tuple[str, bool]]] = {
    "Service": [("spec/selector", True)],
    "ReplicationController": [("spec/selector", True), ("spec/template/metadata/labels", True)],
    "Deployment": _WORKLOAD,
    "ReplicaSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD,
    "StatefulSet": [*_WORKLOAD, ("spec/volumeClaimTemplates[]/metadata/labels", False)],
    "Job": [("spec/selector/matchLabels", False), ("spec/template/metadata/labels", True)],
    "CronJob": [
        ("spec/jobTemplate/spec/selector/matchLabels", False),
        ("spec/jobTemplate/metadata/labels", True),
        ("spec/jobTemplate/spec/template/metadata/labels", True),
    ],
    "PodDisruptionBudget": [("spec/selector/matchLabels", False)],
    "NetworkPolicy": [
        ("spec/podSelector/matchLabels", False),
        ("spec/ingress[]/from[]/podSelector/matchLabels", False),
        ("spec/egress[]/to[]/podSelector/matchLabels", False),
    ],
}


def set_labels(items: list[krm.Item], config: krm.Item) -> list[dict]:
    labels = krm.string_map(config, "labels", "set-labels")
    if not labels:
        return [krm.result("no labels to set", "info")]
    for item in items:
        targets = [(["metadata", "labels"], True), *((p.split("/"), c) for p, c in FIELDS.get(str(item.get("kind")), []))]
        for path, create in targets:
            for mapping in krm.walk(item, path, create):
                mapping.update(labels)
    return []


if __name__ == "__main__":
    krm.main(set_labels, "set-labels")
