"""Structured results (spec v1): validated and written to --results-dir (report.base.describe prints them)."""

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


def write_results_dir(directory: Path, runs: list[dict]) -> Path:
    """Write every function's results as one YAML document (kpt's results.yaml, our own apiVersion)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "results.yaml"
    document = {"apiVersion": "fnrun.dev/v1alpha1", "kind": "FunctionResultList", "items": runs}
    target.write_text(fast.dump(document))
    return target
