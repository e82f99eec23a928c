"""`fnrun source` / `fnrun sink` through the real command line: byte-exact round trips, the input
forms sink accepts, and comments that travel through a ResourceList both ways."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator import api
from orchestrator.errors import InputError
from orchestrator.read.package import read_package
from orchestrator.run import fastlist, pipes, resourcelist
from orchestrator.write import writeback
from orchestrator.yamlio import fast
from testing.io_helpers import REPO, assert_one_line_error, fnrun_here, golden_cases, pipe, snapshot, write_files

EXTRA_LAYOUTS = {
    "odd/flow-metadata.yaml": '{"apiVersion": "v1", "kind": "A", "metadata": {"name": "j", "annotations": {"a": "b"}}}\n',
    "odd/flow-annotations.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: fa\n  annotations: {a: b}\n",
    "odd/no-metadata.yaml": "apiVersion: v1\nkind: A\nspec: 1\n",
    "odd/blank-lines.yaml": "\n\napiVersion: v1\nkind: A\nmetadata:\n  name: b1\n\n---\n\n\napiVersion: v1\nkind: A\nmetadata:\n  name: b2\n",
    "odd/crlf-no-newline.yml": "apiVersion: v1\r\nkind: A\r\nmetadata:\r\n  name: w\r\n---\r\napiVersion: v1\r\nkind: A\r\nmetadata:\r\n  name: w2",
    "odd/tabs and spaces.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: t\ndata:\n  script: \"a\\tb\"\n",
}


@pytest.fixture
def every_case(tmp_path: Path) -> Path:
    """A package holding every golden input (each in its own directory), odd layouts, a hidden
    directory, non-YAML files and non-resource YAML."""
    root = tmp_path / "every-case"
    for case in golden_cases():
        write_files(root, {f"{case.name}/{case.file_name}": case.input})
    write_files(root, {**EXTRA_LAYOUTS, ".git/HEAD.yaml": "apiVersion: v1\nkind: Hidden\n", "docs/README.md": "# docs\n"})
    return root


def resource_files(root: Path) -> dict[str, bytes]:
    package = read_package(root)
    return {path: source.raw for path, source in package.files.items() if package.in_file(path)}


def test_source_sink_reproduces_every_resource_file(every_case: Path, tmp_path: Path) -> None:
    result = pipe(every_case, tmp_path / "copy")
    assert result.returncode == 0, result.stderr
    expected = resource_files(every_case)
    written = {p: e.content for p, e in snapshot(tmp_path / "copy").items() if e.content is not None}
    assert written == expected
    assert "helm-values-untouched/values.yaml" not in written and len(expected) >= 25


def test_source_sink_reproduces_a_generated_package(tmp_path: Path) -> None:
    _generated(tmp_path / "gen", 40)
    result = pipe(tmp_path / "gen", tmp_path / "copy")
    assert result.returncode == 0, result.stderr
    original = {p: e.content for p, e in snapshot(tmp_path / "gen").items()}
    assert {p: e.content for p, e in snapshot(tmp_path / "copy").items()} == original
    assert result.stderr.decode() == "fnrun sink: 40 created, 0 updated, 0 deleted, 0 unchanged\n"


def test_sink_back_into_the_source_changes_nothing(every_case: Path) -> None:
    before = snapshot(every_case)
    time.sleep(0.01)
    result = pipe(every_case, every_case)
    assert result.returncode == 0, result.stderr
    assert snapshot(every_case) == before
    assert " 0 created, 0 updated, 0 deleted, " in result.stderr.decode()


def test_source_output_is_a_v1_resource_list(every_case: Path) -> None:
    result = fnrun_here("source", str(every_case))
    assert result.returncode == 0 and result.stderr.startswith(b"fnrun: warning: ") and result.stderr.count(b"\n") == 1  # the non-KRM summary
    assert result.stdout.startswith(b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
    listing = fast.load(result.stdout.decode(), "source")
    assert [item["kind"] for item in listing["items"]] == [r.data["kind"] for r in read_package(every_case).resources]
    assert b"Hidden" not in result.stdout and "helm-values-untouched/values.yaml" not in result.stdout.decode()


def test_sink_creates_nested_directory_and_default_paths(tmp_path: Path) -> None:
    stream = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Settings\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
    result = fnrun_here("sink", str(tmp_path / "a" / "b"), stdin=stream)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["settings_configmap.yaml", "web_service.yaml"]
    assert (tmp_path / "a" / "b" / "web_service.yaml").read_bytes() == b"apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"


@pytest.mark.parametrize(
    "header",
    [
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
        "apiVersion: config.kubernetes.io/v1beta1\nkind: ResourceList\n",
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: ResourceList\n",
        "apiVersion: v1\nkind: List\n",
    ],
)
def test_sink_accepts_resource_lists_of_every_version_and_lists(tmp_path: Path, header: str) -> None:
    listing = header + (
        "items:\n"
        "  # indented items, as other tools write them\n"
        "  - apiVersion: v1\n"
        "    kind: ConfigMap\n"
        "    metadata:\n"
        "      name: one  # kept\n"
        "      annotations:\n"
        "        config.kubernetes.io/index: '0'\n"
        "        config.kubernetes.io/path: 'x/f.yaml'\n"
        "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: two, annotations: {config.kubernetes.io/path: x/f.yaml, config.kubernetes.io/index: '1'}}}\n"
    )
    result = fnrun_here("sink", str(tmp_path), stdin=listing.encode())
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "x" / "f.yaml").read_text() == (
        "# indented items, as other tools write them\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one  # kept\n"
        "---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: two}}\n"
    )


def test_sink_accepts_a_plain_stream_with_origin_annotations(tmp_path: Path) -> None:
    stream = (
        "apiVersion: v1\nkind: A\nmetadata:\n  name: b\n  annotations:\n    config.kubernetes.io/path: f.yaml\n    config.kubernetes.io/index: '1'\n"
        "---\n# first\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: f.yaml\n"
    )
    assert fnrun_here("sink", str(tmp_path), stdin=stream.encode()).returncode == 0
    assert (tmp_path / "f.yaml").read_text() == "# first\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: b\n"


def test_sink_removes_files_whose_resources_left_the_list(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"a.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n", "b.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: b\n", "values.yaml": "x: 1\n"})
    listing = fnrun_here("source", str(root)).stdout
    only_a = listing.split(b"- apiVersion: v1\n  kind: A\n  metadata:\n    annotations:\n      config.kubernetes.io/path: 'b.yaml'")[0]
    result = fnrun_here("sink", str(root), stdin=only_a)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in root.iterdir()) == ["a.yaml", "values.yaml"]


def test_comments_a_function_adds_land_in_the_file(tmp_path: Path) -> None:
    """A function's edit of the ResourceList text (a new comment, a changed value, a new key with
    its own comment) lands in the file; every other line keeps its bytes."""
    original = (
        "# Deployment of the shop\n"
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata:\n"
        "    name: shop   # odd spacing stays\n"
        "spec:\n"
        "    replicas: 1\n"
        "    template:\n"
        "        spec:\n"
        "            containers:\n"
        "            -   name: app\n"
        "                image: 'shop:1.0'\n"
    )
    root = write_files(tmp_path / "pkg", {"shop.yaml": original})
    listing = fnrun_here("source", str(root)).stdout.decode()
    assert "# Deployment of the shop\n- apiVersion: apps/v1\n" in listing and "name: shop   # odd spacing stays" in listing
    edited = listing.replace("      replicas: 1\n", "      # set by the autoscaler function\n      replicas: 3  # was 1\n")
    edited = edited.replace("                  image: 'shop:1.0'\n", "                  image: 'shop:1.1'\n                  # pull policy added by a function\n                  imagePullPolicy: Always\n")
    result = fnrun_here("sink", str(root), stdin=edited.encode())
    assert result.returncode == 0, result.stderr
    assert (root / "shop.yaml").read_text() == original.replace(
        "    replicas: 1\n", "    # set by the autoscaler function\n    replicas: 3  # was 1\n"
    ).replace(
        "                image: 'shop:1.0'\n", "                image: 'shop:1.1'\n                # pull policy added by a function\n                imagePullPolicy: Always\n"
    )


def test_library_source_and_sink_match_the_cli(every_case: Path, tmp_path: Path) -> None:
    listing = api.source(every_case)
    assert listing.encode() == fnrun_here("source", str(every_case)).stdout
    plan = api.sink(tmp_path / "lib", listing)
    assert plan.summary().startswith(f"{len(resource_files(every_case))} created, 0 updated")


# --- streaming: the sink decodes as input arrives, the source writes as it reads -------------

def _generated(root: Path, files: int) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    from gen_package import generate

    generate(root, files, 5)
    return root


def _same_items(a: resourcelist.Decoded, b: resourcelist.Decoded) -> None:
    assert [(i.data, i.text, i.body) for i in a.items] == [(i.data, i.text, i.body) for i in b.items]
    assert (a.function_config, a.results, a.kind) == (b.function_config, b.results, b.kind)


@pytest.mark.parametrize("chunk", [7, 4096, 1 << 20])
def test_item_by_item_decoding_agrees_with_whole_decoding(every_case: Path, tmp_path: Path, chunk: int) -> None:
    """fnrun's own layout is cut into items as lines arrive; whatever the chunk boundaries, the
    items are exactly those of decoding the whole list at once. (The every-case package holds a
    flow-style document, so its list takes the general path as a whole.)"""
    golden_only = tmp_path / "golden-only"
    for case in golden_cases():
        write_files(golden_only, {f"{case.name}/{case.file_name}": case.input})
    listing = api.source(golden_only)
    function_output = listing.replace("    replicas: 1\n", "    # a function's comment\n    replicas: 2\n", 1) + (
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data: {a: b}\nresults:\n- message: done\n  severity: info\n"
    )
    for text, fnrun_layout in ((listing, True), (function_output, True), (api.source(every_case), False)):
        chunks = [text[i : i + chunk] for i in range(0, len(text), chunk)]
        if fnrun_layout:
            assert fastlist.decode_lines(chunks, "t")  # the fast path takes it, however it is cut
        streamed = resourcelist.decode_stream(chunks, "t")
        _same_items(streamed, resourcelist.decode_whole(text, "t"))


@pytest.mark.parametrize(
    "listing",
    [
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n  - apiVersion: v1\n    kind: A\n",  # indented items
        "kind: ResourceList\napiVersion: config.kubernetes.io/v1\nitems:\n- apiVersion: v1\n  kind: A\n",  # other key order
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &a {apiVersion: v1, kind: A}\n- *a\n",  # aliases across items
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: A\n\r\n",  # CRLF
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: A\n  x: \"a\n- b\"\n",  # a scalar across a dash
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {a: 1}\nitems:\n- apiVersion: v1\n  kind: A\n",
    ],
)
def test_other_layouts_fall_back_to_whole_decoding(listing: str) -> None:
    with pytest.raises(fastlist.NotFast):
        fastlist.decode_lines([listing], "t")
    _same_items(resourcelist.decode(listing, "t"), resourcelist.decode_whole(listing, "t"))


def test_stream_writer_matches_plan_for_interleaved_paths(tmp_path: Path) -> None:
    """Resources of one file that arrive apart (a1, b, a2) are written as `plan` writes them: a.yaml
    is staged as changed when b arrives (a2 missing), then found unchanged once a2 comes, and
    is not touched at all."""
    root = write_files(tmp_path / "pkg", {"a.yaml": "apiVersion: v1\nkind: A\nmetadata:\n  name: a1\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: a2\n", "b.yaml": "apiVersion: v1\nkind: B\nmetadata:\n  name: b\n"})
    original = read_package(root)
    a1, a2, b = original.resources
    changed_b = b.replaced({**b.data, "spec": {"x": 1}})
    expected = writeback.plan(root, [a1, a2, changed_b], original)
    before = snapshot(root)
    streaming = writeback.StreamWriter(root, original)
    for resource in (a1, changed_b, a2):
        streaming.add(resource)
    plan = streaming.finish()
    assert plan.summary() == expected.summary() == "0 created, 1 updated, 0 deleted, 1 unchanged"
    after = snapshot(root)
    assert after["a.yaml"] == before["a.yaml"] and after["b.yaml"].content == expected.changes[0].new
    assert sorted(after) == ["a.yaml", "b.yaml"]


def test_two_process_source_is_the_single_process_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _generated(tmp_path / "gen", 130)
    single = "".join(pipes.source_chunks(root, parallel=False))
    forks = []
    monkeypatch.setattr(pipes, "_Helper", lambda *a: forks.append(a) or _RealHelper(*a))
    assert "".join(pipes.source_chunks(root, parallel=True)) == single
    assert len(forks) == 1  # a helper process really read every other batch
    with open(tmp_path / "out.yaml", "wb") as out:  # into a file: two processes
        result = subprocess.run([sys.executable, "-m", "orchestrator", "source", str(root)], stdout=out, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0 and (tmp_path / "out.yaml").read_text() == single


_RealHelper = pipes._Helper


@pytest.mark.parametrize("parallel", [False, True], ids=["one-process", "two-processes"])
def test_anchors_files_share_by_name_are_apart_in_the_list(parallel: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file of a package may call its anchor `&labels`; in the ResourceList, which is one
    document, PyYAML refuses a name defined twice. Each file after the first that names it gets
    the name renamed apart, whichever process encoded its batch, and a sink writes each file's
    own names back."""
    import yaml

    root = _generated(tmp_path / "gen", 130)
    files = sorted(root.rglob("*.yaml"))
    for number, path in enumerate(files[::7]):
        path.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored-{number}\n  labels: &labels {{n: '{number}'}}\ndata: *labels\n")
    forks = []
    monkeypatch.setattr(pipes, "_Helper", lambda *a: forks.append(a) or _RealHelper(*a))
    listing = "".join(pipes.source_chunks(root, parallel=parallel))
    assert len(forks) == int(parallel)
    items = yaml.safe_load(listing)["items"]
    anchored = [item for item in items if item["metadata"]["name"].startswith("anchored-")]
    assert [item["data"] for item in anchored] == [{"n": str(n)} for n in range(len(files[::7]))]
    defined = [line.split("&")[1].split()[0] for line in listing.splitlines() if line.lstrip().startswith("labels: &")]
    assert defined == ["labels"] + [f"labels-{n}" for n in range(2, len(anchored) + 1)]
    before = snapshot(root)
    api.sink(root, listing)
    assert snapshot(root) == before



