"""The seeds' field rules, 2-way and 3-way, over plain YAML data.

Every function returns new data (inputs are never mutated) or MISSING, meaning "the field is not
in the result"; callers drop MISSING entries, which is how `null` clears a field.
"""

from __future__ import annotations

from collections.abc import Callable
from copy import deepcopy
from typing import Any

from orchestrator.merge._common import MISSING, MergeConflict, Where, same
from orchestrator.merge._keys import KeySpec, associative_key, index, selector


def _keyed(dest: dict, newer: dict, merge_one: Callable[[Any], Any]) -> dict:
    """Merge entry by entry: dest's entries keep their order, newer's new ones follow in their own."""
    merged = {}
    for key in [*dest, *(key for key in newer if key not in dest)]:
        value = merge_one(key)
        if value is not MISSING:
            merged[key] = value
    return merged


def _element_where(where: Where, spec: KeySpec, *elements: Any) -> Where:
    return where.element(selector(next(e for e in elements if e is not MISSING), spec))


# ---------------------------------------------------------------------------------------- 2-way


def merge2_value(src: Any, dest: Any, where: Where) -> Any:
    """src wins: null clears, scalars and plain lists replace, maps and associative lists merge."""
    if src is None:
        return MISSING
    if src is MISSING:
        return deepcopy(dest)
    if isinstance(src, dict):
        return _merge2_map(src, dest if isinstance(dest, dict) else {}, where)
    if isinstance(src, list):
        dest_list = dest if isinstance(dest, list) else []
        spec = associative_key([src, dest_list], where)
        if spec is None and dest_list:  # dest's elements cannot pair with src's: src replaces them
            dest_list, spec = [], associative_key([src], where)
        if spec is not None:
            return _merge2_list(src, dest_list, spec, where)
    return deepcopy(src)


def _merge2_map(src: dict, dest: dict, where: Where) -> dict:
    return _keyed(dest, src, lambda k: merge2_value(src.get(k, MISSING), dest.get(k, MISSING), where.field(k)))


def _merge2_list(src: list, dest: list, spec: KeySpec, where: Where) -> list:
    s, d = index(src, spec, where), index(dest, spec, where)

    def merge_one(key: tuple) -> Any:
        pair = s.get(key, MISSING), d.get(key, MISSING)
        return merge2_value(*pair, _element_where(where, spec, *pair))

    return list(_keyed(d, s, merge_one).values())


# ---------------------------------------------------------------------------------------- 3-way


def merge3_value(original: Any, updated: Any, dest: Any, where: Where) -> Any:
    """Upstream's changes (original → updated) applied to dest; what upstream left alone stays as
    dest has it. A null original is an absent one: null only ever means "clear"."""
    o = MISSING if original is None else original
    if updated is None or dest is None or (updated is MISSING and dest is MISSING):
        return MISSING
    if dest is MISSING and same(o, updated):
        return MISSING  # unchanged upstream, deleted locally: stays deleted
    if updated is MISSING and o is MISSING:
        return deepcopy(dest)
    merged = _merge3_nested(o, updated, dest, where)
    return _merge3_whole(o, updated, dest, where) if merged is _WHOLE else merged


_WHOLE: Any = object()  # "not a map or associative list here: the scalar rule decides"


def _merge3_nested(o: Any, u: Any, d: Any, where: Where) -> Any:
    """Maps and associative lists merge entry by entry. An upstream deletion recurses only into a
    dest of the original's kind (so dest's own entries survive it); a field the dest lacks gets
    only the original→updated delta, and nothing if that delta is empty."""
    shaped = (o, d) if u is MISSING else tuple(v for v in (u, d) if v is not MISSING)
    merged: dict | list
    if all(isinstance(v, dict) for v in shaped):
        o_fits = isinstance(o, dict)
        merged = _merge3_map(o if o_fits else {}, {} if u is MISSING else u, {} if d is MISSING else d, where)
    elif all(isinstance(v, list) for v in shaped):
        spec = associative_key([v for v in (o, u, d) if isinstance(v, list)], where)
        if spec is None:
            return _WHOLE
        o_fits = isinstance(o, list)
        merged = _merge3_list(o if o_fits else [], [] if u is MISSING else u, [] if d is MISSING else d, spec, where)
    else:
        return _WHOLE
    delta_only = u is MISSING or (d is MISSING and o_fits)
    return MISSING if delta_only and not merged else merged


def _merge3_map(o: dict, u: dict, d: dict, where: Where) -> dict:
    def merge_one(k: Any) -> Any:
        return merge3_value(o.get(k, MISSING), u.get(k, MISSING), d.get(k, MISSING), where.field(k))

    return _keyed(d, u, merge_one)


def _merge3_list(o: list, u: list, d: list, spec: KeySpec, where: Where) -> list:
    oi, ui, di = (index(items, spec, where) for items in (o, u, d))

    def merge_one(key: tuple) -> Any:
        triple = oi.get(key, MISSING), ui.get(key, MISSING), di.get(key, MISSING)
        merged = merge3_value(*triple, _element_where(where, spec, *triple))
        if merged is MISSING or triple[2] is not MISSING:
            return merged
        return {**_key_fields(triple[1], spec), **merged}  # a delta still needs its key to be an element

    return list(_keyed(di, ui, merge_one).values())


def _key_fields(element: dict, spec: KeySpec) -> dict:
    return {field: deepcopy(element[field]) for field, _ in spec if element.get(field) is not None}


def _merge3_whole(o: Any, u: Any, d: Any, where: Where) -> Any:
    """Scalars, plain lists and values whose kind changed: upstream's change wins, unless upstream
    turned it into a map or list while dest turned it into something else: no rule merges those."""
    if u is MISSING:
        return MISSING
    if same(o, u):
        return deepcopy(d)
    if d is MISSING or same(o, d) or _shape(u) in ("scalar", _shape(d)):
        return merge2_value(u, MISSING, where)  # as if added: its own nulls still clear
    raise MergeConflict(where, f"upstream changed it to a {_shape(u)}, the destination to a {_shape(d)}")


def _shape(value: Any) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"
