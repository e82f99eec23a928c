"""delete: drops every item whose metadata.name is in functionConfig.data.names (comma-separated),
so the orchestrator's deletion of emptied files can be tested."""
import sys

from krm import ResourceList, config, run


def delete(resource_list: ResourceList) -> ResourceList:
    names = {n.strip() for n in str(config(resource_list).get("names") or "").split(",")}
    items = list(resource_list.get("items") or [])
    kept = [i for i in items if ((i or {}).get("metadata") or {}).get("name") not in names]
    resource_list["items"] = kept
    print(f"delete: removed {len(items) - len(kept)} resource(s)", file=sys.stderr)
    return resource_list


run(delete)
