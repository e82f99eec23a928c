"""The Kptfile's schema as kpt 1.0 decodes it (kptdev/kpt api/kptfile/v1, read with yaml.v3's
KnownFields): every field of every type, so a misspelt `pipelines:` is refused with its file and
line instead of the pipeline being silently skipped.

Decoding rules follow yaml.v3's, which kpt uses: an unknown key is an error ("field X not found
in type v1.KptFile"); a mapping or a sequence where a string belongs is an error, while any
scalar (a number, a boolean, null) is taken for a string; an integer field wants an integer.
Beyond kpt 1.0's fields, a step's `configRef` and `when` (kpt's since, and fnrun's) are known."""

from __future__ import annotations

import difflib

from yaml import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import InputError

# A type is "str" | "int" | "bool" | "any", ("map", type), ("list", type) or (Go name, {field: type}).
Type = str | tuple

STRING_MAP: Type = ("map", "str")
SELECTOR: Type = ("v1.Selector", {"apiVersion": "str", "kind": "str", "name": "str", "namespace": "str", "labels": STRING_MAP, "annotations": STRING_MAP})
REFERENCE: Type = ("v1.ResourceReference", {"apiVersion": "str", "kind": "str", "name": "str", "namespace": "str"})
FUNCTION: Type = (
    "v1.Function",
    {
        "image": "str", "exec": "str", "configPath": "str", "configMap": STRING_MAP, "name": "str", "tag": "str",
        "selectors": ("list", SELECTOR), "exclude": ("list", SELECTOR), "configRef": REFERENCE, "when": "str",
    },
)
RESULT_ITEM: Type = (
    "v1.ResultItem",
    {
        "message": "str", "severity": "str",
        "resourceRef": ("yaml.ResourceIdentifier", {"apiVersion": "str", "kind": "str", "name": "str", "namespace": "str"}),
        "field": ("v1.Field", {"path": "str", "currentValue": "any", "proposedValue": "any"}),
        "file": ("framework.File", {"path": "str", "index": "int"}),
        "tags": STRING_MAP,
    },
)
STEP_RESULT: Type = (
    "v1.PipelineStepResult",
    {
        "name": "str", "image": "str", "exec": "str", "executionError": "str", "stderr": "str", "exitCode": "int",
        "results": ("list", RESULT_ITEM), "errorResults": ("list", RESULT_ITEM), "when": "str", "skipped": "bool",
    },
)
GIT: Type = ("v1.Git", {"repo": "str", "directory": "str", "ref": "str"})
KPTFILE: Type = (
    "v1.KptFile",
    {
        "apiVersion": "str",
        "kind": "str",
        "metadata": ("yaml.ObjectMeta", {"name": "str", "namespace": "str", "labels": STRING_MAP, "annotations": STRING_MAP}),
        "upstream": ("v1.Upstream", {"type": "str", "git": GIT, "updateStrategy": "str"}),
        "upstreamLock": (
            "v1.Locator",
            {
                "type": "str",
                "git": ("v1.GitLock", {"repo": "str", "directory": "str", "ref": "str", "commit": "str"}),
                "generic": ("v1.GenericLock", {"storeID": "str", "resourceID": "str", "resourceVersion": "str"}),
            },
        ),
        "info": (
            "v1.PackageInfo",
            {
                "site": "str", "emails": ("list", "str"), "license": "str", "licenseFile": "str", "description": "str",
                "keywords": ("list", "str"), "man": "str", "readinessGates": ("list", ("v1.ReadinessGate", {"conditionType": "str"})),
            },
        ),
        "pipeline": ("v1.Pipeline", {"mutators": ("list", FUNCTION), "validators": ("list", FUNCTION)}),
        "inventory": (
            "v1.Inventory",
            {"namespace": "str", "name": "str", "inventoryID": "str", "labels": STRING_MAP, "annotations": STRING_MAP},
        ),
        "status": (
            "v1.Status",
            {
                "conditions": ("list", ("v1.Condition", {"type": "str", "status": "str", "reason": "str", "message": "str"})),
                "renderStatus": (
                    "v1.RenderStatus",
                    {"mutationSteps": ("list", STEP_RESULT), "validationSteps": ("list", STEP_RESULT), "errorSummary": "str"},
                ),
            },
        ),
    },
)

