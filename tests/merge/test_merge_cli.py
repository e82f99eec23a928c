"""`fnrun merge` / `fnrun merge3`: the merges written through the package write-back."""

from __future__ import annotations

from pathlib import Path

from testing.in_process import fnrun_here
from testing.pipeline_helpers import assert_one_line_error, load, snapshot, write_package

SRC = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.7
        command: ['new_run.sh', 'arg1']
      - name: sidecar2
        image: sidecar2:v1
"""

DEST = """\
# my deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1   # we run one
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.6
        command: ['old_run.sh', 'arg0']
      - name: sidecar1
        image: "sidecar1:v1"
"""


def test_merge_gives_the_seed_result_and_keeps_the_destinations_formatting(tmp_path: Path) -> None:
    write_package(tmp_path / "src", {"d.yaml": SRC, "svc/new.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web # new\n"})
    write_package(tmp_path / "dest", {"d.yaml": DEST, "keep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: only-here\n"})
    keep = (tmp_path / "dest/keep.yaml").read_bytes()
    result = fnrun_here("merge", str(tmp_path / "src"), str(tmp_path / "dest"))
    assert result.code == 0, result
    assert (tmp_path / "dest/d.yaml").read_text() == DEST.replace("replicas: 1 ", "replicas: 3 ").replace(
        "nginx:1.6\n        command: ['old_run.sh', 'arg0']", "nginx:1.7\n        command: ['new_run.sh', 'arg1']"
    ) + "      - name: sidecar2\n        image: sidecar2:v1\n"
    assert (tmp_path / "dest/svc/new.yaml").read_text() == "apiVersion: v1\nkind: Service\nmetadata:\n  name: web # new\n"
    assert (tmp_path / "dest/keep.yaml").read_bytes() == keep  # only in the destination: kept, untouched
    before = snapshot(tmp_path / "dest")
    assert fnrun_here("merge", str(tmp_path / "src"), str(tmp_path / "dest")).code == 0
    assert snapshot(tmp_path / "dest") == before  # merging again changes nothing


def _cm(name: str, **data: str) -> str:
    body = "".join(f"  {k}: {v}\n" for k, v in data.items())
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{body}"


def test_merge3_applies_upstream_changes_and_keeps_local_edits(tmp_path: Path) -> None:
    write_package(tmp_path / "v1", {"a.yaml": _cm("a", x="1", y="1"), "gone.yaml": _cm("gone", x="1")})
    write_package(tmp_path / "v2", {"a.yaml": _cm("a", x="2", y="1"), "added.yaml": _cm("added", x="1")})
    local = _cm("a", x="1", y="local").replace("\ndata:", "\n# mine\ndata:")
    write_package(tmp_path / "mine", {"a.yaml": local, "gone.yaml": _cm("gone", x="1"), "own.yaml": _cm("own", z="1")})
    result = fnrun_here("merge3", "--ancestor", str(tmp_path / "v1"), "--from", str(tmp_path / "v2"), "--to", str(tmp_path / "mine"))
    assert result.code == 0, result
    assert (tmp_path / "mine/a.yaml").read_text() == local.replace("x: 1", "x: 2")  # changed upstream → upstream; local edit kept
    assert not (tmp_path / "mine/gone.yaml").exists()  # deleted upstream → deleted
    assert load(tmp_path / "mine/added.yaml")["metadata"]["name"] == "added"  # added upstream → added
    assert load(tmp_path / "mine/own.yaml")["data"] == {"z": 1}  # only local → kept


def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    write_package(tmp_path / "dest", {"d.yaml": DEST})
    before = snapshot(tmp_path / "dest")
    assert_one_line_error(fnrun_here("merge", str(tmp_path / "missing"), str(tmp_path / "dest")), "missing", code=2)
    write_package(tmp_path / "bad", {"x.yaml": "a: [\n"})
    assert_one_line_error(fnrun_here("merge", str(tmp_path / "bad"), str(tmp_path / "dest")), "x.yaml", code=2)
    write_package(tmp_path / "dup", {"one.yaml": SRC, "two.yaml": SRC})
    assert_one_line_error(fnrun_here("merge", str(tmp_path / "dup"), str(tmp_path / "dest")), "Deployment", "web", code=2)
    assert snapshot(tmp_path / "dest") == before


def test_a_conflict_is_reported_not_guessed(tmp_path: Path) -> None:
    base = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  v: x\n"
    write_package(tmp_path / "v1", {"c.yaml": base})
    write_package(tmp_path / "v2", {"c.yaml": base.replace("v: x", "v:\n    nested: map")})
    write_package(tmp_path / "mine", {"c.yaml": base.replace("v: x", "v: [a, list]")})
    before = snapshot(tmp_path / "mine")
    result = fnrun_here("merge3", "--ancestor", str(tmp_path / "v1"), "--from", str(tmp_path / "v2"), "--to", str(tmp_path / "mine"))
    assert_one_line_error(result, "conflict", "data.v", code=2)
    assert snapshot(tmp_path / "mine") == before


