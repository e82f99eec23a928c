"""label: every functionConfig.data entry becomes metadata.labels[KEY]=VALUE on every item.

Round-trip ruamel.yaml (works with Debian bookworm's 0.17.21 and with 0.18+), so comments, key
order and quoting of the items come back as they went in: the orchestrator's comment handling
is tested through this image."""

from __future__ import annotations

import sys

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap


def main() -> int:
    """Label every item; report how many on stderr."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    try:
        resource_list = yaml.load(sys.stdin.read()) or CommentedMap()
        data = (resource_list.get("functionConfig") or {}).get("data") or {}
        items = resource_list.get("items") or []
        for item in items:
            metadata = item.setdefault("metadata", CommentedMap())
            if metadata.get("labels") is None:
                metadata["labels"] = CommentedMap()
            for key, value in data.items():
                metadata["labels"][str(key)] = str(value)
        yaml.dump(resource_list, sys.stdout)
    except Exception as exc:  # noqa: BLE001 - one line on stderr, never a traceback
        print(f"label: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"label: set {len(data)} label(s) on {len(items)} resource(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
