#!/usr/bin/env python3
"""check-service-selectors (image fnrun/check-service-selectors:v1): find Services that select no pods.

An error result for each Service whose `spec.selector` matches the pod template labels of no workload
(Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob, Pod) of the same
namespace in the list, with the selector as the field's current value and, when one exists, the
closest workload named in the message. Nothing is edited; no config is needed.

Decisions: Services without a selector (or of type ExternalName) are skipped, since their endpoints
are managed elsewhere. A missing namespace only matches a missing namespace: the package cannot know
where `kubectl apply` will put such resources. Local-config workloads do not count as targets.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from functions import sdk


def check_service_selectors(resources: sdk.ResourceList) -> None:
    workloads = [w for w in resources.workloads() if not w.is_local_config]
    for service in resources.items:
        selector = service.get("spec.selector")
        if service.kind != "Service" or service.group or not isinstance(selector, dict) or not selector \
                or service.get("spec.type") == "ExternalName":
            continue
        wanted = {str(k): str(v) for k, v in selector.items()}
        candidates = [w for w in workloads if w.namespace == service.namespace]
        if any(not sdk.unmatched(wanted, w.pod_labels) for w in candidates):
            continue
        where = f"namespace {service.namespace!r}" if service.namespace else "no namespace"
        message = f"Service {service.name}: selector {_show(wanted)} matches no workload's pods in {where}"
        closest = min(candidates, key=lambda w: len(sdk.unmatched(wanted, w.pod_labels)), default=None)
        lacking = sdk.unmatched(wanted, closest.pod_labels) if closest else wanted
        if closest and len(lacking) < len(wanted):
            message += f"; closest is {closest.display}, whose pods lack {_show(lacking)}"
        resources.error(message, service, field=sdk.Field("spec.selector", current_value=selector))


def _show(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


if __name__ == "__main__":
    sdk.main(check_service_selectors)
