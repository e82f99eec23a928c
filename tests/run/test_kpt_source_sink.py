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

from testing.io_helpers import copy_package, fnrun, snapshot

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "kpt-source"
PACKAGES = ["basic", "documents", "wide"]
KPT = shutil.which("kpt")


def files(root: Path) -> dict[str, bytes]:
    return {rel: entry.content for rel, entry in snapshot(root).items() if entry.content is not None}


@pytest.mark.parametrize("name", PACKAGES)
def test_sink_writes_kpt_source_output_as_the_package(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = fnrun("sink", str(out), stdin=(FIXTURES / f"{name}.kpt-source.yaml").read_bytes())
    assert result.returncode == 0, result.stderr
    assert files(out) == files(FIXTURES / name)


@pytest.mark.parametrize("name", PACKAGES)
def test_sinking_kpt_source_output_onto_the_package_itself_changes_nothing(name: str, tmp_path: Path) -> None:
    package = copy_package(FIXTURES / name, tmp_path / name)
    result = fnrun("sink", str(package), stdin=(FIXTURES / f"{name}.kpt-source.yaml").read_bytes())
    assert result.returncode == 0, result.stderr
    assert files(package) == files(FIXTURES / name)
    assert " 0 updated, 0 deleted" in result.stderr.decode()


def test_items_without_a_path_must_still_be_resources(tmp_path: Path) -> None:
    """Only a document of a package file (it has a path) may lack apiVersion or kind."""
    stdin = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- foo: bar\n"
    result = fnrun("sink", str(tmp_path / "out"), stdin=stdin)
    assert result.returncode == 2
    assert "items[0] is a mapping without apiVersion or kind, not a resource" in result.stderr.decode()
    assert not (tmp_path / "out").exists()


def test_run_on_stdin_still_refuses_non_resource_items() -> None:
    """Functions get resources only: the allowance is the sink's."""
    stdin = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- foo: bar\n  metadata:\n    annotations:\n      config.kubernetes.io/path: a.yaml\n"
    result = fnrun("run", "-", "--exec", "/bin/cat", "--enable-exec", stdin=stdin)
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
