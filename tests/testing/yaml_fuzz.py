"""Differential fuzzing of the write-back: random packages written with the text features YAML
allows (comments everywhere, `---`/`...` markers, 2- and 4-space indents, flow and block
collections, every scalar style and chomping, anchors and aliases, byte order marks, CRLF,
unicode, long lines), random edits applied by exec functions in three YAML libraries, and an
oracle: every file parses, every resource is what the function returned, files the function did
not change keep their bytes, no comment moves to another file, and each file holds every comment
no more often than its input did and at least as often as the edits leave it (a re-indent must not
write one twice, a replaced neighbour must not take one away).

`TAILS` (or `packages(tails=True)`) also generates the bytes after a file's last document that
every path must keep (blank lines, a closing comment, `...`, a last line without its newline) and
checks that `fnrun source | fnrun sink` gives every file back byte for byte.

Shared by the test suite's small fixed-seed profile and the long profile in bench/."""

from __future__ import annotations

import collections
import copy
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from .exec_functions import STYLES, run_exec, script

WORDS = ("alpha", "beta", "gamma", "delta", "café", "naïve", "日本", "rocket 🚀", "x-y", "a.b", "kube", "with space")
KEY_NAMES = ("app", "tier", "zone", "image", "port", "mode", "owner", "note", "path", "level")
COMMENTS = ("note", "keep me", "TODO: check", "é 🚀", "see docs", "#hash inside", "end")

#: Whether `packages` generates file tails (see the module's docstring).
TAILS = True

# -- the generated document: a tree of values, each with how it is written ---------------------


@dataclass
class Node:
    """A value and its written form: `style` for scalars (plain, ', ", |, |-, |+, >), `flow` for
    collections, a head comment above its key or dash, an inline comment, an anchor."""

    value: Any
    style: str = "plain"
    flow: bool = False
    head: str | None = None
    blank: bool = False  # a blank line above the head comment
    inline: str | None = None
    anchor: str | None = None
    alias: str | None = None  # written as *alias (value is the anchored one's)
    children: list[tuple[str, Node]] | list[Node] | None = None


def _plain_ok(text: str) -> bool:
    """Whether a string can be written plain and read back as the same string (YAML 1.1)."""
    if not text or text != text.strip() or any(c in text for c in ":#{}[],&*!|>'\"%@`\n") or text[0] in "-?":
        return False
    try:
        return yaml.safe_load(text) == text
    except yaml.YAMLError:
        return False


@st.composite
def scalars(draw: st.DrawFn) -> Node:
    kind = draw(st.sampled_from(["word", "words", "int", "long", "multi", "bool"]))
    if kind == "int":
        return Node(draw(st.integers(0, 70000)))
    if kind == "bool":
        return Node(draw(st.booleans()))
    if kind == "long":
        value = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=25, max_size=40)))
    elif kind == "multi":
        value = "\n".join(draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4)))
    else:
        value = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3 if kind == "words" else 1)))
    styles = ['"'] if "\n" in value else ["'", '"']
    if _plain_ok(value):
        styles += ["plain", "plain"]
    if "\n" in value or kind == "long":
        styles += ["|", "|-", "|+", ">"] if "\n" in value else ["|", "|-", ">"]
    style = draw(st.sampled_from(styles))
    if style == "|+":
        value += "\n" + "\n" * draw(st.integers(0, 2))
    elif style in ("|", ">"):
        value += "\n"
    return Node(value, style)


def _names(prefix: str) -> Any:
    return st.lists(st.sampled_from(KEY_NAMES), min_size=1, max_size=4, unique=True)


@st.composite
def trees(draw: st.DrawFn, depth: int = 0) -> Node:
    kind = draw(st.sampled_from(["map", "list", "scalar"] if depth < 2 else ["scalar"]))
    node = scalars() if kind == "scalar" else None
    if kind == "scalar":
        result = draw(node)  # type: ignore[arg-type]
    elif kind == "map":
        keys = draw(_names("k"))
        children = [(key, draw(trees(depth + 1))) for key in keys]
        result = Node({k: c.value for k, c in children}, flow=False, children=children)
    else:
        items = [draw(trees(depth + 1)) for _ in range(draw(st.integers(1, 3)))]
        result = Node([c.value for c in items], flow=False, children=items)
    if kind != "scalar" and draw(st.integers(0, 4)) == 0 and _flowable(result):
        result.flow = True
    return result


