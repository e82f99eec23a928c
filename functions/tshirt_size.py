#!/usr/bin/env python3
"""tshirt-size (image fnrun/tshirt-size:v1): a size annotation on a workload becomes container resources.

`fnrun.dev/tshirt-size: small|medium|large` on a workload sets `resources.requests` and
`resources.limits` (cpu, memory) of each of its containers, init containers included (so the result
passes require-resource-limits). Other resource keys (ephemeral-storage, GPUs) are kept. Running it
twice changes nothing; changing the annotation and running again changes only those values.

Config (optional): `annotation`, the annotation to read; `sizes`, a map of size name to
`{requests: {...}, limits: {...}}` that adds to or overrides the built-in sizes (custom resource only:
ConfigMap data cannot hold maps).

An unknown size is an error result naming the resource; the annotation on a resource that has no pods
is a warning.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from functions import sdk


@dataclass
class Size:
    requests: dict[str, str] = field(default_factory=dict)
    limits: dict[str, str] = field(default_factory=dict)


DEFAULT_SIZES = {
    "small": Size(requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "250m", "memory": "256Mi"}),
    "medium": Size(requests={"cpu": "250m", "memory": "512Mi"}, limits={"cpu": "500m", "memory": "1Gi"}),
    "large": Size(requests={"cpu": "1", "memory": "2Gi"}, limits={"cpu": "2", "memory": "4Gi"}),
}


@dataclass
class Config:
    annotation: str = "fnrun.dev/tshirt-size"
    sizes: dict[str, Size] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = {**DEFAULT_SIZES, **{k.lower(): v for k, v in self.sizes.items()}}


def tshirt_size(resources: sdk.ResourceList, config: Config) -> None:
    annotation_field = sdk.paths.render(["metadata", "annotations", config.annotation])
    for resource in resources.items:
        size_name = resource.annotations.get(config.annotation)
        if size_name is None:
            continue
        if not resource.is_workload:
            resources.warning(f"{config.annotation} has no effect on {resource.display}: it has no pods",
                              resource, field=annotation_field)
            continue
        size = config.sizes.get(str(size_name).strip().lower())
        if size is None:
            resources.error(f"{resource.display}: unknown t-shirt size {str(size_name)!r} "
                            f"(known: {', '.join(config.sizes)})", resource,
                            field=sdk.Field(annotation_field, current_value=str(size_name)))
            continue
        for container in resource.containers():
            for section, quantities in (("requests", size.requests), ("limits", size.limits)):
                for name, quantity in quantities.items():
                    if str(container.get(["resources", section, name], "")) != quantity:
                        sdk.paths.assign(container.data, ["resources", section, name], quantity)


if __name__ == "__main__":
    sdk.main(tshirt_size, Config)
