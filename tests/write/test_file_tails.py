"""A file's own text after its last document (blank lines, a closing comment, `...` and what
follows it) and a last line without a newline are kept by every way fnrun writes a package:
`source | sink`, an in-place `run`, `render`, and a run whose function appends a resource.
Files are generated: head and foot comments, blank-line counts, end markers, and a last key
holding a block scalar with every chomping indicator, ending the file with or without a newline."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator import api
from orchestrator.requests import Functions, Output, RenderRequest, RunRequest, SandboxSettings, Speed
from testing.exec_functions import run_exec, script
from testing.io_helpers import fnrun_here, pipe
from testing.sizing import examples

COMMENTS = ("# Copyright 2026 Google LLC", "# [START gke_tag]", "# [END gke_tag]", "#", "# note: keep", "  # indented", "# é 🚀")
CHOMPING = ("|", "|-", "|+", ">", ">-", ">+", "|2", "|2-", ">+2")
NOT_KRM = "not: a resource\n"  # a document that is not a resource: `sink` keeps it in the file's layout
_SETTINGS = settings(max_examples=examples(40), deadline=None, database=None, suppress_health_check=list(HealthCheck))


@st.composite
def _comment_block(draw: st.DrawFn) -> str:
    """Comment lines and blank lines, in any order (maybe none)."""
    lines = draw(st.lists(st.one_of(st.sampled_from(COMMENTS), st.just("")), max_size=4))
    return "".join(line + "\n" for line in lines)


@st.composite
def _document(draw: st.DrawFn, name: str) -> str:
    """A ConfigMap whose last key may hold a block scalar (any chomping, trailing blank lines)."""
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"
    if draw(st.booleans()):
        indicator = draw(st.sampled_from(CHOMPING))
        lines = draw(st.lists(st.sampled_from(["echo hi", ")", "  indented", "", "x: y # not a comment"]), min_size=1, max_size=4))
        if not lines[0].strip():
            lines[0] = "first"
        if draw(st.booleans()):
            text += f"  script: {indicator}\n" + "".join(f"    {line}\n" if line else "\n" for line in lines)
        else:  # a block scalar as the last item of a sequence
            text += f"list:\n- a\n- {indicator}\n" + "".join(f"  {line}\n" if line else "\n" for line in lines)
    return text


@st.composite
def files(draw: st.DrawFn) -> str:
    """One file: a head (licence, `# [START]`, maybe `---`), one to three documents with comments
    and blank lines between them, and a tail: foot comments, blank lines, maybe `...` and more."""
    text = draw(_comment_block())
    if draw(st.booleans()):
        text += draw(st.sampled_from(["---\n", "--- # first\n"]))
    count = draw(st.integers(1, 3))
    for number in range(count):
        if number:
            text += draw(st.sampled_from(["---\n", "\n---\n", "...\n---\n", "--- # next\n"])) + draw(_comment_block())
        text += draw(_document(f"cm{number}"))
        text += draw(_comment_block())
    if draw(st.booleans()):
        text += draw(st.sampled_from(["...\n", "... # end\n", "---\n", "---\n" + NOT_KRM, "...\n---\n# only a comment\n"]))
        text += draw(_comment_block())
    if draw(st.booleans()):
        text = text.rstrip("\n") if draw(st.booleans()) else text[:-1] if text.endswith("\n") else text
    return text


@st.composite
def packages(draw: st.DrawFn) -> dict[str, str]:
    """One to three generated files: a file's tail is followed by the next file's items in a list."""
    names = draw(st.lists(st.sampled_from(["a.yaml", "b.yaml", "sub/c.yaml", "z.yml"]), min_size=1, max_size=3, unique=True))
    return {name: draw(files()) for name in names}


def _readable(text: str) -> bool:
    """Whether fnrun reads the file as a package file (a generated one may not be YAML at all)."""
    try:
        return all(isinstance(d, (dict, type(None))) for d in yaml.safe_load_all(text + "\n"))
    except yaml.YAMLError:
        return False


def _package(root: Path, files: dict[str, str]) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    for name, text in files.items():
        (root / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / name).write_text(text)
    return root / "pkg"


def _contents(root: Path, files: dict[str, str]) -> dict[str, str]:
    return {name: (root / name).read_text() for name in files}


def _source_sink(root: Path, files: dict[str, str]) -> dict[str, str]:
    package = _package(root, files)
    api.sink(root / "out", api.source(package))
    return _contents(root / "out", files)


def _run_identity(root: Path, files: dict[str, str]) -> dict[str, str]:
    package = _package(root, files)
    request = RunRequest(
        directory=str(package), functions=Functions(exec_path="cat"), sandbox=SandboxSettings(enable_exec=True),
        output=Output(quiet=True), speed=Speed(cache=False),
    )
    api.run(request, stdout=io.StringIO())
    return _contents(package, files)


KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\npipeline:\n  mutators:\n  - exec: cat\n"


def _render_identity(root: Path, files: dict[str, str]) -> dict[str, str]:
    package = _package(root, files)
    (package / "Kptfile").write_text(KPTFILE)
    request = RenderRequest(
        directory=str(package), sandbox=SandboxSettings(enable_exec=True), output=Output(quiet=True),
        speed=Speed(cache=False), record_status=False,
    )
    api.render(request, stdout=io.StringIO())
    return _contents(package, files)


@pytest.mark.parametrize("way", [_source_sink, _run_identity, _render_identity], ids=["source-sink", "run", "render"])
def test_a_generated_file_comes_back_byte_for_byte(way, tmp_path_factory: pytest.TempPathFactory) -> None:
    work = tmp_path_factory.mktemp("tails")

    @_SETTINGS
    @given(packages())
    def case(files: dict[str, str]) -> None:
        if not all(map(_readable, files.values())):
            return
        if way is not _source_sink and any(NOT_KRM.strip() in text for text in files.values()):
            return  # run and render refuse a document that is not KRM, as kpt does
        assert way(work, files) == files

    case()


MINIMAL = "# head\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n# [END tag]\n\n"


@pytest.mark.parametrize(
    "text",
    [
        MINIMAL,
        "# Copyright\n\n# [START x]\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n# [END x]\n\n\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |\n    x\n    )",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: >+\n    x\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n...\n# foot\n\n",
        # `source` renames the second anchor (one list holds both), so the last item's text is not the file's
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &x a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        "  name: &x a2\ndata:\n  k: |\n    x",
    ],
    ids=["minimal", "licence", "clip-without-newline", "keep", "end-marker", "anchor-renamed-clip-without-newline"],
)
def test_the_reported_shapes(tmp_path: Path, text: str) -> None:
    files = {"a.yaml": text, "b.yaml": text.replace("name: a", "name: b")}  # a's tail, then b's items
    assert _source_sink(tmp_path / "sink", files) == files
    assert _run_identity(tmp_path / "run", files) == files
    assert _render_identity(tmp_path / "render", files) == files


_APPEND = """import copy
new = copy.deepcopy(items[-1])
new['metadata']['name'] = 'added'
notes = new['metadata']['annotations']
for key in [k for k in notes if k.startswith('internal.')]:
    del notes[key]