def _flowable(node: Node) -> bool:
    """A flow collection holds one-line scalars written plain or quoted, without comments."""
    pairs = node.children or []
    children = [c for _, c in pairs] if isinstance(node.value, dict) else list(pairs)
    return all(not c.children and c.style in ("plain", "'", '"') and c.value is not None and "\n" not in str(c.value) for c in children)


@st.composite
def documents(draw: st.DrawFn, name: str) -> Node:
    meta_children: list[tuple[str, Node]] = [("name", Node(name))]
    if draw(st.booleans()):
        labels = [(k, Node(draw(st.sampled_from(["web", "db", "v1", "x"])))) for k in draw(_names("l"))]
        meta_children.append(("labels", Node({k: c.value for k, c in labels}, children=labels)))
    body = [("apiVersion", Node("v1")), ("kind", Node("ConfigMap")), ("metadata", Node({k: c.value for k, c in meta_children}, children=meta_children))]
    for key in draw(st.lists(st.sampled_from(["data", "spec", "extra", "list"]), min_size=1, max_size=3, unique=True)):
        body.append((key, draw(trees(0))))
    root = Node({k: c.value for k, c in body}, children=body)
    _decorate(draw, root, [0])
    return root


def _decorate(draw: st.DrawFn, node: Node, counter: list[int]) -> None:
    """Comments and anchors sprinkled over a document (aliases only to scalars, after their anchor)."""
    anchors: list[Node] = []

    def walk(current: Node, top: bool) -> None:
        pairs = current.children or []
        kids = [c for _, c in pairs] if isinstance(current.value, dict) else list(pairs)
        for kid in kids:
            if not current.flow and draw(st.integers(0, 6)) == 0:
                kid.head = draw(st.sampled_from(COMMENTS))
                kid.blank = draw(st.integers(0, 2)) == 0
            if not current.flow and not kid.children and draw(st.integers(0, 5)) == 0:
                kid.inline = draw(st.sampled_from(COMMENTS))
            if not top and not current.flow and not kid.children and kid.style != "|+" and draw(st.integers(0, 7)) == 0:
                if anchors and draw(st.booleans()):
                    target = draw(st.sampled_from(anchors))
                    kid.alias, kid.value, kid.style, kid.inline = target.anchor, target.value, target.style, None
                else:
                    counter[0] += 1
                    kid.anchor = f"a{counter[0]}"
                    anchors.append(kid)
            walk(kid, False)

    walk(node, True)
    # a mapping's value must be rebuilt: aliases changed some leaves
    _revalue(node)


def _revalue(node: Node) -> Any:
    if node.children is None:
        return node.value
    if isinstance(node.value, dict):
        node.value = {k: _revalue(c) for k, c in node.children}  # type: ignore[misc]
    else:
        node.value = [_revalue(c) for c in node.children]  # type: ignore[union-attr]
    return node.value


# -- writing a node as text ----------------------------------------------------------------------


@dataclass
class Layout:
    step: int = 2
    wide: bool = False  # dashes indented under their key


def _scalar(node: Node, indent: int, layout: Layout) -> list[str]:
    """The scalar's text after `key:` (first element) and its following lines."""
    value = node.value
    lead = (f"&{node.anchor} " if node.anchor else "")
    if node.alias:
        return [f" *{node.alias}"]
    if not isinstance(value, str):
        return [f" {lead}{json.dumps(value)}"]
    if node.style == "plain":
        return [f" {lead}{value}"]
    if node.style == "'":
        return [" " + lead + "'" + value.replace("'", "''").replace("\n", "\n\n") + "'"]
    if node.style == '"':
        return [" " + lead + json.dumps(value, ensure_ascii=False)]
    pad = " " * (indent + layout.step)
    lines = value.rstrip("\n").split("\n")
    out = [f" {lead}{node.style}"]
    if node.style == ">":
        lines = "\n\n".join(lines).split("\n")
    out += [pad + line if line else "" for line in lines]
    if node.style == "|+":
        out += [""] * (len(value) - len(value.rstrip("\n")) - 1)
    return out


