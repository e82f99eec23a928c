"""results: items unchanged, plus `results` built from functionConfig.data, to test how the
pipeline reports, fails on and saves structured results.

data: message (default "result from fnrun-test/results"), severity (left out when not given,
so the spec's default, error, applies), count (default 1: that many results, numbered), path
(-> field.path), file (-> file.path), ref ("true": result i refers to item i, cycling)."""
from typing import Any

from krm import ResourceList, config, run


def results(resource_list: ResourceList) -> ResourceList:
    data = config(resource_list)
    items = list(resource_list.get("items") or [])
    count = int(data.get("count", 1))
    out: list[dict[str, Any]] = []
    message = str(data.get("message") or "result from fnrun-test/results")
    for i in range(count):
        result: dict[str, Any] = {"message": f"{message} ({i + 1}/{count})" if count > 1
                                  else message}
        if "severity" in data:
            result["severity"] = str(data["severity"])
        if str(data.get("ref", "")).lower() == "true" and items:
            item = items[i % len(items)]
            meta = item.get("metadata") or {}
            ref = {"apiVersion": item.get("apiVersion"), "kind": item.get("kind"),
                   "name": meta.get("name")}
            if meta.get("namespace"):
                ref["namespace"] = meta["namespace"]
            result["resourceRef"] = ref
        if data.get("path"):
            result["field"] = {"path": str(data["path"])}
        if data.get("file"):
            result["file"] = {"path": str(data["file"])}
        out.append(result)
    resource_list["results"] = out
    return resource_list


run(results)
