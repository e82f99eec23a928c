"""kpt's catalog functions in-process hand on what their containers would: each item's own text.

kpt runs a catalog function in a container whose kyaml round trip keeps an item's comments on
every field the function leaves in place (kpt copies the input's comments onto the output's
fields, kyaml's `comments.CopyComments`), so a later step still sees them: apply-setters after
set-labels finds its `# kpt-set:` markers. fnrun's versions (functions/kpt_catalog/) work on
plain data, so fnrun hands them the items as data and keeps the text itself: an item the function
left as it was goes on as the very item sent (its bytes, quotes, order and flow style), an
item it changed goes on as the sent item with the new value (`Resource.replaced`), whose text is
the old one edited to it, comments kept (`yamlio.roundtrip.render`), and the write-back edits the
file's text the same way. An item the function made (a Starlark script copies every item) is
the item sent with the same identity (group, kind, namespace, name), one only on either side,
else the one sent at the same path and index that no other item is by identity (a script that
swaps two items' indexes moves each with its own text, as kpt copies comments by identity), else
it is new.

The function reads its stdin and writes its stdout as functions/kpt_catalog/handover.py says.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from functions.kpt_catalog.handover import ENV_VAR  # noqa: F401 - what has a catalog module read the hand-over
from orchestrator import annotations as ann
from orchestrator.errors import FunctionError
from orchestrator.resource import Resource, held_once
from orchestrator.runtimes.host.handover import item_at

#: Modules whose function reads comments (apply-setters' markers): they get the items' texts too.
READS_COMMENTS = frozenset({"functions.kpt_catalog.apply_setters"})


def sendable(module: str, items: list[Resource], function_config: dict | None) -> bytes:
    """The child's stdin: the items as fnrun holds them and, for a function that reads comments,
    the text each was read from. An item an earlier step changed still has its old text (its
    comments are where they were; rendering it anew would cost a round trip per item): the
    function reads its comments there, and its changes are carried onto the item's value."""
    texts = [item.body if item.body is not None else item.text for item in items] if module in READS_COMMENTS else None
    return _dumps({"items": [item.data for item in items], "config": function_config, "texts": texts}).encode()


def handed_back(stdout: bytes, exit_code: int, sent: list[Resource], name: str) -> tuple[list[Resource], list[dict]] | None:
    """The function's items and results; None when it wrote nothing that reads (a failure: the
    caller reports the exit code). Output that is not the protocol's, from a function that
    exited 0, is a FunctionError as any function's invalid output is."""
    try:
        envelope = json.loads(stdout)
        entries = envelope["items"]
        places = _places(sent, entries)
        items = [_item(entry, sent, places) for entry in entries]
        results = envelope["results"]
        if not isinstance(results, list):
            raise TypeError("results is not a list")
    except (ValueError, TypeError, KeyError, IndexError) as err:
        if exit_code != 0:
            return None
        raise FunctionError(f"function {name} returned invalid output: {err}") from None
    return items, results


def _item(entry: Any, sent: list[Resource], places: dict[Any, Resource]) -> Resource:
    if type(entry) is int:
        return item_at(sent, entry)
    if type(entry) is list and len(entry) == 2:
        return _changed(item_at(sent, entry[0]), entry[1])
    if type(entry) is dict:
        before = places.get(ann.identity(entry)) or places.get(_place(entry))
        return Resource(entry) if before is None else _changed(before, entry)
    raise TypeError(f"item entry {str(entry)[:40]!r}")


def _changed(before: Resource, value: Any) -> Resource:
    if type(value) is not dict:
        raise TypeError("an item is not a mapping")
    return before if _dumps(value) == _dumps(before.data) else before.replaced(value)


def _place(data: dict) -> tuple[str, str] | None:
    annotations = ann.annotations_of(data)
    path = annotations.get(ann.INTERNAL_PATH, annotations.get(ann.PATH))
    index = annotations.get(ann.INTERNAL_INDEX, annotations.get(ann.INDEX, "0"))
    return None if path is None else (str(path), str(index))


def _places(sent: list[Resource], entries: list[Any]) -> dict[Any, Resource]:
    """The sent items by identity, where one sent item and one made item have it, and by path
    and index, those two share and those an item is by identity left out (identities only
    computed where the function made items: most hand back positions)."""
    made = Counter(ann.identity(entry) for entry in entries if type(entry) is dict)
    by_identity = held_once((ann.identity(item.data), item) for item in sent) if made else {}
    found: dict[Any, Resource] = {key: item for key, item in by_identity.items() if made[key] == 1}
    taken = {id(item) for item in found.values()}
    by_place = held_once((_place(item.data), item) for item in sent)
    found.update((place, item) for place, item in by_place.items() if place is not None and id(item) not in taken)
    return found


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