def _flow(node: Node) -> str:
    if node.children is None:
        return _scalar(node, 0, Layout())[0].strip()
    if isinstance(node.value, dict):
        return "{" + ", ".join(f"{k}: {_flow(c)}" for k, c in node.children) + "}"  # type: ignore[misc]
    return "[" + ", ".join(_flow(c) for c in node.children) + "]"  # type: ignore[union-attr]


def _comment(text: str | None) -> str:
    return f"  # {text}" if text else ""


def render(node: Node, indent: int, layout: Layout) -> list[str]:
    """Block lines of a mapping or sequence at `indent`."""
    out: list[str] = []
    pad = " " * indent
    if isinstance(node.value, dict):
        for key, child in node.children:  # type: ignore[misc]
            if child.head:
                out += [""] * child.blank + [f"{pad}# {child.head}"]
            out += _entry(f"{pad}{key}:", child, indent, layout)
    else:
        for child in node.children:  # type: ignore[union-attr]
            if child.head:
                out += [""] * child.blank + [f"{pad}# {child.head}"]
            if child.children is not None and not child.flow and not child.anchor:
                inner = render(child, indent + 2, layout)
                first = inner[0][indent + 2 :]
                out.append(f"{pad}- {first}")
                out += inner[1:]
            else:
                lines = _value_lines(child, indent, layout)
                out.append(f"{pad}-{lines[0]}")
                out += lines[1:]
    return out


def _value_lines(child: Node, indent: int, layout: Layout) -> list[str]:
    if child.children is not None and child.flow:
        return [" " + _flow(child) + _comment(child.inline)]
    if child.children is not None:
        return [""] + render(child, indent + 2, layout)
    lines = _scalar(child, indent, layout)
    return [lines[0] + _comment(child.inline)] + lines[1:]


def _entry(head: str, child: Node, indent: int, layout: Layout) -> list[str]:
    if child.children is not None and not child.flow:
        if not child.children:
            return [head + (" {}" if isinstance(child.value, dict) else " []")]
        nested = indent + (layout.step if isinstance(child.value, dict) or layout.wide else 0)
        return [head] + render(child, nested, layout)
    lines = _value_lines(child, indent, layout)
    return [head + lines[0]] + lines[1:]


# -- packages --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """A comment the generator hung on a node: above its key or dash (`head`), or after it."""

    resource: str
    path: tuple
    inline: bool
    text: str


@dataclass
class Package:
    files: dict[str, bytes]
    values: dict[str, list[dict]]  # per file, its resources' values in order
    comments: dict[str, set[str]] = field(default_factory=dict)
    placed: dict[str, list[Placed]] = field(default_factory=dict)  # per file, its nodes' comments
    tails: bool = False


def placed_comments(node: Node, resource: str, path: tuple = ()) -> list[Placed]:
    """The head and inline comments of a generated document, with the path of their node."""
    found: list[Placed] = []
    pairs = node.children or []
    kids = list(pairs) if isinstance(node.value, dict) else list(enumerate(pairs))
    for key, kid in kids:  # type: ignore[misc]
        where = (*path, key)
        if kid.head:
            found.append(Placed(resource, where, False, kid.head))
        if kid.inline:
            found.append(Placed(resource, where, True, kid.inline))
        found += placed_comments(kid, resource, where)
    return found


_TAILS = ("\n", "\n\n", "# [END] of {name}", "# [END] of {name}\n", "...\n", "...\n# [END] of {name}\n")


