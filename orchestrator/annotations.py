"""Annotation keys: the only state that crosses pipeline stages (config-io; docs/reference/annotations.md)."""

from __future__ import annotations

from typing import Any

PATH = "config.kubernetes.io/path"
INDEX = "config.kubernetes.io/index"
INTERNAL_PATH = "internal.config.kubernetes.io/path"
INTERNAL_INDEX = "internal.config.kubernetes.io/index"
LOCAL_CONFIG = "config.kubernetes.io/local-config"
FUNCTION = "config.kubernetes.io/function"
LEGACY_FUNCTION = "config.k8s.io/function"
LEGACY_CONTAINER = "config.kubernetes.io/container"
ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "config.kubernetes.io/transformations"

#: Annotations fnrun stamps on read and strips on write.
ORCHESTRATION_KEYS = (PATH, INDEX, INTERNAL_PATH, INTERNAL_INDEX)


def annotations_of(data: Any) -> dict:
    """The annotations map of a resource, or {} when it has none (never raises on odd shapes)."""
    if not isinstance(data, dict):
        return {}
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return {}
    ann = meta.get("annotations")
    return ann if isinstance(ann, dict) else {}


def is_resource(data: Any) -> bool:
    """A document is a resource when it is a mapping carrying apiVersion and kind."""
    return isinstance(data, dict) and "apiVersion" in data and "kind" in data


def get_path(data: Any) -> str | None:
    ann = annotations_of(data)
    value = ann.get(PATH, ann.get(INTERNAL_PATH))
    return None if value is None else str(value)


def get_index(data: Any) -> int:
    """The resource's index in its file; a missing or unreadable index means 0 (config-io)."""
    ann = annotations_of(data)
    value = ann.get(INDEX, ann.get(INTERNAL_INDEX, 0))
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def identity(data: dict) -> tuple[str, str, str, str]:
    """(group, kind, namespace, name): how merges and wrap match resources across lists."""
    api_version = str(data.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    meta = given if isinstance(given := data.get("metadata"), dict) else {}
    return (group, str(data.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name") or ""))

#: fnrun's own layout notes, stamped only where the file is not laid out the default way. They let
#: `fnrun source | fnrun sink` reproduce a file byte for byte: the text between a resource and the
#: one before it when it is not `---` (separators, non-resource documents), what follows the file's
#: last resource, the file's line ends and final newline (on its last resource: `crlf`,
#: `no-final-newline`, `bom`), and the document's own text when the path/index annotations could not be
#: inserted into it as whole lines (flow-style metadata, no metadata).
PREFIX = "internal.config.kubernetes.io/fnrun-prefix"
SUFFIX = "internal.config.kubernetes.io/fnrun-suffix"
FILE_FORMAT = "internal.config.kubernetes.io/fnrun-file"
ORIGINAL = "internal.config.kubernetes.io/fnrun-original"
LAYOUT_KEYS = (PREFIX, SUFFIX, FILE_FORMAT, ORIGINAL)
CRLF = "crlf"
NO_FINAL_NEWLINE = "no-final-newline"
BOM = "bom"  # the file opened with a UTF-8 byte order mark
BOM_BYTES = b"\xef\xbb\xbf"
LF_LINES = "lf-lines="  # a CRLF file's lines that end in a bare LF (0-based, space-separated)

#: kyaml's note of a file's block sequence style (`compact`: dashes at their key's column, `wide`:
#: indented), which `kpt fn source` stamps on every item. fnrun never stamps it; a sink honours
#: `wide` for a file it writes from an item's own text, and strips it like its own notes.
SEQINDENT = "internal.config.kubernetes.io/seqindent"

#: The order fnrun stamps its annotations in.
STAMP_ORDER = ORCHESTRATION_KEYS + LAYOUT_KEYS

#: Everything stripped on write.
STRIPPED_KEYS = frozenset(ORCHESTRATION_KEYS + LAYOUT_KEYS + (SEQINDENT,))

DEFAULT_SEPARATOR = "---\n"


def default_prefix(index: int) -> str:
    return "" if index == 0 else DEFAULT_SEPARATOR


FILE_NAMES = ("kind_name", "name_kind")  # kpt's `deployment_web.yaml`, fnrun's own `web_deployment.yaml`


def default_path(data: dict, directory: str = "", naming: str = "name_kind") -> str:
    """Where a resource with no path goes: `<dir>/<name>_<kind>.yaml`, lowercased (docs/reference/annotations.md), or
    with `kind_name` kpt's `<dir>/<kind>_<name>.yaml` (kind lowercased, the name as it is)."""
    meta = given if isinstance(given := data.get("metadata"), dict) else {}
    name, kind = str(meta.get("name") or "unnamed"), str(data.get("kind") or "resource")
    file = f"{kind.lower()}_{name}.yaml" if naming == "kind_name" else f"{name}_{kind}.yaml".lower()
    return f"{directory.rstrip('/')}/{file}" if directory.strip("/.") else file


def without_stripped(data: dict) -> dict:
    """A shallow copy of a resource without fnrun's annotations: the value that is compared and
    written. An annotations map (or metadata) that only fnrun's annotations fill was created by
    fnrun and goes too, unless the document as read had it empty or null (`annotations: {}`,
    `annotations:`): that form comes back, as the layout note of the document's own text says."""
    ann = annotations_of(data)
    if not any(k in ann for k in STRIPPED_KEYS):
        return data
    kept = {k: v for k, v in ann.items() if k not in STRIPPED_KEYS}
    meta = dict(data["metadata"])
    empty = _empty_as_read(ann.get(ORIGINAL)) if not kept else {}
    if kept:
        meta["annotations"] = kept
    elif "annotations" in empty:
        meta["annotations"] = empty["annotations"]
    else:
        del meta["annotations"]
    out = dict(data)
    if meta:
        out["metadata"] = meta
    elif "metadata" in empty:
        out["metadata"] = empty["metadata"]
    else:
        del out["metadata"]
    return out


_EMPTY_CACHE: dict[str, dict] = {}


def _empty_as_read(original: Any) -> dict:
    """Which of `metadata` and `metadata.annotations` the document's own text (fnrun's layout note,
    present whenever stamping had to rewrite the document) holds empty or null, with that value:
    fnrun filled them with its annotations, and stripping must give them back as they were."""
    if not isinstance(original, str):
        return {}
    found = _EMPTY_CACHE.get(original)
    if found is None:
        from .yamlio import fast  # here: fast is not needed by most users of this module

        found = {}
        try:
            value = fast.load(original, ORIGINAL)
        except Exception:  # noqa: BLE001 - a note a function garbled: nothing to give back
            value = None
        meta = value.get("metadata", ...) if isinstance(value, dict) else ...
        if meta is None or meta == {}:
            found["metadata"] = meta
        elif isinstance(meta, dict) and "annotations" in meta and meta["annotations"] in (None, {}):
            found["annotations"] = meta["annotations"]
        if len(_EMPTY_CACHE) < 10_000:
            _EMPTY_CACHE[original] = found
    return {key: (dict(v) if isinstance(v, dict) else v) for key, v in found.items()}
