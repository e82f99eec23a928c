"""`fnrun run --save`: record the function just run in the package's Kptfile pipeline, as
`kpt fn eval --save` does, touching only the lines of the entry it adds or replaces.

What kpt writes (its fn-eval suite's save-fn cases): `image` as the full name (`set-namespace:latest`
becomes the catalog's), `tag` when --tag was given, or `exec` as typed; then `configPath` (the
--fn-config file, relative to the package; it must lie inside) or `configMap` (the key=value
arguments); then `selectors` and `exclude` (one entry each, from the match/exclude flags). An entry
of the same list with the same image (or exec) is replaced by the new one rather than a second
added. A package without a Kptfile still runs; only the save is skipped, with a note. Difference,
on purpose: `--type` defaults to mutator (kpt's docs say so; kpt demands the flag)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..write.writeback import FileChange, WritePlan
from ..yamlio import fast, roundtrip

KPTFILE = "Kptfile"
FUNCTION_TYPES = {"mutator": "mutators", "validator": "validators"}


@dataclass(frozen=True)
class SaveRequest:
    """The pipeline entry to record and where."""

    root: Path
    list_name: str  # mutators | validators
    entry: dict
    skipped: str | None = None  # why nothing will be recorded (no Kptfile): the run goes on

    def describe(self, updated: bool) -> str:
        what = self.entry.get("image") or self.entry.get("exec")
        return f"{'updated' if updated else 'added'} {what} as a {self.list_name[:-1]} in {self.root / KPTFILE}"


def prepare(
    root: Path,
    function_type: str,
    function: tuple[str | None, str | None, str | None],
    fn_config: Path | None,
    arguments: tuple[str, ...],
    selectors: list[dict],
    exclude: list[dict],
) -> SaveRequest:
    """Check everything --save needs before the function runs (a refusal writes nothing).
    `function` is (full image name, --tag, --exec as typed)."""
    if function_type not in FUNCTION_TYPES:
        raise InputError(f"--type must be mutator or validator, not {function_type!r}")
    image, tag, exec_command = function
    if image is None and exec_command is None:
        raise InputError("--save records a function given with --image or --exec")
    entry: dict = {"image": image} if image is not None else {"exec": exec_command}
    if image is not None and tag is not None:
        entry["tag"] = tag
    if fn_config is not None:
        entry["configPath"] = _inside(root, fn_config)
    elif arguments:
        entry["configMap"] = dict(argument.partition("=")[::2] for argument in arguments)
    if selectors:
        entry["selectors"] = selectors
    if exclude:
        entry["exclude"] = exclude
    if not (root / KPTFILE).exists():
        return SaveRequest(root, FUNCTION_TYPES[function_type], entry, f"--save: {root / KPTFILE} does not exist; the function ran but was not recorded")
    _pipeline_lists(_load(root), root)
    return SaveRequest(root, FUNCTION_TYPES[function_type], entry)


def add_to_plan(plan: WritePlan, request: SaveRequest) -> bool:
    """Put the edited Kptfile into `plan` (on top of any change the run made to it), so it lands
    with the package's files or not at all. True when an entry was replaced."""
    earlier = next((c for c in plan.changes if c.path == KPTFILE), None)
    old = earlier.old if earlier is not None else (request.root / KPTFILE).read_bytes()
    current = earlier.new.decode("utf-8") if earlier is not None and earlier.new is not None else fast.decode(old or b"", KPTFILE)
    data = fast.load(current, KPTFILE)
    pipeline, entries = _pipeline_lists(data, request.root, request.list_name)
    updated = False
    key = "image" if "image" in request.entry else "exec"
    for position, existing in enumerate(entries):
        if isinstance(existing, dict) and existing.get(key) == request.entry[key]:
            entries[position] = copy.deepcopy(request.entry)  # as kpt: the new entry whole, its old name too gone
            updated = True
    if not updated:
        entries.append(copy.deepcopy(request.entry))
    crlf = "\r\n" in current
    edited = roundtrip.edit(current.replace("\r\n", "\n"), None, data)
    new = (edited.replace("\n", "\r\n") if crlf else edited).encode("utf-8")
    if earlier is not None:
        plan.changes.remove(earlier)
    if KPTFILE in plan.unchanged:
        plan.unchanged.remove(KPTFILE)
    plan.changes.append(FileChange(KPTFILE, new, old))
    return updated


def _load(root: Path) -> dict:
    path = root / KPTFILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"--save: {path} does not exist (create the package with `kpt pkg init`); nothing was run") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    data = fast.load(fast.decode(raw, str(path)), str(path))
    if not isinstance(data, dict) or data.get("kind") != "Kptfile":
        raise InputError(f"{path}: not a Kptfile (kind: Kptfile)")
    return data


def _pipeline_lists(data: dict, root: Path, list_name: str | None = None) -> tuple[dict, list]:
    """The pipeline mapping (created when missing) and, with `list_name`, that list of it."""
    where = root / KPTFILE
    if data.get("pipeline") is None:
        data["pipeline"] = {}
    pipeline = data["pipeline"]
    if not isinstance(pipeline, dict):
        raise InputError(f"{where}: pipeline is not a mapping")
    for name in FUNCTION_TYPES.values():
        if pipeline.get(name) is not None and not isinstance(pipeline[name], list):
            raise InputError(f"{where}: pipeline.{name} is not a list")
    if list_name is None:
        return pipeline, []
    if pipeline.get(list_name) is None:
        pipeline[list_name] = []
    return pipeline, pipeline[list_name]


def _inside(root: Path, fn_config: Path) -> str:
    config, real_root = fn_config.resolve(), root.resolve()
    if real_root not in config.parents:
        raise InputError(f"--save: --fn-config {fn_config} must be inside the package {root} (the Kptfile records its path)")
    return config.relative_to(real_root).as_posix()