@st.composite
def packages(draw: st.DrawFn, tails: bool | None = None) -> Package:
    tails = TAILS if tails is None else tails
    files: dict[str, bytes] = {}
    values: dict[str, list[dict]] = {}
    comments: dict[str, set[str]] = {}
    placed: dict[str, list[Placed]] = {}
    count = 0
    for number in range(draw(st.integers(1, 3))):
        name = f"f{number}.yaml"
        layout = Layout(step=draw(st.sampled_from([2, 4])), wide=draw(st.booleans()))
        lines: list[str] = []
        if draw(st.integers(0, 3)) == 0:
            lines.append(f"# {draw(st.sampled_from(COMMENTS))} of {name}")
        docs = []
        placed[name] = []
        for position in range(draw(st.integers(1, 3))):
            count += 1
            doc = draw(documents(f"r{count}"))
            docs.append(doc.value)
            placed[name] += placed_comments(doc, f"r{count}")
            marker = draw(st.sampled_from(["---", "--- # " + "long separator comment " * draw(st.integers(1, 5)), None]))
            if position > 0:
                if draw(st.integers(0, 3)) == 0:
                    lines.append("...")
                lines.append(marker or "---")
            elif marker:
                lines.append(marker)
            lines += render(doc, 0, layout)
        tail = draw(st.sampled_from(["", "...", "# foot", "...\n# foot of " + name]))
        if tail:
            lines.append(tail)
        text = "\n".join(lines) + "\n"
        if _load(text.encode()) != docs:  # a blank line after a keep (`|+`) block scalar is its own
            assert "|+" in text and "\n\n" in text, text  # else the generator writes what it means
            docs = _load(text.encode())
        if tails:
            text += draw(st.sampled_from(("",) + _TAILS)).format(name=name)
            if draw(st.integers(0, 3)) == 0:
                text = text.rstrip("\n")  # the last line without its newline: a clip block scalar there means one less
                docs = _load(text.encode())
        if draw(st.integers(0, 5)) == 0:
            text = text.replace("\n", "\r\n")
        raw = text.encode()
        if draw(st.integers(0, 6)) == 0:
            raw = b"\xef\xbb\xbf" + raw
        files[name] = raw
        values[name] = docs
        comments[name] = _comment_texts(text)
    return Package(files, values, comments, placed, tails)


def comment_counts(text: str) -> collections.Counter[str]:
    """How often each comment stands in a generated text: no generated value holds a `#`, so a
    line's comment is what follows its first one."""
    return collections.Counter(line[line.index("#") + 1 :].strip() for line in text.splitlines() if "#" in line)


def surviving(package: Package, path: str, ops: list[list]) -> collections.Counter[str]:
    """The comments of a file's nodes that the edits leave a place for: not those of a dropped
    resource, nor those under a deleted, replaced or emptied node (an inline one of a replaced
    scalar may go with it). Every op counts as done, so this errs towards fewer."""
    gone: set[str] = set()
    cut: list[tuple[str, tuple, bool]] = []  # (resource, path, whether the node's own comments go too)
    for op in ops:
        if op[0] == "drop":
            gone.add(op[1])
        elif op[0] in ("set", "del", "empty"):
            cut.append((op[1], tuple(op[2]), op[0] == "del"))

    def kept(comment: Placed) -> bool:
        if comment.resource in gone:
            return False
        for resource, where, own in cut:
            if resource != comment.resource or comment.path[: len(where)] != where:
                continue
            if len(comment.path) > len(where) or own or comment.inline:
                return False
        return True

    return collections.Counter(c.text for c in package.placed.get(path, []) if kept(c))


def _comment_texts(text: str) -> set[str]:
    """The generated comments a text holds, a file's own (`of f0.yaml`) by name."""
    found = {c for c in COMMENTS if f"# {c}" in text}
    return found | {f"of f{n}.yaml" for n in range(3) if f" of f{n}.yaml" in text}


# -- edits -----------------------------------------------------------------------------------------

