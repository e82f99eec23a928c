"""A function that swaps documents of a file through their index annotations moves each one whole:
its comments, key order and flow maps go with it, never onto the document now at its old place, and
one it did not otherwise change keeps its bytes (orchestrator/write/bases.py). kpt's runner moves
them so too (it copies comments from input to output by resource identity); fnrun's files mean
what kpt's mean, document for document, in the same order.

The functions are exec scripts in three YAML libraries and Starlark run in-process (kpt's catalog
builtin), so no engine is needed; kpt runs the same exec scripts where it is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.merge.origin import compare
from orchestrator.read.package import read_file
from orchestrator.yamlio import comments
from testing.exec_functions import STYLES, run_exec, script
from testing.in_process import fnrun_here
from testing.kpt import CATALOG, ON
from testing.sizing import examples

ORIGINAL = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm  # the name\n  annotations: {example.com/note: 'x'}  # note\n"
    "data:\n  a: b  # c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n"
)
SWAPPED = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
    "  name: cm  # the name\n  annotations: {example.com/note: 'x'}  # note\ndata:\n  a: z  # c\n"
)
INDEXES = ("config.kubernetes.io/index", "internal.config.kubernetes.io/index")

#: The swap as a Python function body over `items` (testing.exec_functions.script).
SWAP = f"""
for r in items:
    md = r['metadata']
    notes = md.setdefault('annotations', {{}})
    if md['name'] == 'cm':
        notes.update(dict.fromkeys({INDEXES!r}, '1'))
        r['data']['a'] = 'z'
    if md['name'] == 'cm2':
        notes.update(dict.fromkeys({INDEXES!r}, '0'))
"""

STARLARK_SWAP = f"""
for r in ctx.resource_list["items"]:
    notes = r["metadata"]["annotations"]
    if r["metadata"]["name"] == "cm":
        notes["{INDEXES[0]}"] = "1"
        notes["{INDEXES[1]}"] = "1"
        r["data"]["a"] = "z"
    if r["metadata"]["name"] == "cm2":
        notes["{INDEXES[0]}"] = "0"
        notes["{INDEXES[1]}"] = "0"
"""

KPT = shutil.which("kpt")


def _documents(content: str | bytes) -> list[object]:
    return [d for d in yaml.safe_load_all(content) if d is not None]


def _kpt(root: Path, files: dict[str, str], function: str) -> dict[str, str]:
    """The files after `kpt fn eval --exec` of the script `function`."""
    package = root / "kpt"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    fn = root / "kpt-fn.py"
    fn.write_text(function)
    fn.chmod(0o755)
    subprocess.run([KPT or "kpt", "fn", "eval", str(package), "--exec", str(fn)], check=True, capture_output=True, timeout=120)
    return {name: (package / name).read_text() for name in files}


@pytest.mark.parametrize("style", STYLES)
def test_an_exec_function_that_swaps_two_documents_moves_each_with_its_text(tmp_path: Path, style: str) -> None:
    out = run_exec(tmp_path, {"cm.yaml": ORIGINAL}, script(style, SWAP))
    assert out.error is None, out.error
    assert out.files["cm.yaml"].decode() == SWAPPED


def test_a_kptfile_exec_step_that_swaps_two_documents(tmp_path: Path) -> None:
    """The swap as `fnrun render` runs it from a Kptfile: the same file as from `fnrun run`."""
    fn = tmp_path / "swap.py"
    fn.write_text(script("pyyaml", SWAP))
    fn.chmod(0o755)
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "Kptfile").write_text(f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - exec: {fn}\n")
    (package / "cm.yaml").write_text(ORIGINAL)
    result = fnrun_here("render", str(package), "--allow-exec", "--no-status")
    assert result.code == 0, result.stderr
    assert (package / "cm.yaml").read_text() == SWAPPED


def _starlark_package(root: Path, source: str, files: dict[str, str], then: str = "") -> Path:
    package = root / "pkg"
    package.mkdir(parents=True)
    local = '  annotations:\n    config.kubernetes.io/local-config: "true"\n'
    (package / "Kptfile").write_text(
        f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n{local}pipeline:\n  mutators:\n"
        f"  - image: {CATALOG}/starlark:v0.5.1\n    configPath: fn-config.yaml\n{then}"
    )
    (package / "fn-config.yaml").write_text(
        f"apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: swap\n{local}source: |\n"
        + textwrap.indent(source.strip() + "\n", "  ")
    )
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def test_starlark_in_process_that_swaps_two_documents(tmp_path: Path) -> None:
    package = _starlark_package(tmp_path, STARLARK_SWAP, {"cm.yaml": ORIGINAL})
    result = fnrun_here("render", str(package), "--no-status", env=ON)
    assert result.code == 0, result.stderr
    assert (package / "cm.yaml").read_text() == SWAPPED


def test_a_later_step_sees_a_swapped_documents_own_comments(tmp_path: Path) -> None:
    """A catalog step after the swap reads each document's comments (apply-setters' markers): the
    marker on cm's line is still cm's, so the setter applies, as it does after kpt's swap."""
    original = ORIGINAL.replace("  a: b  # c\n", "  a: b  # c\n  tier: silver # kpt-set: ${tier}\n")
    then = f"  - image: {CATALOG}/apply-setters:v0.2.4\n    configMap:\n      tier: gold\n"
    package = _starlark_package(tmp_path, STARLARK_SWAP, {"cm.yaml": original}, then)
    result = fnrun_here("render", str(package), "--no-status", env=ON)
    assert result.code == 0, result.stderr
    assert (package / "cm.yaml").read_text() == SWAPPED + "  tier: gold # kpt-set: ${tier}\n"


