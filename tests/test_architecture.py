"""The package's shape holds: no import circles, the layers pyproject.toml declares (checked by
import-linter on grimp's graph), a runtimes/ folder a reader takes in at a glance, a code map
(ARCHITECTURE.md) that names only what exists, small modules, and code that explains itself
without a tracker's numbers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "orchestrator"


def imports(*packages: str, path: Path | None = None) -> dict[str, list[str]]:
    """What each module of `packages` imports directly, by grimp, in a child process: grimp's
    worker threads would stay in this one, and tests that need the fork server forked from this
    process (tests/runtimes/host/test_forked_builtin.py) cannot have it forked then."""
    code = ("import json, sys, grimp; g = grimp.build_graph(*sys.argv[1:], cache_dir=None); "
            "print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))")
    env = None if path is None else {**os.environ, "PYTHONPATH": str(path)}
    done = subprocess.run([sys.executable, "-c", code, *packages], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    assert circles(imports("orchestrator")) == []


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    """The check above could pass by finding nothing at all: on a package with a circle it must not."""
    package = tmp_path / "circular"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circular import b\n")
    (package / "b.py").write_text("def f():\n    from circular import c\n")
    (package / "c.py").write_text("import circular.a\n")
    (package / "d.py").write_text("import circular.a\n")
    assert circles(imports("circular", path=tmp_path)) == [["circular.a", "circular.b", "circular.c"]]


def test_the_layers_hold() -> None:
    """pyproject.toml's import-linter contracts, run as a maintainer runs `lint-imports`."""
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(REPO / 'pyproject.toml')!r}, no_cache=True))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken\.", result.stdout), result.stdout[-2000:]


def test_functions_take_only_the_annotation_names_from_fnrun() -> None:
    """The catalog runs inside images that carry fnrun's sources, and in a fork of fnrun: it may
    share the annotation names, nothing that would tie a function to the orchestrator's insides."""
    graph = imports("functions", "orchestrator")
    reached = {imported for module, imported_by_it in graph.items() if module.split(".")[0] == "functions"
               for imported in imported_by_it if imported.split(".")[0] == "orchestrator"}
    assert reached <= {"orchestrator", "orchestrator.annotations"}, sorted(reached)


def test_runtimes_top_level_is_small() -> None:
    """One folder per place a function runs (container, host, remote), what they share
    (supervise, protocol), the cache around them and the registry: nothing else at the top."""
    entries = sorted(p.name for p in (PACKAGE / "runtimes").iterdir() if p.name != "__pycache__")
    assert entries == ["__init__.py", "cache.py", "container", "host", "protocol.py", "remote", "supervise"], entries


def test_no_module_over_about_four_hundred_lines() -> None:
    long = {p.relative_to(REPO).as_posix(): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}


def test_the_code_map_names_only_what_exists() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text()
    named = set(re.findall(r"`((?:orchestrator|functions|tests|bench|scripts|samples|Dockerfiles)/[\w./-]*)`", text))
    assert len(named) >= 20, "the code map names the folders"
    missing = sorted(name for name in named if not (REPO / name).exists())
    assert missing == []
    folders = {p.relative_to(REPO).as_posix() + "/" for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= named, f"every folder of the package is on the map: {sorted(folders - named)}"


def test_code_says_why_in_its_own_terms() -> None:
    """No docstring or comment explains itself by a tracker's number: the reason is written in the
    code's own words or cites a page of docs/ (CONTRIBUTING.md, Documentation)."""
    cited = [f"{p.relative_to(REPO)}:{i}" for root in (PACKAGE, REPO / "functions")
             for p in root.rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\b[Ii]ssue #?\d", line)]
    assert cited == []
