#!/usr/bin/env python3
"""inject-sidecar (image fnrun/inject-sidecar:v1): add init and sidecar containers to chosen workloads.

Config, a custom resource:

    apiVersion: fnrun.dev/v1
    kind: SidecarInjection
    spec:
      selector:                  # every condition given must hold; none given: every workload
        kinds: [Deployment]      # the workload's kind
        matchLabels: {app: web}  # the workload's own metadata.labels include these
        matchAnnotations: {fnrun.dev/inject-proxy: "true"}
      initContainers: [...]      # appended to spec.initContainers of the pod template
      containers: [...]          # appended to spec.containers
      volumes: [...]             # appended to spec.volumes (what the new containers mount)

Decisions:
- Matching is by name: a container or volume of the same name already there is left as it is, so a
  second run adds nothing. When that existing one differs from the configured one, a warning says so
  (the function does not overwrite a container it cannot tell apart from a hand-written one).
- Comments written inside the configured entries travel with them into the workloads; the comment
  lines and blank lines that follow an entry in the config (above the next config key) do not. A
  list written inline (`containers: [{name: db, image: db:1}]`) stays inline and gets the entries
  without their comments, which an inline list cannot hold.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script (exec function, image entry point)
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from functions import sdk


@dataclass
class Selector:
    kinds: list[str] = field(default_factory=list)
    match_labels: dict[str, str] = field(default_factory=dict)
    match_annotations: dict[str, str] = field(default_factory=dict)

    def matches(self, resource: sdk.Resource) -> bool:
        return ((not self.kinds or resource.kind in self.kinds)
                and not sdk.unmatched(self.match_labels, resource.labels)
                and not sdk.unmatched(self.match_annotations, resource.annotations))


@dataclass
class Config:
    containers: list[dict] = field(default_factory=list)  # bare dict: the YAML nodes, comments kept
    init_containers: list[dict] = field(default_factory=list)
    volumes: list[dict] = field(default_factory=list)
    selector: Selector = field(default_factory=Selector)

    def __post_init__(self) -> None:
        if not (self.containers or self.init_containers):
            raise sdk.ConfigError("nothing to inject: give spec.containers or spec.initContainers")
        for list_name, entries in self.lists():
            seen = set()
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict) or not entry.get("name"):
                    raise sdk.ConfigError(f"config field '{list_name}[{i}]': expected a mapping with a name")
                if entry["name"] in seen:
                    raise sdk.ConfigError(f"config field '{list_name}': {entry['name']!r} appears twice")
                seen.add(entry["name"])

    def lists(self) -> list[tuple[str, list[dict]]]:
        """(pod spec list, entries to inject), init containers first."""
        return [("initContainers", self.init_containers), ("containers", self.containers),
                ("volumes", self.volumes)]


def inject_sidecar(resources: sdk.ResourceList, config: Config) -> None:
    for workload in resources.workloads():
        template = workload.pod_template_path
        if template is None or not config.selector.matches(workload):
            continue
        spec_path = [*template, "spec"]
        pod_spec = workload.get(spec_path)
        if not isinstance(pod_spec, dict):
            resources.error(f"{workload.display} has no pod spec to inject into", workload)
            continue
        for list_name, entries in config.lists():
            if entries:
                _inject(resources, workload, spec_path, pod_spec, list_name, entries)


def _inject(resources: sdk.ResourceList, workload: sdk.Resource, spec_path: list[str], pod_spec: dict,
            list_name: str, entries: list[dict]) -> None:
    present = pod_spec.get(list_name)
    if present is None:
        present = CommentedSeq()
        if list_name == "initContainers" and "containers" in pod_spec and isinstance(pod_spec, CommentedMap):
            pod_spec.insert(list(pod_spec).index("containers"), list_name, present)  # keep the reading order
        else:
            pod_spec[list_name] = present
    # An inline list (`containers: [{...}]`, or any list of an inline pod spec) gets inline entries,
    # and an inline entry has no room for a comment: ruamel would end the line inside the brackets.
    inline = _is_flow(pod_spec) or _is_flow(present)
    by_name = {str(e.get("name")): e for e in present if isinstance(e, dict)}
    for entry in entries:
        name = str(entry["name"])
        if name not in by_name:
            present.append(_uncommented(entry) if inline else _detached(entry))
        elif sdk.plain(by_name[name]) != sdk.plain(entry):
            path = sdk.paths.render([*spec_path, list_name, ("name", name)])
            resources.warning(f"{workload.display} already has {list_name} entry {name!r}, different from "
                              "the configured one; left as it is", workload, field=path)


def _detached(entry: dict) -> dict:
    """A copy of a config entry without what ruamel hangs on its last value: the full-line comments
    and blank lines that follow it in the config (e.g. a comment above `volumes:`) would otherwise
    land in the workload after the injected entry, at the config's columns."""
    entry = copy.deepcopy(entry)
    node: Any = entry
    while isinstance(node, (dict, list)) and node:
        last, slot = (next(reversed(node)), 2) if isinstance(node, dict) else (len(node) - 1, 0)
        comments = getattr(node, "ca", None)
        if comments is not None:
            comments.end = []
            token = comments.items.get(last, [None] * 4)[slot]
            if token is not None:
                eol = token.value.split("\n", 1)[0]
                # Keep the end-of-line comment of the entry's last line; drop the lines after it.
                if eol.lstrip().startswith("#"):
                    token.value = eol + "\n"
                else:
                    comments.items[last][slot] = None
        node = node[last]
    return entry


def _is_flow(node: Any) -> bool:
    """Whether a round-trip collection was written inline (`{...}`, `[...]`)."""
    attributes = getattr(node, "fa", None)
    return bool(attributes is not None and attributes.flow_style())


def _uncommented(node: Any) -> Any:
    """A copy without any comment, for a list written inline."""
    node = copy.deepcopy(node)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (dict, list)):
            if hasattr(current, "ca"):
                current.ca.items.clear()
                current.ca.comment = None
                current.ca.end = []
            stack.extend(current.values() if isinstance(current, dict) else current)
    return node


if __name__ == "__main__":
    sdk.main(inject_sidecar, Config)