@pytest.mark.skipif(KPT is None, reason="kpt is not installed")
def test_the_swapped_file_means_what_kpts_does(tmp_path: Path) -> None:
    function = script("pyyaml", SWAP)
    theirs = _kpt(tmp_path, {"cm.yaml": ORIGINAL}, function)
    out = run_exec(tmp_path, {"cm.yaml": ORIGINAL}, function)
    assert out.error is None, out.error
    assert _documents(out.files["cm.yaml"]) == _documents(theirs["cm.yaml"])


#: Two files' documents swapped through their path annotations.
CROSS = """
for r in items:
    notes = r['metadata']['annotations']
    moved = {'a.yaml': 'b.yaml', 'b.yaml': 'a.yaml'}[notes['config.kubernetes.io/path']]
    notes['config.kubernetes.io/path'] = notes['internal.config.kubernetes.io/path'] = moved
"""


@pytest.mark.parametrize("style", STYLES)
def test_documents_swapped_between_files_take_no_comment_of_the_other(tmp_path: Path, style: str) -> None:
    """Each moves to the other's file as any resource moved to another file does (its own text, as
    the function wrote it): neither is written as an edit of the document read at its new place."""
    files = {
        "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # name of a\ndata:\n  k: v  # k of a\n",
        "b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b  # name of b\n",
    }
    function = script(style, CROSS)
    out = run_exec(tmp_path, files, function)
    assert out.error is None, out.error
    for name, other in (("a.yaml", "b"), ("b.yaml", "a")):
        written = out.files[name].decode()
        assert _documents(written) == _documents(files[f"{other}.yaml"]), written
        assert all(comment.endswith(f"of {other}") for comment in comments.comments(written)), written
    if KPT is not None:
        theirs = _kpt(tmp_path, files, function)
        assert {name: _documents(text) for name, text in theirs.items()} == {name: _documents(out.files[name]) for name in files}


#: Functions that renumber a file's documents: one made in front of them, the first deleted.
RENUMBERING = {
    "made-in-front": f"""
for r in items:
    r['metadata']['annotations'].update(dict.fromkeys({INDEXES!r}, str(int(r['metadata']['annotations'][{INDEXES[0]!r}]) + 1)))
items.insert(0, {{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {{'name': 'new', 'annotations': {{{INDEXES[0]!r}: '0', 'config.kubernetes.io/path': 'cm.yaml'}}}}}})
""",
    "first-deleted": f"""
del items[0]
for r in items:
    r['metadata']['annotations'].update(dict.fromkeys({INDEXES!r}, str(int(r['metadata']['annotations'][{INDEXES[0]!r}]) - 1)))
""",
}
NAMED = "# head of a\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # name of a\n--- # separator 1\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b  # name of b\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c  # name of c\n"


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("function", sorted(RENUMBERING))
def test_a_function_that_renumbers_a_files_documents_moves_each_with_its_text(tmp_path: Path, style: str, function: str) -> None:
    """Each document keeps its own comments, every separator line of the file stands once, and the
    file means what kpt's does."""
    fn = script(style, RENUMBERING[function])
    out = run_exec(tmp_path, {"cm.yaml": NAMED}, fn)
    assert out.error is None, out.error
    written = out.files["cm.yaml"].decode()
    separators, documents = _split(written)
    for document in documents:
        name = yaml.safe_load(document)["metadata"]["name"]
        assert all(comment.endswith(f"of {name}") for comment in comments.comments(document)), written
        if name in ("b", "c"):
            assert document == NAMED.split("---")[{"b": 1, "c": 2}[name]].split("\n", 1)[1], written
    assert separators.count("--- # separator 1\n") == 1, written  # the file's line, where it stood
    if KPT is not None:
        assert _documents(written) == _documents(_kpt(tmp_path, {"cm.yaml": NAMED}, fn)["cm.yaml"])


# --- any permutation of a file's documents ---------------------------------------------------