@pytest.mark.parametrize("bad", [["team-00/app-0020"], ["team-00/app-0000", "team-09/app-0009"], ["team-09/app-0009", "team-00/app-0060"]])
def test_two_process_source_reports_the_first_bad_file(tmp_path: Path, bad: list[str]) -> None:
    """Batches alternate between the processes; the error reported is the first bad file in file
    order, whichever process read it."""
    root = _generated(tmp_path / "gen", 130)
    for directory in bad:
        (root / directory / "resources.yaml").write_text("apiVersion: v1\nkind: A\ndata: [x\n")
    first = sorted(bad)[0]
    with pytest.raises(InputError, match=f"^{first}/resources.yaml:4: while parsing a flow sequence"):
        "".join(pipes.source_chunks(root, parallel=True))
    assert_one_line_error(fnrun_here("source", str(root)), f"{first}/resources.yaml:4")


def test_a_source_that_fails_midway_leaves_a_list_no_sink_accepts(tmp_path: Path) -> None:
    """Output began before the bad file was read: the list ends with a failure note, the source
    exits 2, and a sink given that output refuses it and writes nothing."""
    root = _generated(tmp_path / "gen", 150)
    write_files(root, {"zz/bad.yaml": "apiVersion: v1\nkind: A\nmetadata: [\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    producer = subprocess.run(f"'{sys.executable}' -m orchestrator source '{root}' | cat", shell=True, capture_output=True, env=env)
    assert producer.stdout.startswith(b"apiVersion: config.kubernetes.io/v1\n") and len(producer.stdout) > 300_000
    note = producer.stdout.rsplit(b"\n@fnrun: ", 1)[1]  # the parser's own words after file:line vary by version
    assert note.startswith(b"fnrun source failed: zz/bad.yaml:4: ") and note.endswith(b"\n") and note.count(b"\n") == 1
    assert producer.stderr.decode().startswith("fnrun: error: zz/bad.yaml:4:")
    consumer = fnrun_here("sink", str(tmp_path / "out"), stdin=producer.stdout)
    assert_one_line_error(consumer, "stdin: the input stops where its producer failed (fnrun source failed: zz/bad.yaml:4")
    assert not (tmp_path / "out").exists()


def test_sink_refuses_empty_input(tmp_path: Path) -> None:
    for empty in (b"", b"# only a comment\n", b"---\n"):
        assert_one_line_error(fnrun_here("sink", str(tmp_path / "out"), stdin=empty), "stdin: no resources in the input")
    assert not (tmp_path / "out").exists()
    assert fnrun_here("sink", str(tmp_path / "out"), stdin=b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n").returncode == 0


def test_read_chunks_decodes_utf8_split_across_reads_and_names_bad_lines() -> None:
    text = "a: é\nb: 日本\nc: 😀\n" * 50
    assert "".join(pipes.read_chunks(io.BytesIO(text.encode()), size=5)) == text
    broken = ("ok: 1\n" * 10).encode() + b"bad: \xff\n"
    with pytest.raises(InputError, match=r"^stdin:11: invalid UTF-8 \(byte 65\)$"):
        "".join(pipes.read_chunks(io.BytesIO(broken), size=4))
