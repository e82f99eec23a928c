"""Corners of YAML text that once broke the write-back, each as its smallest package and an exec
function in the YAML library that found it: the file fnrun writes must parse and mean what the
function returned, and what the function did not change keeps its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from testing.exec_functions import run_exec, script

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\ndata:\n  k: v\n"


def _documents(content: bytes) -> list[object]:
    return [d for d in yaml.safe_load_all(content.decode("utf-8-sig")) if d is not None]


@pytest.mark.parametrize("style", ["ruamel", "pyyaml"])
@pytest.mark.parametrize("head", ["", "# header\n"])
def test_a_byte_order_mark_is_the_files_not_the_first_items(tmp_path: Path, style: str, head: str) -> None:
    original = b"\xef\xbb\xbf" + (head + CM.format("a")).encode()
    out = run_exec(tmp_path, {"a.yaml": original}, script(style))
    assert out.error is None
    assert out.files["a.yaml"] == original
    changed = run_exec(tmp_path / "x", {"a.yaml": original}, script(style, "items[0]['data']['k'] = 'w'"))
    assert changed.error is None
    assert changed.files["a.yaml"] == original.replace(b"k: v", b"k: w")


@pytest.mark.parametrize("style", ["ruamel", "ruamel-safe", "pyyaml"])
def test_characters_outside_the_bmp_in_a_renamed_anchors_note(tmp_path: Path, style: str) -> None:
    """Two documents that both define `&x`: the second is renamed apart on the way to the function,
    with its own text in a note that holds a character outside the BMP."""
    original = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: &x v\n  j: *x\n---\n"
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: &x "rocket \U0001f680"\n  j: *x\n'
    )
    out = run_exec(tmp_path, {"a.yaml": original}, script(style))
    assert out.error is None
    assert out.files["a.yaml"] == original.encode()


@pytest.mark.parametrize("ends", ["...\n---\n", "...\n# between\n---\n"])
def test_deleting_the_first_document_of_a_file_of_ended_documents(tmp_path: Path, ends: str) -> None:
    original = CM.format("a") + ends + CM.format("b") + "...\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script("ruamel", "del items[0]"))
    assert out.error is None
    assert _documents(out.files["a.yaml"]) == [yaml.safe_load(CM.format("b"))]
    assert out.files["a.yaml"].decode().endswith(CM.format("b") + "...\n")


@pytest.mark.parametrize("style", ["ruamel", "ruamel-safe", "pyyaml"])
def test_emptying_a_list_with_a_comment_above_its_first_item(tmp_path: Path, style: str) -> None:
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # mine\nlist:\n  # c\n  - x\nnext: 1\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script(style, "items[0]['list'] = []"))
    assert out.error is None
    want = yaml.safe_load(original) | {"list": []}
    assert _documents(out.files["a.yaml"]) == [want]
    assert out.files["a.yaml"].startswith(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # mine\n")
    assert out.files["a.yaml"].endswith(b"next: 1\n")


@pytest.mark.parametrize("style", ["ruamel-safe", "pyyaml"])
def test_an_aliased_empty_block_scalar_with_a_comment(tmp_path: Path, style: str) -> None:
    """ruamel's emitter fails on this document once edited (its comment hangs on the alias): the
    edit is made without ruamel's comments, the document's own lines kept."""
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: &x |  # note\n  b: v\nlist:\n- *x\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script(style, "items[0]['data']['a'] = 'w'"))
    assert out.error is None
    want = yaml.safe_load(original)
    want["data"]["a"] = "w"
    assert _documents(out.files["a.yaml"]) == [want]
    assert b"  b: v\n" in out.files["a.yaml"]


_APPEND_COPY = """import copy
new = copy.deepcopy(items[0])
new['metadata']['name'] = 'b'
notes = new['metadata']['annotations']
for key in [k for k in notes if k.startswith('internal.')]:
    del notes[key]
notes['config.kubernetes.io/index'] = '1'
items.append(new)
"""


@pytest.mark.parametrize("style", ["ruamel", "pyyaml"])
def test_appending_after_a_file_that_ends_in_an_end_marker_and_a_comment(tmp_path: Path, style: str) -> None:
    original = CM.format("a") + "...\n# foot\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script(style, _APPEND_COPY))
    assert out.error is None
    written = out.files["a.yaml"].decode()
    assert written.startswith(CM.format("a"))
    assert written.endswith("...\n# foot\n")
    assert [d["metadata"]["name"] for d in _documents(out.files["a.yaml"])] == ["a", "b"]


def test_a_files_foot_comment_stays_out_of_a_new_resources_file(tmp_path: Path) -> None:
    """ruamel with indented dashes writes the first item's foot comment at the next item's dash."""
    original = CM.format("a") + "# foot of a.yaml\n"
    body = "from ruamel.yaml.comments import CommentedMap as M\nitems.append(M(apiVersion='v1', kind='ConfigMap', metadata=M(name='new'), data=M(k='v')))"
    out = run_exec(tmp_path, {"a.yaml": original}, script("ruamel", body, "y.indent(mapping=2, sequence=4, offset=2)"))
    assert out.error is None
    assert out.files == {"a.yaml": original.encode(), "new_configmap.yaml": CM.format("new").encode()}


@pytest.mark.parametrize("style", ["pyyaml", "ruamel-safe"])
def test_an_identity_function_after_a_long_commented_separator_writes_nothing(tmp_path: Path, style: str) -> None:
    """The separator's comment travels in a layout note, which the library folds over two lines:
    the `#` in the note is no comment of the function's, so nothing changed."""
    original = "--- # " + "long separator comment " * 4 + "\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  z: &x true  # inline\n  a: 2\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script(style))
    assert out.error is None
    assert out.files["a.yaml"] == original.encode()


