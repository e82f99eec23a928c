"""`fnrun run`'s --match-*/--exclude-* flags as selectors, written the way a Kptfile writes them
(and `--save` records them).

As in kpt fn eval (checked with kpt 1.0.0-beta.56): the match flags form one selector and the
exclude flags another, the fields of each all have to hold, `--match-labels`/`--match-annotations`
take KEY=VALUE (split at the first `=`) and repeat, each repetition one more pair to hold."""

from __future__ import annotations

from ..errors import InputError

FIELDS = ("apiVersion", "kind", "name", "namespace", "labels", "annotations")
FLAG_NAMES = {"apiVersion": "api-version", "kind": "kind", "name": "name", "namespace": "namespace", "labels": "labels", "annotations": "annotations"}


def selector_dict(pairs: tuple[tuple[str, str], ...], prefix: str) -> dict:
    """One selector from (field, value) pairs, fields in the Kptfile's order; `prefix` (match or
    exclude) names the flag in errors."""
    selector: dict = {}
    for field in FIELDS:
        for key, value in pairs:
            if key != field:
                continue
            if field in ("labels", "annotations"):
                name, sep, wanted = value.partition("=")
                if not sep or not name:
                    raise InputError(f"--{prefix}-{FLAG_NAMES[field]} {value!r}: expected KEY=VALUE")
                selector.setdefault(field, {})[name] = wanted
            else:
                selector[field] = value
    unknown = {key for key, _ in pairs} - set(FIELDS)
    if unknown:
        raise InputError(f"unknown selector field(s): {', '.join(sorted(unknown))}")
    return selector
