"""Module-level state that changes while fnrun runs is listed in ARCHITECTURE.md ("Process-wide
state"), with why the process owns it or that a run should: a server serves many runs in one
process, so every such value is a decision, never an accident. This test finds them all in the
package's syntax trees and compares with the list."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "orchestrator"
# a container a module-level name may be bound to that the module then changes in place
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "local", "Event", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}


def _name_of(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _module_state(path: Path, root: Path = ROOT) -> set[str]:
    """`module.name` for each lowercase module-level name bound to a mutable container or rebound
    with `global`, and `module.function()` for each function memoised with functools.cache."""
    module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rebound = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
    found: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_name_of(d.func if isinstance(d, ast.Call) else d) in ("cache", "lru_cache") for d in statement.decorator_list):
                found.add(f"{module}.{statement.name}()")
            continue
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        else:
            continue
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and _name_of(value.func) in MUTABLE_CALLS
        )
        for target in targets:
            if isinstance(target, ast.Name) and not target.id.isupper() and not target.id.startswith("__") and (mutable or target.id in rebound):
                found.add(f"{module}.{target.id}")
    return found


def found_in_package() -> set[str]:
    return {name for path in sorted(PACKAGE.rglob("*.py")) for name in _module_state(path)}


def listed_in_architecture() -> set[str]:
    """Every `module.name` in the first column of the section's tables (`a.b._x`, `_y` share a.b)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("## Process-wide state"):text.index("## Glossary")]
    listed: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        prefix = ""
        for name in re.findall(r"`([^`]+)`", cell):
            if "." in name:
                prefix, _, name = name.rpartition(".")
            listed.add(f"orchestrator.{prefix}.{name}")
    return listed


def test_every_piece_of_process_wide_state_is_listed() -> None:
    found, listed = found_in_package(), listed_in_architecture()
    assert not found - listed, f"module-level state not listed in ARCHITECTURE.md's 'Process-wide state': {sorted(found - listed)}"
    assert not listed - found, f"listed in ARCHITECTURE.md but no longer in the package: {sorted(listed - found)}"


def test_the_scan_sees_each_shape(tmp_path: Path) -> None:
    """The finder catches each way a module keeps state, and leaves constants alone."""
    source = (
        "import functools, threading\n"
        "TABLE = {}\n_memo: dict[str, int] = {}\n_flag = False\n_local = threading.local()\n_fixed = 3\n"
        "def set_flag():\n    global _flag\n    _flag = True\n"
        "@functools.cache\ndef looked_up():\n    return 1\n"
    )
    sample = tmp_path / "orchestrator" / "sample.py"
    sample.parent.mkdir()
    sample.write_text(source)
    assert _module_state(sample, tmp_path) == {
        "orchestrator.sample._memo", "orchestrator.sample._flag", "orchestrator.sample._local", "orchestrator.sample.looked_up()",
    }


#: What a run owns (runtimes.Registry) and a server lends to each call: none of it may be kept at
#: module level again, where two runs in one process would share it.
OWNED_BY_A_RUN = {
    "orchestrator.runtimes._runtimes", "orchestrator.runtimes._cache", "orchestrator.runtimes.container.runtime._client",
    "orchestrator.runtimes.host.forked._server", "orchestrator.runtimes.host.builtin._labels",
    "orchestrator.runtimes.host.builtin._hashes", "orchestrator.runtimes.host.handover._entries",
    "orchestrator.runtimes.container.early._current",
}


def test_what_a_run_owns_is_not_module_level_state() -> None:
    assert not found_in_package() & OWNED_BY_A_RUN
    assert not listed_in_architecture() & OWNED_BY_A_RUN
