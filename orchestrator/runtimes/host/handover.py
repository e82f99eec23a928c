"""A catalog function run in a forked child over the items fnrun already holds.

The text way costs a builtin step 20–30 ms for a handful of resources: fnrun writes the
ResourceList, the SDK parses it round-trip with ruamel, dumps it again, and fnrun parses that.
The child (a fork of the fork server, orchestrator.runtimes.host.zygote) takes the parsed items as
plain data, sent as JSON on its stdin: the SDK's runner (`functions.sdk.runner.transport`) runs
the SAME function over SDK wrappers of that data, and the child hands back only what changed, as
JSON too (C codecs both ways):
`{"items": [0, [1, {...}], ...], "results": [...]}`, an item's input position where its value is
the same as it went in, else its position and new value. Which function and config class a
module runs is learnt once per fork server from its own main block (`entry_of`).

fnrun then keeps the item it sent when the value is the same, and for a changed one the sent item
with the new value (`Resource.replaced`): its text is the base the write-back edits line by line,
exactly as for the text way, whose own text only matters where an edit cannot be expressed by
minimal text edits. Where the bytes written could differ, the step runs the text way instead:
values that are not plain JSON data (dates, binary, non-string keys, values YAML aliases share
among places: `is_plain`, checked before the fork), a function that adds items or replaces an item by a new mapping (a new item's text
would be the function's own: the child hands back FALLBACK), and a changed item whose write-back
may need the round trip, which keeps the function's own text (`_edit_as_text`).
"""

from __future__ import annotations

import importlib.util
import json
import re
import runpy
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from orchestrator import annotations as ann, workers as forking
from orchestrator.errors import FnrunError, FunctionError
from orchestrator.resource import Resource
from orchestrator.yamlio import fast, textedit

if TYPE_CHECKING:
    from functions.sdk import ResourceList

#: What the child writes when the function's output needs the text way (nothing else is written).
FALLBACK = b'{"fallback": true}'
_JSON_SCALARS = (str, int, float, bool, type(None))


def is_plain(value: Any) -> bool:
    """Whether `value` is exactly what JSON carries: str-keyed dicts, lists, str, int, float,
    bool, None (no subclasses), each mapping and list in one place only. A YAML alias makes one
    dict or list appear in several places, and an edit through one place would show in all; the
    SDK gives a changed place its own copy only where it can see the anchor (ruamel's nodes), so
    such items go the text way."""
    stack, seen = [value], set()
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict or kind is list:
            if id(node) in seen:
                return False
            seen.add(id(node))
            if kind is dict:
                if any(type(key) is not str for key in node):
                    return False
                stack.extend(node.values())
            else:
                stack.extend(node)
        elif kind not in _JSON_SCALARS:
            return False
    return True


#: A module's function, config class and file, as its main block passes them to sdk.main.
Entry = tuple[Callable[..., Any], "type | None", str]


class _Named(Exception):
    """The main block called sdk.main, and nothing was read."""


class _Namer:
    """A transport that stops sdk.main before it reads anything."""

    def read(self) -> ResourceList:
        raise _Named

    def write(self, resource_list: ResourceList) -> None:
        raise _Named


def entry_of(module: str) -> Entry | None:
    """The function and config class `module`'s main block runs, found by running that block
    here with a transport that stops before reading: only the module's definitions run, as they
    did when it was imported, and its function never. A fork then calls the function directly
    instead of running the module again, which costs a fork ~1 ms of copied pages. None when the
    block does not stop that way (the fork runs the module). Called by the fork server, once per
    module (it keeps the answer), and it has one thread: no fork inherits the namer as its
    transport."""
    from functions.sdk import runner

    runner.transport, runner.entry = _Namer(), None
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)  # as `python -m` runs it
    except _Named:
        spec = importlib.util.find_spec(module)
        if runner.entry is not None and spec is not None and spec.origin:
            return (*runner.entry, spec.origin)
    except (Exception, SystemExit):  # noqa: BLE001 - any other way, the fork runs the module itself
        pass
    finally:
        runner.transport = None
    return None


def sendable(items: list[dict], function_config: dict | None) -> bytes:
    """What the child reads on stdin (`HandedOver` over it)."""
    return _dumps({"items": items, "config": function_config}).encode()


