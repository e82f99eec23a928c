"""A small SDK for writing KRM configuration functions in Python.

A function is a plain callable over a `ResourceList` (and a typed config); `main` supplies the
process contract of the functions spec: ResourceList in on stdin and out on stdout, comments kept,
messages on stderr, exit 1 on a bad config or an error result, never a traceback for either.

Example, a complete function (`printf '...' | python3 -m functions.add_team`):

    from dataclasses import dataclass

    from functions import sdk


    @dataclass
    class Config:
        team: str  # ConfigMap `data.team`, or `spec.team` of a custom resource
        require_limits: bool = False  # "true" in a ConfigMap becomes True


    def add_team(resources: sdk.ResourceList, config: Config) -> None:
        for resource in resources.items:
            resource.set_label("team", config.team)  # no-op when already set: idempotent
            for container in resource.containers() if config.require_limits else ():
                if not container.get("resources.limits"):
                    resources.error(f"container {container.name!r} has no limits", resource,
                                    field=container.field("resources", "limits"))


    if __name__ == "__main__":
        sdk.main(add_team, Config)

Field paths (`spec.template.spec.containers[name=web].image`) are described in `sdk.paths`.
"""

from . import paths
from .config import ConfigError, Error, load_config, rest
from .resource import CLUSTER_SCOPED_KINDS, POD_TEMPLATES, Container, Resource, plain, unmatched
from .resourcelist import InputError, ResourceList
from .results import Field, Result, Severity
from .runner import main, process, run

__all__ = [
    "CLUSTER_SCOPED_KINDS", "POD_TEMPLATES", "paths", "ConfigError", "Container", "Error", "Field", "InputError",
    "Resource", "ResourceList", "Result", "Severity", "load_config", "main", "plain", "process", "rest", "run", "unmatched",
]