APPLY = r'''
def _at(value, path):
    for step in path:
        value = value[step]
    return value

def apply(items, ops, names=lambda item: item['metadata']['name']):
    for op in ops:
        kind = op[0]
        if kind == 'drop':
            for n, item in enumerate(items):
                if names(item) == op[1]:
                    del items[n]
                    break
            continue
        if kind == 'new':
            meta = {'name': op[1]}
            if op[2]:
                meta['annotations'] = {'config.kubernetes.io/path': op[2]}
            items.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta, 'data': {'k': op[3]}})
            continue
        item = next((i for i in items if names(i) == op[1]), None)
        if item is None:
            continue
        try:
            parent = _at(item, op[2][:-1])
            last = op[2][-1]
            parent[last] if kind != 'set' else None
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced it
        if not isinstance(parent, (dict, list)) or (kind == 'set' and isinstance(parent, list) and last >= len(parent)):
            continue
        if kind == 'append' and not isinstance(parent[last], list):
            continue
        if kind == 'set':
            parent[last] = op[3]
        elif kind == 'del':
            del parent[last]
        elif kind == 'append':
            parent[last].append(op[3])
        elif kind == 'empty':
            parent[last] = [] if isinstance(parent[last], list) else {}
'''

_namespace: dict[str, Any] = {}
exec(APPLY, _namespace)  # the same code the functions run
apply = _namespace["apply"]


def value_paths(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """(path, value) of every node of a value, itself first."""
    found = [(path, value)]
    if isinstance(value, dict):
        for key, child in value.items():
            found += value_paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += value_paths(child, (*path, index))
    return found


@st.composite
def edits(draw: st.DrawFn, package: Package) -> list[list]:
    """A few edits of the package's resources (none: the identity function)."""
    resources = [doc for docs in package.values.values() for doc in docs]
    ops: list[list] = []
    for _ in range(draw(st.integers(0, 3))):
        doc = draw(st.sampled_from(resources))
        name = doc["metadata"]["name"]
        kind = draw(st.sampled_from(["set", "set", "del", "append", "empty", "drop", "new", "newpath"]))
        if kind == "drop":
            ops.append(["drop", name])
            continue
        if kind in ("new", "newpath"):
            path = draw(st.sampled_from(list(package.files) + ["sub/new.yaml", None])) if kind == "newpath" else None
            ops.append(["new", f"n{len(ops)}-{name}", path, draw(st.sampled_from(WORDS))])
            continue
        paths = [(p, v) for p, v in value_paths(doc) if len(p) >= 2 and p[0] not in ("apiVersion", "kind") and p[:2] != ("metadata", "name")]
        if kind == "append":
            paths = [(p, v) for p, v in paths if isinstance(v, list)]
        if kind == "empty":
            paths = [(p, v) for p, v in paths if isinstance(v, (list, dict)) and v]
        if kind == "set":
            paths = [(p, v) for p, v in paths if not isinstance(v, (list, dict))] + [(p + ("added",), None) for p, v in paths if isinstance(v, dict)]
        if kind == "del":
            paths = [(p, v) for p, v in paths if isinstance(p[-1], str)]
        if not paths:
            continue
        path, _ = draw(st.sampled_from(paths))
        value = draw(st.sampled_from(WORDS + (7, "0400", "long " * 30)))
        ops.append([kind, name, list(path), value])
    return ops


def function(style: str, ops: list[list], wide: bool) -> str:
    setup = "y.indent(mapping=2, sequence=4, offset=2)\ny.width = 60\n" if style == "ruamel" and wide else ""
    return script(style, APPLY + f"apply(items, {ops!r})\n", setup)


# -- the oracle ----------------------------------------------------------------------------------

_OURS = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "config.k8s.io/")


def _normal(value: Any) -> Any:
    value = copy.deepcopy(value)
    meta = value.get("metadata") or {}
    notes = meta.get("annotations")
    if isinstance(notes, dict):
        for key in [k for k in notes if k.startswith(_OURS)]:
            del notes[key]
        if not notes:
            del meta["annotations"]
    return value


def _load(raw: bytes) -> list[Any]:
    return [d for d in yaml.safe_load_all(raw.decode("utf-8-sig")) if d is not None]


def expected(package: Package, ops: list[list]) -> dict[str, list[dict]]:
    """Each file's resources after the edits: what the function returns, where fnrun puts it."""
    items = []
    for path, docs in package.values.items():
        for doc in copy.deepcopy(docs):
            doc.setdefault("metadata", {})["__path"] = path
            items.append(doc)
    apply(items, ops)
    files: dict[str, list[dict]] = {}
    for item in items:
        meta = item["metadata"]
        path = meta.pop("__path", None) or (meta.get("annotations") or {}).get("config.kubernetes.io/path") or f"{meta['name']}_configmap.yaml"
        files.setdefault(path, []).append(_normal(item))
    return files


