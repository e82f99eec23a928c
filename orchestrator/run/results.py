"""Structured results (spec v1): validated, printed readably, written to --results-dir."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import FunctionError
from ..yamlio import fast

SEVERITIES = ("error", "warning", "info")


def normalise(results: list[Any], function: str) -> list[dict]:
    """Results as the spec defines them; a function that sends malformed ones fails, naming itself."""
    out = []
    for position, result in enumerate(results):
        if not isinstance(result, dict) or not isinstance(result.get("message"), str):
            raise FunctionError(f"function {function} returned results[{position}] without a message")
        severity = result.get("severity") or "error"
        if severity not in SEVERITIES:
            raise FunctionError(f"function {function} returned results[{position}] with unknown severity {severity!r}")
        out.append({**result, "severity": severity})
    return out


def has_errors(results: list[dict]) -> bool:
    return any(r["severity"] == "error" for r in results)


def describe(result: dict) -> str:
    """One readable line: `error: message (Deployment/web in app/deploy.yaml, field spec.replicas)`."""
    where = []
    ref = result.get("resourceRef")
    if isinstance(ref, dict) and ref.get("name"):
        namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
        where.append(f"{ref.get('kind', '?')}/{namespace}{ref['name']}")
    file = result.get("file")
    if isinstance(file, dict) and file.get("path"):
        where.append(f"in {file['path']}" + (f"[{file['index']}]" if file.get("index") not in (None, 0) else ""))
    field = result.get("field")
    if isinstance(field, dict) and field.get("path"):
        where.append(f"field {field['path']}")
    suffix = f" ({' '.join(where)})" if where else ""
    return f"{result['severity']}: {result['message']}{suffix}"


def write_results_dir(directory: Path, runs: list[dict]) -> Path:
    """Write every function's results as one YAML document (kpt's results.yaml, our own apiVersion)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "results.yaml"
    document = {"apiVersion": "fnrun.dev/v1alpha1", "kind": "FunctionResultList", "items": runs}
    target.write_text(fast.dump(document))
    return target
