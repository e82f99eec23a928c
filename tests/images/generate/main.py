"""generate: appends a ConfigMap (functionConfig.data.name, default `generated`; optional
data.namespace) with no path annotation, so the orchestrator has to choose its file."""
import sys

from krm import ResourceList, config, run


def generate(resource_list: ResourceList) -> ResourceList:
    data = config(resource_list)
    metadata = {"name": str(data.get("name") or "generated")}
    if data.get("namespace"):
        metadata["namespace"] = str(data["namespace"])
    resource_list["items"] = list(resource_list.get("items") or []) + [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata,
        "data": {"generatedBy": "fnrun-test/generate"},
    }]
    print(f"generate: added ConfigMap {metadata['name']}", file=sys.stderr)
    return resource_list


run(generate)
