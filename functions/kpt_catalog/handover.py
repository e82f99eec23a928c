"""The catalog functions' side of fnrun's hand-over: the items come as fnrun read them, and only
what the function changed goes back.

kpt runs these functions in containers that read and write YAML with kyaml, which keeps every
comment of an item on the fields the function leaves in place, and the item's layout where it
changed nothing. A function here writes plain data (JSON), so fnrun keeps each item's own text
instead and edits it to the new value (orchestrator/runtimes/host/catalog_handover.py); this side
says which items changed and how.

In (stdin, JSON): `{"items": [value, ...], "config": value, "texts": [text, ...] | null}`, the
items' texts only for a function that reads comments (apply-setters' `# kpt-set:` markers). A
text may be older than its value (an earlier step changed the item): the function runs over the
text as ruamel reads it, and what it changed there is carried onto the value (`carried`), whose
other fields stay as they are.
Out (stdout, JSON): `{"items": [entry, ...], "results": [...]}`, an entry being the position of
an item handed back unchanged, `[position, value]` for one it changed, or a bare value for one it
made (matched by fnrun to a sent item by its path annotations, else a new item); or FALLBACK
alone where the function needs the ResourceList's text (it would write comments).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

#: Set by fnrun (and only by it) in the environment of a run that hands the items over.
ENV_VAR = "FNRUN_CATALOG_HANDOVER"
#: The child's whole output where the text way must run the function instead.
FALLBACK = '{"fallback": true}'


class NeedsText(Exception):
    """Raised by a function that would write comments, which plain data does not carry."""


def requested() -> bool:
    return os.environ.get(ENV_VAR) == "1"


def run(transform: Callable[[list, dict], list[dict]], prog: str, reads_comments: bool, error_exit: int) -> None:
    """Read the hand-over, run `transform`, write what changed; exits as `krm.main` does."""
    from functions.kpt_catalog import krm

    os.environ.pop(ENV_VAR, None)  # not part of what the function sees (Starlark's ctx.environment)
    sent = json.load(sys.stdin.buffer)
    data, config, texts = sent["items"], sent.get("config") or {}, sent.get("texts")
    if reads_comments:
        nodes = _nodes(texts, len(data))
        if nodes is None:
            _fall_back()
        work, before = nodes, [krm.plain(node) for node in nodes]
    else:
        work, before = list(data), [_dumps(item) for item in data]
    positions = {id(item): position for position, item in enumerate(work)}
    try:
        results = transform(work, config)
    except NeedsText:
        _fall_back()
    except krm.ConfigError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        results = [krm.result(str(err), "error")]
    except Exception as err:  # noqa: BLE001 - a bug or an input no kpt package has: one line, exit 1
        print(f"{prog}: internal error: {type(err).__name__}: {' '.join(str(err).split())}", file=sys.stderr)
        sys.exit(1)
    entries: list[Any] = []
    for item in work:
        position = positions.get(id(item))
        if reads_comments:
            if position is None:
                _fall_back()  # a made item's comments would be its own: only the text way has them
            after = krm.plain(item)
            if same(after, before[position]):
                entries.append(position)
            else:
                entries.append([position, carried(data[position], before[position], after)])
        elif position is None:
            entries.append(item)
        else:
            after = _dumps(item)
            entries.append(position if after == before[position] else [position, item])
    sys.stdout.write(_dumps({"items": entries, "results": krm.plain(results)}))
    sys.exit(error_exit if any(r.get("severity") == "error" for r in results) else 0)


def _nodes(texts: Any, count: int) -> list | None:
    """Each item's text as ruamel's round-trip nodes; None where one does not read as a mapping."""
    if not isinstance(texts, list) or len(texts) != count:
        return None
    from ruamel.yaml import YAML

    loader = YAML(typ="rt")
    nodes = []
    for text in texts:
        try:
            node = loader.load(text)
        except Exception:  # noqa: BLE001 - ruamel's parse errors: the text way then, with its own reading
            return None
        if not isinstance(node, dict):
            return None
        nodes.append(node)
    return nodes


def _fall_back() -> NoReturn:
    sys.stdout.write(FALLBACK)
    sys.exit(0)


_ABSENT = object()


def same(a: Any, b: Any) -> bool:
    """Equal as data, types included (`1`, `1.0` and `true` differ, as they do in YAML)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def carried(data: Any, before: Any, after: Any) -> Any:
    """`data` (the item as fnrun holds it) with what the function changed from `before` to `after`
    (the item's text as the function read it, and as it left it): fields it did not touch keep
    fnrun's value, where ruamel's reading may differ (a date, an octal number) or the text is
    older (a field an earlier step added or changed)."""
    if same(before, after):
        return data
    if isinstance(data, dict) and isinstance(before, dict) and isinstance(after, dict):
        out = {}
        for key, value in data.items():
            if key not in after:
                if key not in before:
                    out[key] = value  # a key ruamel read as another: the function never saw it
                continue  # removed
            out[key] = carried(value, before[key], after[key]) if key in before else after[key]
        for key, value in after.items():
            if key not in out and key not in before:
                out[key] = value
        return out
    if isinstance(data, list) and isinstance(before, list) and isinstance(after, list) and len(data) == len(before) == len(after):
        return [carried(d, b, a) for d, b, a in zip(data, before, after)]
    return after


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
