"""Every pass over user text is linear in its size. Here: no regular expression in fnrun's code
that a ReDoS checker (regexploit) finds able to backtrack, the comment scanner means what the
quote-scrubbing definition means, and the inputs that made passes slow give the same bytes out.
How the time grows is bench/bench_scaling.py's to measure, never a test's."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import shutil
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import functions
import orchestrator
from orchestrator import api
from orchestrator.read.package import read_package
from orchestrator.run import resourcelist
from orchestrator.write import writeback
from orchestrator.yamlio import comments, text, yaml11
from testing.io_helpers import REPO, fnrun
from testing.sizing import examples

sys.path.insert(0, str(REPO / "bench"))
from bench_scaling import SHAPES

# Patterns the checker cannot read, each with why it cannot backtrack. regexploit (2021) parses
# with sre_parse and knows no possessive quantifier (Python 3.11); the comment scanner is built
# of them on purpose.
POSSESSIVE = "possessive quantifiers only: the engine never gives back what a repeat took, so a match is one pass"
EXEMPT: dict[str, str] = {
    comments._SINGLE: POSSESSIVE,
    comments._DOUBLE: POSSESSIVE,
    **{pattern.pattern: POSSESSIVE for pattern in comments._SKIP.values()},
    # The YAML 1.1 word finder: each search led by a character class, its repeats possessive, the
    # word an alternation of fixed strings (yamlio/yaml11.py).
    **{piece: POSSESSIVE for piece in (r"[:-][ \t]++", r"[\[{,][ \t]*+", r"\n[ \t]*+", r"[ \t]*+:", r"[ \t]*+")},
    **{pattern.pattern: POSSESSIVE for pattern in (*yaml11._CANDIDATES, yaml11._FIRST_KEY)},
}


def _source_patterns() -> list[tuple[str, int, str, int]]:
    """(file, line, pattern, flags) for every regular expression written as a literal in the package."""
    from regexploit.languages.python_node_visitor import PythonNodeVisitor

    found = []
    for root in (Path(orchestrator.__file__).parent, Path(functions.__file__).parent):
        for path in sorted(root.rglob("*.py")):
            visitor = PythonNodeVisitor()
            visitor.visit(ast.parse(path.read_bytes()))
            found += [(str(path.relative_to(REPO)), r.lineno, r.pattern, r.flags) for r in visitor.patterns]
    return found


def _compiled_patterns() -> list[tuple[str, int, str, int]]:
    """Patterns the modules compile at import, also those built from pieces (f-strings) that no
    literal shows whole."""
    found = []
    for package in (orchestrator, functions):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                patterns = value.values() if isinstance(value, dict) else [value]
                found += [(info.name, 0, p.pattern, p.flags) for p in patterns if isinstance(p, re.Pattern) and isinstance(p.pattern, str)]
    return found


def test_no_regular_expression_can_backtrack() -> None:
    from regexploit.ast.sre import SreOpParser
    from regexploit.redos import find

    findings, unread = [], []
    patterns = _source_patterns() + _compiled_patterns()
    assert len(patterns) > 30  # the scan saw the package
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for where, line, pattern, flags in patterns:
            try:
                parsed = SreOpParser().parse_sre(pattern, flags & ~re.UNICODE)
            except re.error:
                continue  # a string that only looks like a pattern
            except Exception:  # noqa: BLE001 - regexploit cannot read it (see EXEMPT)
                if pattern not in EXEMPT:
                    unread.append(f"{where}:{line}: {pattern!r}")
                continue
            findings += [f"{where}:{line}: {pattern!r} (starriness {r.starriness}, e.g. {r.example()})" for r in find(parsed)]
    assert not findings, "patterns that can backtrack:\n" + "\n".join(findings)
    assert not unread, "patterns the checker cannot read (make them readable or add them to EXEMPT, saying why):\n" + "\n".join(unread)


def _scrubbed_comment(line: str) -> int | None:
    """The definition the scanner follows: blank out complete quoted scalars, then the first `#`
    after a blank (quadratic: fine on the short lines here)."""
    scrubbed = re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", lambda m: "_" * len(m.group()), line)
    match = re.search(r"(?:^|[ \t])#", scrubbed)
    return match.end() if match else None


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="ab '\"\\#\t", max_size=24))
def test_comment_scanner_means_the_quote_scrubbing_definition(line: str) -> None:
    if line.lstrip().startswith("#"):
        return  # a whole-line comment is found before the scanner is asked
    assert comments.comment_start(line) == _scrubbed_comment(line)


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="a #'\"\\\t:\n\r\x85\u2028\v", max_size=40))
def test_comments_are_each_line_s_comment(document: str) -> None:
    """`comments` visits only lines with a `#`, found by `str.find`: the same as asking every line
    str.splitlines gives (every kind of line break)."""
    expected = []
    for line in document.splitlines():
        if line.lstrip().startswith("#"):
            expected.append(line.lstrip()[1:].strip())
        elif (start := comments.comment_start(line)) is not None:
            expected.append(line[start:].strip())
    assert comments.comments(document) == expected


#: The decoder's line patterns (orchestrator/run/fastlist.py).
_LINE_PATTERNS = (r"[^-# \n]|-[^ ]| [^ ]", "- ", r"- [ #\n&!{\[*|>'\"?:-]", "  ", "  |- ")


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="- #a\n\\", max_size=40), st.integers(0, 40), st.integers(0, 40), st.sampled_from(_LINE_PATTERNS))
def test_line_start_finds_what_a_caret_under_re_m_finds(document: str, pos: int, endpos: int, pattern: str) -> None:
    """text.LineStart finds `^PATTERN` through the line breaks (where re tries `^` at every
    position): the same first match in any range, the same lines, the same substitution."""
    caret, lines = re.compile(f"^(?:{pattern})", re.M), text.LineStart(pattern)
    pos, endpos = min(pos, len(document)), min(max(pos, endpos), len(document))
    first = caret.search(document, pos, endpos)
    assert lines.search(document, pos, endpos) == (first.start() if first else None)
    if "\\n" not in pattern:  # a match that holds the next line's break hides that line from finditer
        assert list(lines.finditer(document, pos, endpos)) == [m.start() for m in caret.finditer(document, pos, endpos)]
        assert lines.sub("", document) == caret.sub("", document)
        assert lines.sub("\\x", document) == caret.sub(lambda _: "\\x", document)


def test_comments_on_lines_that_never_close_their_quotes() -> None:
    line = "k: x" + '\\"' * 5000 + " # the end 'q' d"
    assert comments.comments(line + "\n" + line) == ["the end 'q' d"] * 2
    assert comments.comments('k: "a # b" # c\nj: \'x # y\' z # w\n# whole\n') == ["c", "w", "whole"]


LABELS = "  labels:\n    app: bench\n"
ITEM_LABELS = "\n    labels:\n      app: bench\n"  # the same, in a ResourceList item


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_crafted_inputs_round_trip_byte_for_byte(shape: str, tmp_path: Path) -> None:
    """Source then sink gives the file back as it was; a label added as text (what a function
    that keeps the layout sends) writes exactly that line more."""
    package = tmp_path / "pkg"
    package.mkdir()
    content = SHAPES[shape](40_000)
    (package / "shape.yaml").write_text(content)
    listing = api.source(package)
    copy = tmp_path / "copy"
    shutil.copytree(package, copy)
    plan = api.sink(copy, listing)
    assert plan.changes == [] and (copy / "shape.yaml").read_text() == content

    labelled = listing.replace(ITEM_LABELS, ITEM_LABELS + "      team: platform\n")
    assert labelled.count("team: platform") == content.count("app: bench")
    writeback.write(package, resourcelist.decode(labelled, "fn").items, read_package(package))
    assert (package / "shape.yaml").read_text() == content.replace(LABELS, LABELS + "    team: platform\n")


@pytest.mark.engine
def test_a_4mb_line_of_quotes_backslashes_and_a_comment_through_the_cli(tmp_path: Path) -> None:
    """The line that made the comment scan quadratic (hours at this size) goes through source,
    sink and a run; the bench times it, this checks the bytes."""
    package = tmp_path / "pkg"
    package.mkdir()
    value = "x" + ("\\\"'#\\\\\"" * (4 << 20))[: 4 << 20]
    content = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  big: {value} # a comment 'q' \"d\"\n"
    (package / "big.yaml").write_bytes(content.encode())

    source = fnrun("source", str(package))
    assert source.returncode == 0, source.stderr.decode()[-2000:]
    sunk = tmp_path / "sunk"
    sink = fnrun("sink", str(sunk), stdin=source.stdout)
    assert sink.returncode == 0, sink.stderr.decode()[-2000:]
    assert (sunk / "big.yaml").read_bytes() == content.encode()

    run = fnrun("run", str(package), "--image", "fnrun/set-labels:v1", "--image-pull-policy", "never", "--", "team=platform")
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    labelled = content.replace("  name: big\n", "  name: big\n  labels:\n    team: platform\n")
    assert (package / "big.yaml").read_bytes() == labelled.encode()


def test_a_template_with_angle_brackets_is_edited_as_text_not_round_tripped() -> None:
    """`<<` in text (prometheus-adapter's `<<.Series>>` templates) is no merge key: the document is
    edited in place, not left to the round trip (which, in a builtin step, also re-ran the function)."""
    from orchestrator.yamlio import fast, textedit

    original = "kind: ConfigMap\nmetadata:\n  name: adapter\ndata:\n  config.yaml: |-\n    query: sum(<<.Series>>{<<.LabelMatchers>>}) # keep\n"
    value = fast.load(original, "t")
    value["metadata"]["labels"] = {"team": "platform"}
    assert textedit.edit(original, value) == original.replace("  name: adapter\n", "  name: adapter\n  labels:\n    team: platform\n")
    merged = "a: &a {x: 1}\nb:\n  <<: *a\n  y: 2\n"
    changed = fast.load(merged, "t")
    changed["b"]["y"] = 3
    assert textedit.edit(merged, changed) is None  # a real merge key still goes to the round trip