_GO_NAMES = {"str": "string", "int": "int", "bool": "bool"}


def check(node: Node | None, path: str, line_offset: int = 0) -> None:
    """Raise InputError `path:line: ...` for the first line where the Kptfile leaves kpt's schema
    (and how many more problems there are, as kpt lists them all)."""
    if node is None:
        return
    problems = sorted(_problems(node, KPTFILE), key=lambda p: p[0])
    if problems:
        line, problem = problems[0]
        more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        raise InputError(f"{path}:{line + 1 + line_offset}: {problem}{more}")


def _problems(node: Node, expected: Type) -> list[tuple[int, str]]:
    """(0-based line, problem) of every place the tree leaves the type. An explicit stack: a
    hostile Kptfile's nesting costs no recursion."""
    found: list[tuple[int, str]] = []
    stack: list[tuple[Node, Type]] = [(node, expected)]
    while stack:
        current, kind = stack.pop()
        if kind == "any" or _is_null(current):
            continue
        if isinstance(kind, str):
            problem = _scalar(current, kind)
            if problem:
                found.append((current.start_mark.line, problem))
        elif kind[0] in ("list", "map"):
            wanted = SequenceNode if kind[0] == "list" else MappingNode
            if not isinstance(current, wanted):
                found.append((current.start_mark.line, f"cannot unmarshal {_shape(current)} into {_go_name(kind)}"))
            elif kind[0] == "list":
                stack.extend((item, kind[1]) for item in current.value)
            else:
                stack.extend((value, kind[1]) for _key, value in current.value)
        else:
            name, fields = kind
            if not isinstance(current, MappingNode):
                found.append((current.start_mark.line, f"cannot unmarshal {_shape(current)} into {name}"))
                continue
            for key, value in current.value:
                field = key.value if isinstance(key, ScalarNode) else None
                if field in fields:
                    stack.append((value, fields[field]))
                else:
                    found.append((key.start_mark.line, f"field {field} not found in type {name}{_suggestion(field, fields)}"))
    return found


def _scalar(node: Node, kind: str) -> str | None:
    """yaml.v3 takes any scalar for a string; an int or bool field wants that type."""
    if not isinstance(node, ScalarNode):
        return f"cannot unmarshal {_shape(node)} into {_GO_NAMES[kind]}"
    tag = node.tag.rsplit(":", 1)[-1]
    if kind in ("int", "bool") and tag != kind:
        return f"cannot unmarshal {_shape(node)} into {_GO_NAMES[kind]}"
    return None


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag.endswith(":null")


def _shape(node: Node) -> str:
    """yaml.v3's words for what it found: `!!map`, `!!seq`, or a scalar's tag and (short) value."""
    if isinstance(node, (MappingNode, SequenceNode)):
        return "!!map" if isinstance(node, MappingNode) else "!!seq"
    value = str(node.value)
    return f"!!{node.tag.rsplit(':', 1)[-1]} `{value if len(value) <= 40 else value[:37] + '...'}`"


def _go_name(kind: Type) -> str:
    if isinstance(kind, str):
        return _GO_NAMES.get(kind, "interface {}")
    return kind[0] if kind[0] not in ("list", "map") else f"[]{_go_name(kind[1])}" if kind[0] == "list" else f"map[string]{_go_name(kind[1])}"


def _suggestion(field: str | None, fields: dict) -> str:
    close = difflib.get_close_matches(str(field), list(fields), n=1, cutoff=0.75) if field and len(field) <= 64 else []
    return f" (did you mean {close[0]}?)" if close else ""


def pruned(value: object, kind: Type) -> object:
    """`value` with only the fields `kind` knows (recursively): what fnrun records in a Kptfile
    (a step's results in its status) must read back under kpt's schema."""
    if isinstance(kind, tuple) and kind[0] == "list":
        return [pruned(item, kind[1]) for item in value] if isinstance(value, list) else value
    if isinstance(kind, tuple) and kind[0] != "map" and isinstance(value, dict):
        return {key: pruned(item, kind[1][key]) for key, item in value.items() if key in kind[1]}
    return value
