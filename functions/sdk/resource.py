"""One KRM resource, edited in place on its round-trip node so comments, key order and quoting survive.

Kubernetes knowledge that several functions need lives here once: where each workload keeps its pod
template, and which kinds are cluster-scoped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orchestrator import annotations as keys

from . import paths
from .paths import PathLike

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

#: Where each workload kind keeps its pod template (metadata + spec), by kind and allowed API groups.
#: The group check keeps custom resources that reuse a name (volcano's batch.volcano.sh Job) out.
POD_TEMPLATES: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "Deployment": (frozenset({"apps", "extensions"}), ("spec", "template")),
    "StatefulSet": (frozenset({"apps"}), ("spec", "template")),
    "DaemonSet": (frozenset({"apps", "extensions"}), ("spec", "template")),
    "ReplicaSet": (frozenset({"apps", "extensions"}), ("spec", "template")),
    "ReplicationController": (frozenset({""}), ("spec", "template")),
    "Job": (frozenset({"batch"}), ("spec", "template")),
    "CronJob": (frozenset({"batch"}), ("spec", "jobTemplate", "spec", "template")),
    "Pod": (frozenset({""}), ()),
}

#: Built-in kinds that live outside any namespace. Unknown kinds count as namespaced, as kubectl
#: and kustomize assume; a CRD in the same list can say otherwise (see set_namespace).
CLUSTER_SCOPED_KINDS = frozenset({
    "APIService", "CertificateSigningRequest", "ClusterRole", "ClusterRoleBinding", "ComponentStatus",
    "CSIDriver", "CSINode", "CustomResourceDefinition", "FlowSchema", "IngressClass",
    "MutatingWebhookConfiguration", "Namespace", "Node", "PersistentVolume", "PodSecurityPolicy",
    "PriorityClass", "PriorityLevelConfiguration", "RuntimeClass", "StorageClass",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration",
    "VolumeAttachment",
})

CONTAINER_LISTS = ("initContainers", "containers")


def plain(value: Any) -> Any:
    """A builtin copy of a YAML node (dicts, lists, str): to compare content regardless of key order and
    comments, or to emit a value taken from an item without making a YAML alias of it."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value) if isinstance(value, str) else value


def unmatched(selector: dict, labels: dict) -> dict[str, str]:
    """The pairs of an equality selector (matchLabels, a Service selector) that `labels` lack."""
    return {str(k): str(v) for k, v in selector.items() if k not in labels or str(labels[k]) != str(v)}


@dataclass(frozen=True)
class Container:
    """A container of a workload: its node (edit it in place), its list and its field path."""

    data: CommentedMap
    path: str  # e.g. spec.template.spec.containers[name=web]
    init: bool

    @property
    def name(self) -> str:
        return str(self.data.get("name", ""))

    def get(self, path: PathLike, default: Any = None) -> Any:
        return paths.lookup(self.data, path, default)

    def field(self, *keys: str) -> str:
        """The field path of something inside this container, for results."""
        return paths.render([*paths.parse(self.path), *keys])


class Resource:
    """A wrapper over one item's round-trip mapping; every edit goes to `data` directly."""

    def __init__(self, data: dict) -> None:  # a round-trip mapping read from text, or plain data handed over
        self.data = data

    def __repr__(self) -> str:
        return f"Resource({self.display})"

    # identity ---------------------------------------------------------------------------------
    @property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion", ""))

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))

    @property
    def name(self) -> str:
        return str(self.get("metadata.name", ""))

    @property
    def namespace(self) -> str | None:
        value = self.get("metadata.namespace")
        return None if value is None else str(value)

    @namespace.setter
    def namespace(self, value: str | None) -> None:
        if value is None:
            paths.remove(self.data, "metadata.namespace")
        else:
            self.set("metadata.namespace", value)

    @property
    def display(self) -> str:
        """How messages name the resource: `Deployment shop/web`."""
        ns = self.namespace
        return f"{self.kind} {ns}/{self.name}" if ns else f"{self.kind} {self.name}"

    @property
    def ref(self) -> dict[str, str]:
        """The result schema's resourceRef."""
        ref = {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}
        if self.namespace:
            ref["namespace"] = self.namespace
        return ref

    @property
    def file(self) -> dict[str, Any] | None:
        """The result schema's file {path, index}, from the orchestrator's annotations."""
        path = keys.get_path(self.data)
        return None if path is None else {"path": path, "index": keys.get_index(self.data)}

    @property
    def is_local_config(self) -> bool:
        return str(self.annotations.get(keys.LOCAL_CONFIG, "")).lower() == "true"

    # fields -----------------------------------------------------------------------------------
    def get(self, path: PathLike, default: Any = None) -> Any:
        return paths.lookup(self.data, path, default)

    def set(self, path: PathLike, value: Any) -> bool:
        """Set a field, creating parents; True when the value changed."""
        return paths.assign(self.data, path, value)

    def delete(self, path: PathLike) -> bool:
        return paths.remove(self.data, path)

    @property
    def labels(self) -> dict:
        return self.get("metadata.labels") or {}

    @property
    def annotations(self) -> dict:
        return self.get("metadata.annotations") or {}

    def set_label(self, key: str, value: str) -> bool:
        return self.set(["metadata", "labels", key], value)

    def set_annotation(self, key: str, value: str) -> bool:
        return self.set(["metadata", "annotations", key], value)

    def remove_annotation(self, key: str) -> bool:
        return self.delete(["metadata", "annotations", key])

    # workloads --------------------------------------------------------------------------------
    @property
    def pod_template_path(self) -> tuple[str, ...] | None:
        """Where the pod template (its metadata and spec) lives; () for a Pod; None if no workload."""
        groups, path = POD_TEMPLATES.get(self.kind, (frozenset(), None))
        return path if self.group in groups else None

    @property
    def is_workload(self) -> bool:
        return self.pod_template_path is not None

    @property
    def pod_labels(self) -> dict:
        """The labels the workload's pods get; {} for anything else."""
        path = self.pod_template_path
        return {} if path is None else self.get([*path, "metadata", "labels"]) or {}

    def containers(self, init: bool = True) -> Iterator[Container]:
        """The workload's containers, init containers first (when asked), each with its field path."""
        template = self.pod_template_path
        if template is None:
            return
        for list_name in CONTAINER_LISTS if init else CONTAINER_LISTS[1:]:
            list_path = [*template, "spec", list_name]
            for index, data in enumerate(self.get(list_path) or []):
                if not isinstance(data, dict):
                    continue
                name = data.get("name")
                seg = ("name", str(name)) if name is not None else index
                yield Container(data, paths.render([*list_path, seg]), list_name == "initContainers")
