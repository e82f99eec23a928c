"""`run --image/--exec` and `render` refuse YAML that is not KRM (and `run` files that are not YAML
at all, such as Helm templates), as kpt does, with one error that names every such file and gives
the `.krmignore` lines to paste: one edit gets past the refusal,
whatever the package holds (files at any depth, in subpackages, with wildcard characters or blanks
in their names), and kpt takes the same lines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.read import notices
from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, deployment, snapshot, write_package

KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
NOT_KRM = ("replicas: 2\n", "name: chart\nversion: 1.0.0\n", "- a\n- b\n", "global:\n  hub: docker.io\n", "metadata:\n  name: {{ .Values.name }}\n")
NAMES = ("values.yaml", "Chart.yaml", "cloudbuild.yaml", "a*b.yaml", "[x].yaml", "what?.yaml", "with space.yaml", "#hash.yaml", "!bang.yaml")
DIRS = ("", "chart/", "chart/templates/", "sub/", "sub/deep/", "other/")
IDENTITY = ("--exec", "cat", "--allow-exec")


def pasted(stderr: str) -> dict[str, list[str]]:
    """The blocks of a refusal: each `add to FILE:` line, and the lines under it up to the next."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in stderr.splitlines():
        if line.startswith("add to ") and line.endswith(":"):
            current = blocks.setdefault(line[len("add to ") : -1], [])
        elif current is not None and not line.startswith(("fnrun:", "  ")):
            current.append(line)
    return blocks


def _one_line(head: str) -> dict[str, list[str]]:
    """The block of a refusal of one file, which says it in its one line: `add the line L to F`."""
    line, _, where = head.rpartition("add the line ")[2].rpartition(" to ")
    return {where: [line]}


def paste(blocks: dict[str, list[str]]) -> None:
    for where, lines in blocks.items():
        path = Path(where)
        existing = path.read_text() if path.exists() else ""
        path.write_text(existing + "".join(line + "\n" for line in lines))


@st.composite
def packages(draw: st.DrawFn) -> tuple[dict[str, str], list[str]]:
    """A package with a subpackage, resources here and there, and 1 to 8 files that are not KRM
    (in walk order: sorted paths)."""
    files = {"Kptfile": KPTFILE.format(name="root"), "sub/Kptfile": KPTFILE.format(name="sub"), "web.yaml": deployment("web"), "sub/db.yaml": deployment("db")}
    odd = draw(st.lists(st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES)).map("".join), min_size=1, max_size=8, unique=True))
    for path in odd:
        files[path] = draw(st.sampled_from(NOT_KRM))
    if draw(st.booleans()):  # a file of a resource and a document that is not one
        files["mixed.yaml"] = deployment("mixed") + "---\n" + NOT_KRM[0]
        odd.append("mixed.yaml")
    return files, odd


