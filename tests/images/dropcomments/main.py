"""dropcomments: the ResourceList loaded and dumped by PyYAML (keys sorted, every comment, quote
and layout choice gone), with `functionConfig.data` set as labels on every item, as a function
written with plain PyYAML behaves. The orchestrator must keep the files' own comments."""

from __future__ import annotations

import sys

import yaml


def main() -> int:
    """Label every item; report how many on stderr."""
    try:
        resource_list = yaml.safe_load(sys.stdin.read()) or {}
        data = (resource_list.get("functionConfig") or {}).get("data") or {}
        items = resource_list.get("items") or []
        for item in items:
            metadata = item.setdefault("metadata", {})
            if metadata.get("labels") is None:
                metadata["labels"] = {}
            for key, value in data.items():
                metadata["labels"][str(key)] = str(value)
        sys.stdout.write(yaml.safe_dump(resource_list, width=1 << 16))
    except Exception as exc:  # noqa: BLE001 - one line on stderr, never a traceback
        print(f"dropcomments: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"dropcomments: set {len(data)} label(s) on {len(items)} resource(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
