"""Build functions/kpt_catalog/data/kubernetes-openapi.json.gz: the Kubernetes API schema that
Starlark scripts read as `ctx.open_api` (kpt's starlark function hands scripts the same kind of
document: `definitions` keyed by `io.k8s.api.apps.v1.Deployment`..., each with its
`x-kubernetes-group-version-kind`).

The source is the kubernetes-validate package on PyPI (Apache-2.0), which ships the schemas the
Kubernetes project publishes, one folder per release; its `_definitions.json` holds every type
under JSON Schema's `$defs`. This script renames them to OpenAPI 2's `definitions` (and the
`$ref`s with them), and writes compact JSON, gzipped reproducibly. It runs at development time
only; fnrun reads the file it writes and never the network.

    pip download --no-deps kubernetes-validate==1.37.0 -d /tmp/kv
    python scripts/gen_k8s_openapi.py /tmp/kv/kubernetes_validate-1.37.0-py3-none-any.whl v1.37.0
"""

from __future__ import annotations

import gzip
import json
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "functions/kpt_catalog/data/kubernetes-openapi.json.gz"


def convert(value):
    """`$defs` -> `definitions`, `#/$defs/X` -> `#/definitions/X`, everywhere."""
    if isinstance(value, dict):
        return {("definitions" if k == "$defs" else k): (v.replace("#/$defs/", "#/definitions/") if k == "$ref" and isinstance(v, str) else convert(v))
                for k, v in value.items() if k not in ("$schema", "$id")}
    if isinstance(value, list):
        return [convert(v) for v in value]
    return value


def main(wheel: str, version: str) -> None:
    with zipfile.ZipFile(wheel) as archive:
        source = json.loads(archive.read(f"kubernetes_validate/kubernetes-json-schema/{version}-local/_definitions.json"))
    document = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": version}, **convert(source)}
    data = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{OUT}: {len(document['definitions'])} definitions, {len(data)} bytes, {OUT.stat().st_size} gzipped")


if __name__ == "__main__":
    main(*sys.argv[1:3])