@settings(max_examples=5, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(packages())
def test_one_refusal_names_every_file_and_one_paste_gets_past_it(tmp_path_factory: pytest.TempPathFactory, package: tuple[dict[str, str], list[str]]) -> None:
    files, odd = package
    root = write_package(tmp_path_factory.mktemp("pkg"), files)
    before = snapshot(root)
    refused = fnrun_here("run", str(root), *IDENTITY)
    assert_one_line_error(refused, ": not ", code=2)
    head = next(line for line in refused.stderr.splitlines() if line.startswith("fnrun: error:"))
    assert (f"and {len(odd) - 1} more file" in head and f"({len(odd)} in all)" in head) if len(odd) > 1 else "more file" not in head
    listed = [line[2:].split(": not ")[0].rsplit(":", 1)[0] for line in refused.stderr.splitlines() if line.startswith("  ")]
    assert sorted(listed) == sorted(odd) if len(odd) > 1 else listed == []
    assert head.startswith(f"fnrun: error: {root}/{listed[0] if listed else odd[0]}:")  # as typed: the package as given and (": not a KRM resource" in head or ": not YAML (" in head)
    assert snapshot(root) == before
    blocks = pasted(refused.stderr) if len(odd) > 1 else _one_line(head)
    named = [where[len(str(root)) + 1 :].rsplit(".krmignore", 1)[0] + line[1:].replace("\\", "") for where, lines in blocks.items() for line in lines]
    assert sorted(named) == sorted(odd)
    assert all(where in (f"{root}/.krmignore", f"{root}/sub/.krmignore") for where in blocks)
    paste(blocks)
    passed = fnrun_here("run", str(root), *IDENTITY)
    assert passed.code == 0, passed
    assert {k: v for k, v in snapshot(root).items() if not k.endswith(".krmignore")} == before  # cat changed nothing, and no KRM file was left out
    assert not [line for line in passed.stderr.splitlines() if "not a KRM resource" in line]


def test_a_long_list_is_cut_but_the_lines_to_paste_are_all_there(tmp_path: Path) -> None:
    many = {f"values/v{n:02d}.yaml": NOT_KRM[0] for n in range(notices.LISTED + 15)}
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web"), **many})
    refused = fnrun_here("run", str(root), *IDENTITY)
    assert_one_line_error(refused, "values/v00.yaml:1: not a KRM resource, and 24 more files (25 in all)", code=2)
    listed = [line for line in refused.stderr.splitlines() if line.startswith("  values/")]
    assert len(listed) == notices.LISTED
    assert "  ... and 15 more (every one is in the lines below)" in refused.stderr.splitlines()
    assert pasted(refused.stderr) == {f"{root}/.krmignore": [f"/{name}" for name in sorted(many)]}
    paste(pasted(refused.stderr))
    assert fnrun_here("run", str(root), *IDENTITY).code == 0


def test_a_resource_a_function_would_get_wrong_is_in_the_same_refusal(tmp_path: Path) -> None:
    """A duplicate key in a resource the function receives is refused too: with the YAML that is
    not KRM, in one error, so one edit gets past both."""
    dup = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: 1\n  a: 2\n"
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web"), "dup.yaml": dup, "values.yaml": NOT_KRM[0]})
    refused = fnrun_here("run", str(root), *IDENTITY)
    assert_one_line_error(refused, "dup.yaml:7: duplicate key 'a'", "and 1 more file (2 in all)", code=2)
    assert "  dup.yaml:7:" in refused.stderr and "  values.yaml:1: not a KRM resource" in refused.stderr
    assert pasted(refused.stderr) == {f"{root}/.krmignore": ["/dup.yaml", "/values.yaml"]}
    paste(pasted(refused.stderr))
    assert fnrun_here("run", str(root), *IDENTITY).code == 0


def test_render_refuses_every_file_at_once_too(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"Kptfile": KPTFILE.format(name="root"), "a/values.yaml": NOT_KRM[0], "b/Chart.yaml": NOT_KRM[1]})
    refused = fnrun_here("render", str(root), "--image-pull-policy", "never")
    assert_one_line_error(refused, "a/values.yaml:1: not a KRM resource, and 1 more file (2 in all)", "kpt's render refuses them too", code=2)
    paste(pasted(refused.stderr))
    assert fnrun_here("render", str(root), "--image-pull-policy", "never", "--no-status").code == 0


@pytest.mark.skipif(shutil.which("kpt") is None, reason="kpt is not installed")
def test_kpt_takes_the_same_lines(tmp_path: Path) -> None:
    """The lines fnrun prints get kpt fn eval past its refusal too: anchored, escaped, and in the
    subpackage's own `.krmignore` where the root's patterns stop."""
    files = {"Kptfile": KPTFILE.format(name="root"), "sub/Kptfile": KPTFILE.format(name="sub"), "web.yaml": deployment("web")}
    files.update({f"{d}{n}": NOT_KRM[0] for d, n in zip(DIRS, NAMES[3:])})
    ours, theirs = write_package(tmp_path / "ours", files), write_package(tmp_path / "theirs", files)
    kpt = subprocess.run(["kpt", "fn", "eval", str(theirs), "--exec", "cat"], capture_output=True, text=True)
    assert kpt.returncode != 0 and "must contain only KRM resources" in kpt.stderr
    refused = fnrun_here("run", str(ours), *IDENTITY)
    assert refused.code == 2
    paste({where.replace(str(ours), str(theirs), 1): lines for where, lines in pasted(refused.stderr).items()})
    kpt = subprocess.run(["kpt", "fn", "eval", str(theirs), "--exec", "cat"], capture_output=True, text=True)
    assert kpt.returncode == 0, kpt.stderr


@pytest.mark.parametrize(("path", "other"), [
    ("values.yaml", "x/values.yaml"), ("a*b.yaml", "aXb.yaml"), ("[x].yaml", "x.yaml"), ("what?.yaml", "whatX.yaml"),
    ("#hash.yaml", "hash.yaml"), ("!bang.yaml", "bang.yaml"), ("trailing .yaml ", "trailing .yaml"), ("d/e f.yaml", "x/d/e f.yaml"),
])
def test_a_pattern_matches_its_file_and_no_other(path: str, other: str) -> None:
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([notices.pattern(path)])
    assert spec.match_file(path) and not spec.match_file(other)


def test_a_kptfile_that_does_not_parse_is_to_be_fixed_not_left_out(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: [x\n", "t.yaml": NOT_KRM[4], "web.yaml": deployment("web")})
    refused = fnrun_here("run", str(root), *IDENTITY)
    assert_one_line_error(refused, "Kptfile:4:", code=2)
    assert ".krmignore" not in refused.stderr
