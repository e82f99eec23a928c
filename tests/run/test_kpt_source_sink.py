"""`kpt fn source DIR | fnrun sink OUT` writes the package back as it was.

kpt prints what fnrun's own source does not: every item stamped with kyaml's
`internal.config.kubernetes.io/seqindent`, sequences re-indented compact, and the documents of a
file that are not resources (no apiVersion or kind) as items with a metadata block of annotations.
The packages under tests/fixtures/kpt-source/ are ones kpt itself round-trips exactly (nested
directories, comments, several documents per file, wide and compact sequences, non-resource
documents, a resource without metadata); next to each is what `kpt fn source` printed for it, so
the test runs without kpt. Where kpt is installed, its live output is checked against that and
piped into the real `fnrun sink` too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.io_helpers import copy_package, fnrun_here, snapshot

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "kpt-source"
PACKAGES = ["basic", "documents", "wide"]
KPT = shutil.which("kpt")


def files(root: Path) -> dict[str, bytes]:
    return {rel: entry.content for rel, entry in snapshot(root).items() if entry.content is not None}


@pytest.mark.parametrize("name", PACKAGES)
def test_sink_writes_kpt_source_output_as_the_package(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = fnrun_here("sink", str(out), stdin=(FIXTURES / f"{name}.kpt-source.yaml").read_bytes())
    assert result.returncode == 0, result.stderr
    assert files(out) == files(FIXTURES / name)


@pytest.mark.parametrize("name", PACKAGES)
def test_sinking_kpt_source_output_onto_the_package_itself_changes_nothing(name: str, tmp_path: Path) -> None:
    package = copy_package(FIXTURES / name, tmp_path / name)
    result = fnrun_here("sink", str(package), stdin=(FIXTURES / f"{name}.kpt-source.yaml").read_bytes())
    assert result.returncode == 0, result.stderr
    assert files(package) == files(FIXTURES / name)
    assert " 0 updated, 0 deleted" in result.stderr.decode()


def test_items_without_a_path_must_still_be_resources(tmp_path: Path) -> None:
    """Only a document of a package file (it has a path) may lack apiVersion or kind."""
    stdin = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- foo: bar\n"
    result = fnrun_here("sink", str(tmp_path / "out"), stdin=stdin)
    assert result.returncode == 2
    assert "items[0] is a mapping without apiVersion or kind, not a resource" in result.stderr.decode()
    assert not (tmp_path / "out").exists()


def test_run_on_stdin_still_refuses_non_resource_items() -> None:
    """Functions get resources only: the allowance is the sink's."""
    stdin = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- foo: bar\n  metadata:\n    annotations:\n      config.kubernetes.io/path: a.yaml\n"
    result = fnrun_here("run", "-", "--exec", "/bin/cat", "--enable-exec", stdin=stdin)
    assert result.returncode == 2, result.stderr
    assert "not a resource" in result.stderr.decode()


@pytest.mark.skipif(KPT is None, reason="kpt is not installed (the stored outputs above still ran)")
@pytest.mark.parametrize("name", PACKAGES)
def test_live_kpt_source_piped_into_fnrun_sink(name: str, tmp_path: Path) -> None:
    live = subprocess.run([KPT, "fn", "source", str(FIXTURES / name)], capture_output=True, check=True, timeout=120).stdout
    assert live == (FIXTURES / f"{name}.kpt-source.yaml").read_bytes()
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    kpt = subprocess.Popen([KPT, "fn", "source", str(FIXTURES / name)], stdout=subprocess.PIPE)
    sink = subprocess.run([sys.executable, "-m", "orchestrator", "sink", str(out)], stdin=kpt.stdout, capture_output=True, env=env, timeout=120)
    assert kpt.stdout is not None
    kpt.stdout.close()
    assert kpt.wait(timeout=60) == 0
    assert sink.returncode == 0, sink.stderr
    assert files(out) == files(FIXTURES / name)


MIXED = """\
# values
replicas: 3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm   # the name
data:
  k: "v"   # quoted
---
apiVersion: v1
kind: Service
metadata:
  name: svc
spec:
  ports:
  - port: 80 # http
"""


#: What `kpt fn source` printed for MIXED (it numbers every document of the file).
KPT_LISTED = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- # values
  replicas: 3
  metadata:
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm # the name
    annotations:
      config.kubernetes.io/index: '1'
      config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/index: '1'
      internal.config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
  data:
    k: "v" # quoted
- apiVersion: v1
  kind: Service
  metadata:
    name: svc
    annotations:
      config.kubernetes.io/index: '2'
      config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/index: '2'
      internal.config.kubernetes.io/path: 'mixed.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
  spec:
    ports:
    - port: 80 # http
"""


@pytest.mark.parametrize("numbered_by", ["kpt", "fnrun"])
def test_a_changed_resource_after_another_document_is_edited_in_place(numbered_by: str, tmp_path: Path) -> None:
    """kpt numbers every document of a file, fnrun only resources: a list numbered either way,
    with one value changed on its way (as by a function between source and sink), changes that
    line alone; the values document, the comments' spacing and the other resource stay."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mixed.yaml").write_text(MIXED)
    if numbered_by == "kpt":
        if KPT is not None:  # the stored listing is what this kpt prints
            assert subprocess.run([KPT, "fn", "source", str(package)], capture_output=True, check=True, timeout=120).stdout.decode() == KPT_LISTED
        stdin = KPT_LISTED.replace('"v"', '"w"').encode()
    else:
        stdin = fnrun_here("source", str(package)).stdout.replace(b'"v"', b'"w"')
    result = fnrun_here("sink", str(package), stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert (package / "mixed.yaml").read_text() == MIXED.replace('"v"', '"w"')
