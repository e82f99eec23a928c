"""The function kind has one definition (`orchestrator.kinds.Kind`): no module compares a value
with a bare kind string, nor writes the list of kinds out again."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from orchestrator.kinds import KINDS, Kind
from orchestrator.resource import Resource
from orchestrator.select.functions import parse_declaration

PACKAGE = Path(__file__).resolve().parents[1] / "orchestrator"
SPELLINGS = {kind.value for kind in Kind}


def _kind_strings(node: ast.AST) -> list[str]:
    """The bare kind strings `node` is, or holds as a literal tuple, list or set."""
    if isinstance(node, ast.Constant) and node.value in SPELLINGS:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in SPELLINGS]
    return []


def offences(source: str) -> list[tuple[int, str]]:
    """(line, what) for each comparison with a bare kind string, and each literal collection
    naming more than one kind."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found += [(node.lineno, f"compares with {s!r}") for s in _kind_strings(side)]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(_kind_strings(node)) > 1:
            found.append((node.lineno, "writes the kinds out"))
    return sorted(set(found))


def test_no_module_compares_with_a_bare_kind_string() -> None:
    bad = [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
           for path in sorted(PACKAGE.rglob("*.py")) if path.name != "kinds.py"
           for line, what in offences(path.read_text())]
    assert bad == []


def test_the_scan_finds_what_it_looks_for() -> None:
    assert offences('if spec.kind == "exec": pass') == [(1, "compares with 'exec'")]
    assert offences('x = kind in ("container", "starlark")') == [(1, "compares with 'container'"), (1, "compares with 'starlark'"),
                                                                  (1, "writes the kinds out")]
    assert offences('KEYS = {"container", "exec", "deferFailure"}') == [(1, "writes the kinds out")]
    assert offences('if spec.kind == Kind.EXEC: pass\nsection = value["exec"]') == []


def test_a_kind_reads_and_prints_as_its_spelling() -> None:
    assert [str(kind) for kind in KINDS] == ["container", "exec", "starlark"]
    assert Kind("exec") is Kind.EXEC and f"{Kind.STARLARK}" == "starlark"
    declared = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {
        "config.kubernetes.io/function": yaml.safe_dump({"exec": {"path": "./fn.sh"}})}}}
    spec = parse_declaration(Resource(declared))
    assert spec is not None and spec.kind is Kind.EXEC
