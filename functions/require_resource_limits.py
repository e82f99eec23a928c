#!/usr/bin/env python3
"""require-resource-limits (image fnrun/require-resource-limits:v1): fail when a container has no limits.

One error result per container (init containers included) and missing limit, naming the resource,
the container and the field (`spec.template.spec.containers[name=web].resources.limits.cpu`), with
the file and index the resource came from. Nothing is edited.

Config (optional): `resources`, the limits to require (default `cpu, memory`; a ConfigMap takes a
comma-separated string), and `severity` (error | warning; default error) for a softer roll-out.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from functions import sdk


@dataclass
class Config:
    resources: list[str] = field(default_factory=lambda: ["cpu", "memory"])
    severity: Literal["error", "warning"] = "error"


def require_resource_limits(resources: sdk.ResourceList, config: Config) -> None:
    for workload in resources.workloads():
        for container in workload.containers():
            limits = container.get("resources.limits") or {}
            for name in config.resources:
                if limits.get(name) in (None, ""):
                    kind = "init container" if container.init else "container"
                    resources.report(
                        f"{kind} {container.name!r} of {workload.display} has no {name} limit",
                        workload, severity=config.severity,
                        field=container.field("resources", "limits", name),
                        tags={"container": container.name, "resource": name})


if __name__ == "__main__":
    sdk.main(require_resource_limits, Config)
