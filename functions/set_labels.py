#!/usr/bin/env python3
"""set-labels (image fnrun/set-labels:v1): add labels to every resource and to its pods.

Config: the labels as a ConfigMap's `data` (every key is a label, except `includeSelectors`), or a
custom resource with `spec.labels` (a map) and optional `spec.includeSelectors`.

Decisions:
- Every resource gets the labels in `metadata.labels`; workloads' pod templates too (a CronJob's job
  template as well), so the pods carry what the workload carries.
- Selectors are left alone unless `includeSelectors: true`. The API needs a workload's selector to
  match its pod template; adding labels to the template only keeps that true. Adding them to selectors
  (what kustomize's commonLabels does) makes the change unappliable to a live Deployment, StatefulSet,
  DaemonSet or Job, whose selectors are immutable, and narrows Services to pods of this package.
  With `includeSelectors: true`, existing selectors get the labels (workloads' `matchLabels`, a
  ReplicationController's selector, Service and PodDisruptionBudget selectors); none is created.
- Local-config resources are left alone: they never reach a cluster.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from functions import sdk

_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

#: Where existing selectors keep their labels, by kind (only with includeSelectors).
_SELECTORS = {
    "Deployment": "spec.selector.matchLabels",
    "StatefulSet": "spec.selector.matchLabels",
    "DaemonSet": "spec.selector.matchLabels",
    "ReplicaSet": "spec.selector.matchLabels",
    "PodDisruptionBudget": "spec.selector.matchLabels",
    "ReplicationController": "spec.selector",
    "Service": "spec.selector",
}


@dataclass
class Config:
    labels: dict[str, str] = sdk.rest()
    include_selectors: bool = False

    def __post_init__(self) -> None:
        if not self.labels:
            raise sdk.ConfigError("no labels given")
        for key, value in self.labels.items():
            prefix, _, name = key.rpartition("/")
            if not name or not _NAME.match(name) or (prefix and (len(prefix) > 253 or not _PREFIX.match(prefix))):
                raise sdk.ConfigError(f"label key {key!r} is not a valid Kubernetes label key")
            if not _NAME.match(value):
                raise sdk.ConfigError(f"label {key}: value {value!r} is not a valid label value")


def set_labels(resources: sdk.ResourceList, config: Config) -> None:
    for resource in resources.items:
        if resource.is_local_config:
            continue
        targets: list[list[Any]] = [["metadata", "labels"]]
        template = resource.pod_template_path
        if template:
            targets.append([*template, "metadata", "labels"])
        if resource.kind == "CronJob" and template:
            targets.append(["spec", "jobTemplate", "metadata", "labels"])
        if config.include_selectors and resource.kind in _SELECTORS and resource.get("spec.selector"):
            targets.append(sdk.paths.parse(_SELECTORS[resource.kind]))
        for target in targets:
            for key, value in config.labels.items():
                resource.set([*target, key], value)


if __name__ == "__main__":
    sdk.main(set_labels, Config)
