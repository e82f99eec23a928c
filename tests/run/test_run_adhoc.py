"""`fnrun run` with the function on the command line: --image, --fn-config, --exec, and stdin."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestrator.run import resourcelist
from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")


def test_image_with_key_value_arguments_sees_the_whole_package(tmp_path: Path) -> None:
    write_package(tmp_path, {"a/one.yaml": deployment("one"), "b/two.yaml": deployment("two")})
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--", "env=prod", "tier=web")
    assert result.code == 0, result
    for rel in ("a/one.yaml", "b/two.yaml"):
        assert load(tmp_path / rel)["metadata"]["labels"] == {"env": "prod", "tier": "web"}


def test_fn_config_file_inside_the_package_is_config_and_item(tmp_path: Path) -> None:
    """As kpt fn eval: the file is the functionConfig and, being one of the package's resources,
    an item too (the label function labels it as well); --fn-config-only leaves it untouched."""
    write_package(
        tmp_path,
        {
            "d.yaml": deployment("d"),
            "cfg/labels.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\ndata:\n  from: file\n",
        },
    )
    config_before = (tmp_path / "cfg/labels.yaml").read_bytes()
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--fn-config", str(tmp_path / "cfg/labels.yaml"), "--fn-config-only")
    assert result.code == 0, result
    assert load(tmp_path / "d.yaml")["metadata"]["labels"] == {"from": "file"}
    assert (tmp_path / "cfg/labels.yaml").read_bytes() == config_before
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--fn-config", str(tmp_path / "cfg/labels.yaml"))
    assert result.code == 0, result
    assert load(tmp_path / "cfg/labels.yaml")["metadata"]["labels"] == {"from": "file"}
    both = fnrun("run", str(tmp_path), "-i", "fnrun-test/label:v1", "--fn-config", str(tmp_path / "cfg/labels.yaml"), "--fn-config-only", "--fn-config-as-item")
    assert_one_line_error(both, "--fn-config-as-item and --fn-config-only", code=2)


def test_bad_argument_is_exit_2(tmp_path: Path) -> None:
    write_package(tmp_path, {"d.yaml": deployment("d")})
    assert_one_line_error(fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--", "novalue"), "novalue", code=2)
    assert_one_line_error(fnrun("run", str(tmp_path), "--", "a=b"), "--image", code=2)


def test_stdin_mode_reads_and_writes_a_resource_list(tmp_path: Path) -> None:
    write_package(tmp_path, {"d.yaml": "# keep this comment\n" + deployment("d")})
    listing = fnrun("source", str(tmp_path))
    result = fnrun("run", "-", "--image", "fnrun-test/label:v1", "--", "via=stdin", stdin=listing.stdout)
    assert result.code == 0, result
    items = resourcelist.decode(result.stdout, "out").items
    assert items[0].data["metadata"]["labels"] == {"via": "stdin"}
    assert "# keep this comment" in items[0].text
    assert items[0].path == "d.yaml"


def _exec_script(path: Path, body: str) -> Path:
    path.write_text("#!/usr/bin/env python3\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


ADD_ANNOTATION = """\
import sys, yaml
rl = yaml.safe_load(sys.stdin)
for item in rl["items"]:
    item["metadata"].setdefault("annotations", {})["exec"] = "ran"