class HandedOver:
    """The SDK runner's transport in the child: the items in, the changes out on stdout."""

    def __init__(self, items: list[dict], function_config: dict | None, entry: Entry | None = None) -> None:
        self.items = items
        self.function_config = function_config
        self.entry = entry
        self._before: list[str] = []
        self._positions: dict[int, int] = {}

    def install(self) -> None:
        """In the child, before the module would run: its `sdk.main` then reads and writes here.
        With the module's entry known, the function runs now, as its main block would run it
        (`python -m` names the program after the module's file), and its exit code leaves as
        main's sys.exit would."""
        from functions.sdk import runner

        runner.transport = self
        if self.entry is not None:
            fn, config, path = self.entry
            main = types.ModuleType("__main__")  # what names in the config's annotations resolve in
            main.__dict__.update(getattr(fn, "__globals__", {}))
            sys.modules["__main__"], sys.argv[0] = main, path
            raise SystemExit(runner.run(fn, config, via=self))

    def read(self) -> ResourceList:
        from functions.sdk import Resource, ResourceList

        self._before = [_dumps(item) for item in self.items]
        self._positions = {id(item): position for position, item in enumerate(self.items)}
        config = Resource(self.function_config) if isinstance(self.function_config, dict) else None
        return ResourceList([Resource(item) for item in self.items], config)

    def write(self, resource_list: ResourceList) -> None:
        entries = []
        for resource in resource_list.items:
            position = self._positions.get(id(resource.data))
            if position is None:  # a new item: its text would be the function's own
                sys.stdout.write(FALLBACK.decode())
                return
            after = _dumps(resource.data)
            entries.append(str(position) if after == self._before[position] else f"[{position},{after}]")
        results = _dumps([result.to_data() for result in resource_list.results])
        sys.stdout.write(f'{{"items":[{",".join(entries)}],"results":{results}}}')


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class HeldLines:
    """The child's stderr lines, held until the caller knows the handover stands (a fallback runs
    the function again, which shows them once more); past `limit` bytes they go straight through,
    so a function that floods stderr costs fnrun no memory here either."""

    def __init__(self, sink: Callable[[str], None] | None, limit: int = 64 * 1024) -> None:
        self.sink = sink
        self.limit = limit
        self.held: list[str] | None = []
        self.size = 0

    def __call__(self, line: str) -> None:
        if self.held is None:
            self._show(line)
            return
        self.held.append(line)
        self.size += len(line)
        if self.size > self.limit:
            self.release()

    def release(self) -> None:
        held, self.held = self.held or [], None
        for line in held:
            self._show(line)

    def _show(self, line: str) -> None:
        if self.sink is not None:
            self.sink(line)


class NeedsText(Exception):
    """A changed item whose write-back may need the function's own text: run it the text way."""


def handed_back(stdout: bytes, exit_code: int, sent: list[Resource], name: str,
                workers: int | None = None) -> tuple[list[Resource], list[dict]] | None:
    """The function's items and results from what the child wrote; None when it wrote nothing
    (a failure: the caller reports the exit code). Raises FunctionError on output that is not
    the protocol's, like invalid output of any function, and NeedsText (see `_edit_as_text`,
    which shares big work among `workers` processes: FNRUN_WORKERS as the edge read it)."""
    try:
        envelope = json.loads(stdout)
        items: list[Resource] = []
        changed: list[tuple[int, Resource, Any]] = []  # (place in items, item sent, its new value)
        for entry in envelope["items"]:
            if type(entry) is int:
                items.append(item_at(sent, entry))
            else:
                changed.append((len(items), item_at(sent, entry[0]), entry[1]))
                items.append(changed[-1][1])  # until the check below says it can be replaced
        results = envelope["results"]
        if not isinstance(results, list):
            raise TypeError("results")
    except (ValueError, TypeError, KeyError, IndexError) as err:
        if exit_code != 0:
            return None
        raise FunctionError(f"function {name} returned invalid output: {err}") from None
    known = _edit_as_text([(item, value) for _, item, value in changed], workers)
    if known is None:
        raise NeedsText
    for (place, item, value), edit in zip(changed, known):
        items[place] = item.replaced(value, edit)
    return items, results


def item_at(sent: list[Resource], position: Any) -> Resource:
    """The item sent at `position`, which the function's output names."""
    if type(position) is not int or not 0 <= position < len(sent):
        raise IndexError(f"no item {position!r}")
    return sent[position]


# What minimal text edits cannot always write (orchestrator/yamlio/textedit.py): flow collections,
# anchors and aliases, tags, block scalars, merge keys. The write-back then round-trips the item,
# and the round trip keeps the comments and layout of the function's own text.
_ROUND_TRIP_SIGNS = re.compile(r"[{}\[\]&*!|>]|<<")


def _edit_as_text(changed: list[tuple[Resource, Any]], workers: int | None) -> list[textedit.KnownEdit | None] | None:
    """Each changed item's edit where one was worked out (in `changed`'s order), when every changed
    item can be written over its text by minimal text edits, as the write-back will (its body, the
    file's text, from the value read to the value now): then the text a function returns plays no
    part in the bytes written; None when one cannot. The handover
    functions only add keys and change values (no removals or moves, which text edits refuse), so
    plain block YAML always can; other text is tried, on every core when it is big (a repository
    of CRDs is megabytes of it), and each edit goes on with its item for the write-back, which
    asks for the same one."""
    tried: list[tuple[int, Resource, dict]] = []
    for number, (sent, value) in enumerate(changed):
        if not isinstance(value, dict) or sent.body is None:
            return None  # no body: written as a function's own text, which only the text way has
        if _ROUND_TRIP_SIGNS.search(sent.body):
            tried.append((number, sent, ann.without_stripped(value)))
    known: list[textedit.KnownEdit | None] = [None] * len(changed)
    weights = [len(sent.body or "") for _, sent, _ in tried]

    def share(start: int, end: int) -> list[str | None]:
        return [_text_edit(sent, value) for _, sent, value in tried[start:end]]

    edits = [edit for part in forking.fork_map(share, weights, forking.count(sum(weights), forking.MIN_BYTES_TO_SHARE, workers)) for edit in part]
    if any(edit is None for edit in edits):
        return None
    for (number, sent, value), edit in zip(tried, edits):
        known[number] = textedit.known_edit(sent.body or "", value, edit)
    return known


def _text_edit(sent: Resource, value: dict) -> str | None:
    """The item's body edited into `value`, or None. The value it was read as is at hand while
    the item is as read (its body's value, but for fnrun's annotations); after an earlier step
    changed it, the body is parsed again. The edit is checked against `value` either way."""
    body = sent.body or ""
    if sent.fresh:
        old = sent.value
    else:
        try:
            old = fast.load(body, "handover")
        except FnrunError:
            return None
    return textedit.edit(body, value, old) if isinstance(old, dict) else None