notes['config.kubernetes.io/index'] = str(len(items))
items.append(new)
"""


@_SETTINGS
@given(text=files())
def test_a_resource_appended_to_a_generated_file_keeps_every_byte_of_it(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    """The file as it was is still there, byte for byte, with the new document in one place of it;
    what followed the last document's `...` is still at the end."""
    if not _readable(text):
        return
    out = run_exec(tmp_path_factory.mktemp("append"), {"a.yaml": text}, script("pyyaml", _APPEND))
    if out.error is not None:
        assert "a.yaml" in str(out.error), out.error
        return
    written = out.files["a.yaml"].decode()
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(written + "\n") if d]
    assert names[-1] == "added" and names[:-1] == [d["metadata"]["name"] for d in yaml.safe_load_all(text + "\n") if d]
    end = len(text)
    while end > 0 and not written.startswith(text[:end]):
        end -= 1
    assert written.endswith(text[end:]), "the file's own bytes are not all kept"
    marker = ("\n" + text).rfind("\n...\n")
    if marker >= 0 and "---" not in text[marker:]:  # the file ends in `...` and what follows it
        assert written.endswith(text[marker:])


REAL = Path(__file__).parent / "real_tails"


def test_real_files_come_back_byte_for_byte_through_the_cli(tmp_path: Path) -> None:
    """Files of public repositories (real_tails/README.md) through a real `fnrun source | fnrun
    sink` pipe, and in place through `run` and `render` with an identity function."""
    package = shutil.copytree(REAL, tmp_path / "pkg", ignore=shutil.ignore_patterns("*.md"))
    want = {p.relative_to(package).as_posix(): p.read_bytes() for p in package.rglob("*.y*ml")}
    assert len(want) == 7
    sunk = pipe(package, tmp_path / "out")
    assert sunk.returncode == 0, sunk.stderr.decode()
    assert {p: (tmp_path / "out" / p).read_bytes() for p in want} == want
    ran = fnrun_here("run", str(package), "--allow-exec", "--exec", "cat")
    assert ran.returncode == 0, ran.stderr.decode()
    (package / "Kptfile").write_text(KPTFILE)
    rendered = fnrun_here("render", str(package), "--allow-exec", "--no-status")
    assert rendered.returncode == 0, rendered.stderr.decode()
    assert {p: (package / p).read_bytes() for p in want} == want