def test_a_new_resource_numbered_like_an_existing_one_takes_none_of_its_text(tmp_path: Path) -> None:
    original = "# head of a\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n# inside a\ndata:\n  k: v\n"
    body = "items.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'b', 'annotations': {'config.kubernetes.io/path': 'a.yaml'}}})"
    out = run_exec(tmp_path, {"a.yaml": original}, script("pyyaml", body))
    assert out.error is None
    written = out.files["a.yaml"].decode()
    assert written.startswith(original)
    assert written.count("# inside a") == 1
    assert [d["metadata"]["name"] for d in _documents(out.files["a.yaml"])] == ["a", "b"]


YAML11 = """apiVersion: v1
kind: Secret
metadata:
  name: s  # keep
spec:
  defaultMode: 0400
  period: 1:20
  enabled: yes
  quoted: '0400'
data:
  404: |
    not found
  on: x
"""


def test_values_read_the_yaml_1_1_way_and_keys_made_json_strings_keep_their_text(tmp_path: Path) -> None:
    """A function on a YAML 1.1 library that hands keys through JSON (as Kubernetes, and kpt's
    TypeScript SDK do) returns 0400 as 256, yes as true, 1:20 as 80 and the key 404 as "404": the
    same values to the cluster, so the file keeps its bytes; a real change beside them is written."""
    identity = script("pyyaml", "import json\nrl['items'] = json.loads(json.dumps(items))")
    out = run_exec(tmp_path, {"s.yaml": YAML11}, identity)
    assert out.error is None
    assert out.files["s.yaml"] == YAML11.encode()
    change = script("pyyaml", "import json\nrl['items'] = json.loads(json.dumps(items))\nrl['items'][0]['spec']['defaultMode'] = 257")
    out = run_exec(tmp_path / "change", {"s.yaml": YAML11}, change)
    assert out.error is None
    assert out.files["s.yaml"] == YAML11.replace("defaultMode: 0400", "defaultMode: 257").encode()


@pytest.mark.parametrize("style", ["ruamel", "pyyaml"])
@pytest.mark.parametrize("after", ["", "...\n", "---\n" + CM.format("b"), "...\n# foot\n"])
def test_a_keep_chomped_block_scalar_at_a_documents_end(tmp_path: Path, style: str, after: str) -> None:
    """Its trailing blank lines are its value: the item sent must end there, with no marker in it."""
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: |+\n    text\n\n" + after
    out = run_exec(tmp_path, {"a.yaml": original}, script(style))
    assert out.error is None
    assert out.files["a.yaml"] == original.encode()
    changed = run_exec(tmp_path / "c", {"a.yaml": original}, script(style, "items[0]['metadata']['labels'] = {'l': 'v'}"))
    assert changed.error is None
    written = changed.files["a.yaml"].decode()
    assert written.endswith("data:\n  x: |+\n    text\n\n" + after)
    assert _documents(changed.files["a.yaml"])[0]["metadata"] == {"name": "a", "labels": {"l": "v"}}


@pytest.mark.parametrize("style", ["ruamel", "ruamel-safe", "pyyaml"])
def test_a_keep_chomped_block_scalar_ends_a_document_stamped_by_the_round_trip(tmp_path: Path, style: str) -> None:
    """Flow-style metadata is stamped by the round trip, whose dump ends a trailing `|+` scalar with
    `...`: that marker must not reach the item (it would end the whole ResourceList)."""
    original = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata: {name: a}\r\ndata:\r\n  x: |+\r\n    text\r\n\r\n\r\n...\r\n"
    out = run_exec(tmp_path, {"a.yaml": original}, script(style))
    assert out.error is None
    assert out.files["a.yaml"] == original.encode()


@pytest.mark.parametrize("chomp", ["|", ">"])
def test_a_file_without_a_final_newline_whose_new_last_line_ends_a_block_scalar(tmp_path: Path, chomp: str) -> None:
    """Found by kpt's TypeScript SDK over tektoncd/pipeline: it leaves out a PipelineRun that has
    only a generateName, the last document of a file without a final newline; the document now
    last ends in a block scalar whose line break is its value's, so the file keeps its newline."""
    first = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  script: {chomp}\n    echo hi\n"
    original = first + "---\n" + CM.format("b").rstrip("\n")
    out = run_exec(tmp_path, {"a.yaml": original}, script("pyyaml", "del items[1]"))
    assert out.error is None, out.error
    assert out.files["a.yaml"] == first.encode()
    plain = first.replace(f"script: {chomp}\n    echo hi\n", "script: echo\n")
    kept = run_exec(tmp_path / "x", {"a.yaml": plain + "---\n" + CM.format("b").rstrip("\n")}, script("pyyaml", "del items[1]"))
    assert kept.error is None, kept.error
    assert kept.files["a.yaml"] == plain.rstrip("\n").encode()