def _writes_invalid_yaml(root: Path) -> bool:
    """Whether the function, given the package as `fnrun source` lists it, writes what PyYAML
    cannot parse: then fnrun refusing its output is right."""
    import subprocess
    import sys

    from orchestrator import api

    listing = api.source(root / "pkg")
    done = subprocess.run([sys.executable, str(root / "fn.py")], input=listing, capture_output=True, text=True)
    try:
        yaml.safe_load(done.stdout)
    except yaml.YAMLError:
        return True
    return False


def _through_sink(root: Path, package: Package) -> tuple[str, dict[str, bytes]] | None:
    """(the problem, what sink wrote) when `fnrun source | fnrun sink` into an empty directory
    does not give back every file byte for byte."""
    from orchestrator import api
    from orchestrator.errors import FnrunError

    origin, target = root / "piped-from", root / "piped-to"
    for name, content in package.files.items():
        (origin / name).parent.mkdir(parents=True, exist_ok=True)
        (origin / name).write_bytes(content)
    try:
        api.sink(target, api.source(origin))
    except FnrunError as err:
        return f"source | sink failed: {err}", {}
    written = {p.relative_to(target).as_posix(): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()}
    differ = sorted(name for name in package.files if written.get(name) != package.files[name])
    return (f"source | sink changed {', '.join(differ)}", written) if differ else None


def _same_resources(got: list[dict], want: list[dict], new: set[str]) -> bool:
    """The same resources, the file's own in their order (where a new one without an index goes
    among them is the writer's choice)."""
    def key(doc: dict) -> str:
        return json.dumps(doc, sort_keys=True, default=str)

    def own(docs: list[dict]) -> list[dict]:
        return [d for d in docs if d["metadata"]["name"] not in new]

    return sorted(map(key, got)) == sorted(map(key, want)) and own(got) == own(want)


def touched(package: Package, ops: list[list]) -> set[str]:
    """The files an edit can change: those of edited or dropped resources, and new ones' targets."""
    where = {doc["metadata"]["name"]: path for path, docs in package.values.items() for doc in docs}
    out = set()
    for op in ops:
        if op[0] == "new":
            out.add(op[2] or f"{op[1]}_configmap.yaml")
        elif op[1] in where:
            out.add(where[op[1]])
    return out


@dataclass
class Finding:
    problem: str
    files: dict[str, bytes]
    ops: list[list]
    style: str
    written: dict[str, bytes]
    error: str | None = None
    wide: bool = False  # the ruamel function's sequences indented (`function`'s `wide`)


def check(package: Package, ops: list[list], style: str, wide: bool = False, work: Path | None = None) -> Finding | None:
    """Run one case; None when the oracle finds nothing wrong."""
    root = Path(tempfile.mkdtemp(dir=work))
    try:
        piped = _through_sink(root, package) if package.tails else None
        out = run_exec(root, package.files, function(style, ops, wide))
        # broken: the library wrote YAML no parser reads (ruamel: an emptied mapping after a comment)
        broken = out.error is not None and "returned invalid output" in str(out.error) and _writes_invalid_yaml(root)
        finding = None if broken or piped is not None else _judge(package, ops, style, out)
        if finding is not None and _function_wrote_it(root, package, ops, out):
            finding = None  # the library changed a value the edits did not touch (ruamel: a comment into a block scalar)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if piped is not None:
        return Finding(piped[0], package.files, [], "source | sink", piped[1])
    if finding is not None:
        finding.wide = wide
    return finding


