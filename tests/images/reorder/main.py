"""reorder: the ResourceList's items in reverse order, loaded and dumped whole by ruamel.yaml's
round trip, as a function that sorts or regroups resources does. A comment ruamel hangs on the
item before it travels with that item: the orchestrator must keep every line in its own file."""

from __future__ import annotations

import sys

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap


def main() -> int:
    """Reverse the items; report how many on stderr."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    try:
        resource_list = yaml.load(sys.stdin.read()) or CommentedMap()
        items = resource_list.get("items") or []
        items.reverse()
        yaml.dump(resource_list, sys.stdout)
    except Exception as exc:  # noqa: BLE001 - one line on stderr, never a traceback
        print(f"reorder: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"reorder: reversed {len(items)} resource(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