print("exec function ran", file=sys.stderr)
yaml.safe_dump(rl, sys.stdout)
"""


def test_exec_functions_need_enable_exec_and_run_relative_to_their_file(tmp_path: Path) -> None:
    _exec_script(tmp_path / "fn.py", ADD_ANNOTATION)
    write_package(
        tmp_path,
        {
            "d.yaml": deployment("d"),
            "fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n"
            "    config.kubernetes.io/function: |\n      exec:\n        path: ./fn.py\n",
        },
    )
    before = snapshot(tmp_path)
    assert_one_line_error(fnrun("run", str(tmp_path)), "--allow-exec", code=2)
    assert snapshot(tmp_path) == before
    result = fnrun("run", str(tmp_path), "--enable-exec")
    assert result.code == 0, result
    assert "[./fn.py] exec function ran" in result.stderr
    assert load(tmp_path / "d.yaml")["metadata"]["annotations"] == {"exec": "ran"}


def test_exec_on_the_command_line(tmp_path: Path) -> None:
    script = _exec_script(tmp_path.parent / f"{tmp_path.name}-fn.py", ADD_ANNOTATION)
    write_package(tmp_path, {"d.yaml": deployment("d")})
    assert_one_line_error(fnrun("run", str(tmp_path), "--exec", str(script)), "--allow-exec", code=2)
    result = fnrun("run", str(tmp_path), "--exec", str(script), "--enable-exec")
    assert result.code == 0, result
    assert load(tmp_path / "d.yaml")["metadata"]["annotations"] == {"exec": "ran"}


def test_env_and_mount_flags_reach_the_container(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {"data/file.txt": "x\n", "fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  envs: FROM_FLAG,PASSED\n"},
    )
    result = fnrun(
        "run", str(tmp_path), "--image", "fnrun-test/probe:v1", "--fn-config", str(tmp_path / "fn.yaml"),
        "--env", "FROM_FLAG=yes", "--env", "PASSED", "--env", "LOG_TO_STDERR=overridden",
        "--mount", f"type=bind,src={tmp_path / 'data'},dst=/data",
        env={"PASSED": "through"},
    )
    assert result.code == 0, result
    probe = load(tmp_path / "sandbox-probe_configmap.yaml")["data"]
    assert probe["env.FROM_FLAG"] == "yes" and probe["env.PASSED"] == "through"
    assert probe["env.LOG_TO_STDERR"] == "overridden"


def test_mount_outside_the_package_is_refused(tmp_path: Path) -> None:
    write_package(tmp_path / "pkg", {"d.yaml": deployment("d")})
    result = fnrun("run", str(tmp_path / "pkg"), "--image", "fnrun-test/identity:v1", "--mount", f"type=bind,src={tmp_path},dst=/x")
    assert_one_line_error(result, "outside the package", code=2)


def test_as_current_user_flag(tmp_path: Path) -> None:
    write_package(tmp_path, {"d.yaml": deployment("d")})
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/probe:v1", "--as-current-user")
    assert result.code == 0, result
    assert load(tmp_path / "sandbox-probe_configmap.yaml")["data"]["uid"] == str(os.getuid())


def test_stdin_mode_runs_the_functions_declared_in_the_stream(tmp_path: Path) -> None:
    from testing.pipeline_helpers import function_config

    write_package(tmp_path, {"app/d.yaml": deployment("d"), "app/fn.yaml": function_config("fnrun-test/label:v1", {"declared": "in-stream"}), "other.yaml": deployment("o")})
    listing = fnrun("source", str(tmp_path))
    result = fnrun("run", "-", stdin=listing.stdout)
    assert result.code == 0, result
    items = {item.data["metadata"]["name"]: item for item in resourcelist.decode(result.stdout, "out").items}
    assert items["d"].data["metadata"]["labels"] == {"declared": "in-stream"}
    assert "labels" not in items["o"].data["metadata"]  # outside the function's directory
    assert "labels" not in items["fn"].data["metadata"]  # its own config is not an item


def test_exclude_local_config_only_shapes_stdout(tmp_path: Path) -> None:
    from testing.pipeline_helpers import function_config

    write_package(tmp_path, {"d.yaml": deployment("d"), "fn.yaml": function_config("fnrun-test/identity:v1")})
    kept = fnrun("run", str(tmp_path), "--output", "-")
    assert {i.data["metadata"]["name"] for i in resourcelist.decode(kept.stdout, "out").items} == {"d", "fn"}
    cluster = fnrun("run", str(tmp_path), "--output", "-", "--exclude-local-config")
    assert cluster.code == 0, cluster
    assert {i.data["metadata"]["name"] for i in resourcelist.decode(cluster.stdout, "out").items} == {"d"}
    assert_one_line_error(fnrun("run", str(tmp_path), "--exclude-local-config"), "-o stdout", code=2)


LIST = """\
# the dashboards, as kube-prometheus ships them
apiVersion: v1
items:
- apiVersion: v1
  data:
    overview.json: |-
      {"title": "a # not a comment"}
  kind: ConfigMap
  metadata:
    name: dashboard  # the one
kind: ConfigMapList
"""


@pytest.mark.parametrize("image", ["identity", "label", "dropcomments", "reorder"])
def test_a_document_without_metadata_comes_back_with_only_the_function_s_change(image: str, tmp_path: Path) -> None:
    """A `kind: List` has no metadata of its own: fnrun gives it one for its annotations, and the
    file gets back only what the function changed (the labels of the image that sets them)."""
    write_package(tmp_path, {"dashboards.yaml": LIST, "d.yaml": deployment("d")})
    listing = fnrun("source", str(tmp_path)).stdout
    assert "fnrun-original" not in listing  # stamped as lines: no copy of the document as read
    result = fnrun("run", str(tmp_path), "--image", f"fnrun-test/{image}:v1", "--", "team=a")
    assert result.code == 0, result
    written = (tmp_path / "dashboards.yaml").read_text()
    labels = "metadata:\n  labels:\n    team: a\n"
    if image in ("identity", "reorder"):
        assert written == LIST
    elif image == "label":  # ruamel keeps the metadata where fnrun put it, after the first key
        assert written == LIST.replace("apiVersion: v1\nitems:", f"apiVersion: v1\n{labels}items:")
    else:  # PyYAML sorts the keys: metadata last
        assert written == LIST + labels