def _function_wrote_it(root: Path, package: Package, ops: list[list], out: Any) -> bool:
    """Whether every written file holds exactly the resources the function itself returned, given
    the package as `fnrun source` lists it, where those differ from what its edits meant: then the
    difference is the function's (its YAML library's), not the write-back's."""
    import subprocess
    import sys

    from orchestrator import api

    again = root / "again"
    for name, content in package.files.items():
        (again / name).parent.mkdir(parents=True, exist_ok=True)
        (again / name).write_bytes(content)
    done = subprocess.run([sys.executable, str(root / "fn.py")], input=api.source(again), capture_output=True, text=True)
    try:
        items = (yaml.safe_load(done.stdout) or {}).get("items") or []
    except yaml.YAMLError:
        return False
    returned: dict[str, list[str]] = {}
    for item in items:
        path = ((item.get("metadata") or {}).get("annotations") or {}).get("config.kubernetes.io/path")
        returned.setdefault(path or f"{item['metadata']['name']}_configmap.yaml", []).append(_key(_normal(item)))
    meant = {path: sorted(map(_key, docs)) for path, docs in expected(package, ops).items() if docs}
    if out.error is not None or {path: sorted(keys) for path, keys in returned.items()} == meant:
        return False
    # read as fnrun reads the files it hands the function: with a final newline (a keep block
    # scalar ending a file without one means one line break less to PyYAML alone)
    written = {path: sorted(_key(_normal(d)) for d in _load(_with_final_newline(raw)) if isinstance(d, dict) and "kind" in d) for path, raw in out.files.items()}
    return all(written[path] == sorted(returned.get(path, [])) for path in written)


def _with_final_newline(raw: bytes) -> bytes:
    return raw if not raw or raw.endswith(b"\n") else raw + b"\n"


def _key(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, default=str)


def _judge(package: Package, ops: list[list], style: str, out: Any) -> Finding | None:
    """The oracle's verdict on one run's outcome."""

    def found(problem: str) -> Finding:
        return Finding(problem, package.files, ops, style, out.files, str(out.error) if out.error else None)

    want = expected(package, ops)
    new = {op[1] for op in ops if op[0] == "new"}
    names = [doc["metadata"]["name"] for docs in want.values() for doc in docs]
    if out.error is not None:
        duplicate_new = len(names) != len(set(names))
        if duplicate_new or "already exists" in str(out.error) or "excluded" in str(out.error):
            return None  # the edit itself is refused (two resources at one place)
        return found("fnrun failed")
    for path, raw in out.files.items():
        try:
            docs = _load(raw)
        except yaml.YAMLError as err:
            return found(f"{path} does not parse: {str(err).splitlines()[0]}")
        resources = [_normal(d) for d in docs if isinstance(d, dict) and "kind" in d]
        if not _same_resources(resources, want.get(path, []), new):
            return found(f"{path}: resources differ from what the function returned")
    for path in want:
        if want[path] and path not in out.files:
            return found(f"{path}: not written")
    changed = touched(package, ops)
    for path, raw in package.files.items():
        if path not in changed and out.files.get(path) != raw:
            return found(f"{path}: changed though the function did not change it")
        if path in out.files:
            written = out.files[path].decode("utf-8-sig")
            extra = _comment_texts(written) - package.comments[path]
            if extra:
                return found(f"{path}: comments from another file: {sorted(extra)}")
            problem = _comment_count_problem(package, path, written, ops)
            if problem:
                return found(f"{path}: {problem}")
    for path in set(out.files) - set(package.files):
        if _comment_texts(out.files[path].decode("utf-8-sig")):
            return found(f"{path}: a new file holds the package's comments")
    return None


def _comment_count_problem(package: Package, path: str, written: str, ops: list[list]) -> str | None:
    """What is wrong with how often the written file holds each comment, if anything."""
    before = comment_counts(package.files[path].decode("utf-8-sig"))
    after = comment_counts(written)
    twice = sorted(c for c in after if after[c] > before[c])
    if twice:
        return "comment written more often than it was: " + ", ".join(f"{c!r} {before[c]} -> {after[c]}" for c in twice)
    wanted = surviving(package, path, ops)
    lost = sorted(c for c in wanted if after[c] < wanted[c])
    if lost:
        return "comment lost: " + ", ".join(f"{c!r} {wanted[c]} -> {after[c]}" for c in lost)
    return None


STYLE_CHOICES = STYLES