def _document(draw: st.DrawFn, number: int) -> str:
    """A ConfigMap `cm-N` whose every comment names it, some of it in flow style (flow-style
    metadata travels to the function with its text in a layout note)."""
    lines = [f"# above cm-{number}\n"] if draw(st.booleans()) else []
    lines += ["apiVersion: v1\n", "kind: ConfigMap\n"]
    if draw(st.booleans()):
        lines.append(f"metadata: {{name: cm-{number}}}  # metadata of cm-{number}\n")
    else:
        lines.append("metadata:\n")
        lines.append(f"  name: cm-{number}" + (f"  # name of cm-{number}\n" if draw(st.booleans()) else "\n"))
        if draw(st.booleans()):
            lines.append(f"  labels: {{app: cm-{number}}}  # labels of cm-{number}\n")
    lines.append("data:\n")
    lines.append(f"  value: v{number}" + (f"  # value of cm-{number}\n" if draw(st.booleans()) else "\n"))
    if draw(st.booleans()):
        lines.append(f"  list: [x{number}, y{number}]\n")
    if draw(st.booleans()):
        lines.append(f"  # last words of cm-{number}\n")
    return "".join(lines)


@st.composite
def swaps(draw: st.DrawFn) -> tuple[list[str], list[str], list[int], set[int]]:
    """A file's documents, the separator before each (the first: none, or one opening the file;
    some with a comment of the file's), the new index of each and the ones whose value also
    changes."""
    count = draw(st.integers(2, 4))
    documents = [_document(draw, n) for n in range(count)]
    separators = [draw(st.sampled_from(["", "---\n"]))]
    separators += [draw(st.sampled_from(["---\n", f"--- # separator {n}\n"])) for n in range(1, count)]
    order = draw(st.permutations(range(count)))
    changed = draw(st.sets(st.integers(0, count - 1)))
    return documents, separators, list(order), changed


def _permuting(order: list[int], changed: set[int]) -> str:
    """The function: cm-N gets index order[N]; each changed one a new value."""
    return f"""
order, changed = {json.dumps(order)}, {json.dumps(sorted(changed))}
for r in items:
    n = int(r['metadata']['name'][3:])
    r['metadata']['annotations'].update(dict.fromkeys({INDEXES!r}, str(order[n])))
    if n in changed:
        r['data']['value'] = 'new-' + str(n)
"""


def _split(content: str) -> tuple[list[str], list[str]]:
    """(separator lines, documents) of a file whose separators are `---` lines: the first
    separator is "" when the file opens with a document."""
    separators, documents, current = [""], [""], []
    for line in content.splitlines(keepends=True):
        if line.startswith("---"):
            if current or len(documents) > 1 or separators[0]:
                documents[-1] = "".join(current)
                separators.append(line)
                documents.append("")
            else:
                separators[0] = line
            current = []
        else:
            current.append(line)
    documents[-1] = "".join(current)
    return separators, documents


def _own_comments(document: str) -> list[str]:
    return sorted(comments.comments(document))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=swaps(), style=st.sampled_from(STYLES))
def test_any_permutation_moves_each_document_whole(tmp_path_factory: pytest.TempPathFactory, case: tuple[list[str], list[str], list[int], set[int]], style: str) -> None:
    """The file means the permuted values in the new order; each document holds its own comments
    and no other's; one whose value did not change keeps every byte; the separators, the file's
    own lines, stay where they stood; kpt agrees on the values."""
    documents, separators, order, changed = case
    original = "".join(separator + document for separator, document in zip(separators, documents))
    function = script(style, _permuting(order, changed))
    root = tmp_path_factory.mktemp("swap")
    out = run_exec(root, {"cm.yaml": original}, function)
    assert out.error is None, out.error
    written = out.files["cm.yaml"].decode()
    values = _documents(original)
    for n in changed:
        values[n]["data"]["value"] = f"new-{n}"  # type: ignore[index]
    expected = [values[n] for n in sorted(range(len(order)), key=order.__getitem__)]
    assert _documents(written) == expected, written
    now_separators, now = _split(written)
    assert now_separators == separators, written
    for n, document in enumerate(documents):
        assert _own_comments(now[order[n]]) == _own_comments(document), (n, written)
        if n not in changed:
            assert now[order[n]] == document, (n, written)
    if KPT is not None:
        assert _documents(_kpt(root, {"cm.yaml": original}, function)["cm.yaml"]) == expected


def test_a_swap_changes_only_the_resource_whose_value_changed() -> None:
    """The run's count and lineage pair each returned resource with the one sent by identity when
    another now stands at its place; one renamed in place still pairs with the one read there."""
    _, sent = read_file("cm.yaml", (ORIGINAL + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old\n").encode())
    cm, cm2, old = sent
    returned = [
        cm2.annotated([(key, "0") for key in INDEXES]),
        cm.replaced({**cm.annotated([(key, "1") for key in INDEXES]).data, "data": {"a": "z"}}),
        old.replaced({**old.data, "metadata": {**old.data["metadata"], "name": "new"}}),
    ]
    changes = compare(sent, returned)
    pairs = sorted(changes.pairs, key=lambda pair: sent.index(pair[0]))
    assert pairs == [(cm, returned[1], True), (cm2, returned[0], False), (old, returned[2], True)]
    assert changes.changed == 2 and not changes.added and not changes.removed
