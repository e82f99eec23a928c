"""`fnrun run DIR`: functions declared in the package, run in real containers, written back."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")


def test_declared_function_edits_only_changed_lines_and_second_run_is_a_noop(tmp_path: Path) -> None:
    write_package(tmp_path, {"app/deploy.yaml": deployment("web", "my app"), "app/fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    config_before = (tmp_path / "app/fn.yaml").read_bytes()
    result = fnrun("run", str(tmp_path))
    assert result.code == 0, result
    assert (tmp_path / "app/deploy.yaml").read_text() == (
        "# my app\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web  # keep me\n  labels:\n    team: web\nspec:\n  replicas: 2\n"
    )
    assert (tmp_path / "app/fn.yaml").read_bytes() == config_before  # functionConfig is not an item
    before = snapshot(tmp_path)
    again = fnrun("run", str(tmp_path))
    assert again.code == 0, again
    assert snapshot(tmp_path) == before  # bytes and mtimes


def test_scope_is_the_functions_directory_by_path_components(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "app/fn.yaml": function_config("fnrun-test/label:v1", {"scoped": "yes"}),
            "app/sub/deploy.yaml": deployment("inner"),
            "apps/deploy.yaml": deployment("sibling"),
            "top.yaml": deployment("top"),
        },
    )
    untouched = {p: (tmp_path / p).read_bytes() for p in ("apps/deploy.yaml", "top.yaml")}
    assert fnrun("run", str(tmp_path)).code == 0
    assert load(tmp_path / "app/sub/deploy.yaml")["metadata"]["labels"] == {"scoped": "yes"}
    assert {p: (tmp_path / p).read_bytes() for p in untouched} == untouched
    assert fnrun("run", str(tmp_path), "--global-scope").code == 0
    assert load(tmp_path / "top.yaml")["metadata"]["labels"] == {"scoped": "yes"}


def test_order_is_deepest_directory_first_and_list_shows_it(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "fn-a.yaml": function_config("fnrun-test/generate:v1", {"name": "from-root"}, name="a"),
            "sub/deeper/fn.yaml": function_config("fnrun-test/generate:v1", {"name": "from-deep"}, name="deep"),
            "sub/fn.yaml": function_config("fnrun-test/label:v1", {"seen": "sub"}, name="sub"),
        },
    )
    listing = fnrun("list", str(tmp_path))
    assert listing.code == 0, listing
    lines = listing.stdout.splitlines()
    assert [l.split("declared in: ")[1] for l in lines] == ["sub/deeper/fn.yaml[0]", "sub/fn.yaml[0]", "fn-a.yaml[0]"]
    assert "scope: sub/deeper/" in lines[0] and "scope: ./" in lines[2]
    assert fnrun("run", str(tmp_path)).code == 0
    # the deep generator ran first, so the sub/ label function saw (and labelled) its output
    deep = load(tmp_path / "sub/deeper/from-deep_configmap.yaml")
    assert deep["metadata"]["labels"] == {"seen": "sub"}
    root_made = load(tmp_path / "from-root_configmap.yaml")
    assert "labels" not in root_made["metadata"]


def test_generated_resources_go_to_default_paths_and_chain(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "gen/fn1.yaml": function_config("fnrun-test/generate:v1", {"name": "made"}, name="one"),
            "gen/fn2.yaml": function_config("fnrun-test/label:v1", {"chained": "true"}, name="two"),
        },
    )
    assert fnrun("run", str(tmp_path)).code == 0
    made = load(tmp_path / "gen/made_configmap.yaml")
    assert made["metadata"]["labels"] == {"chained": "true"}
    assert "annotations" not in made["metadata"]  # path/index annotations stripped


def test_deleted_resources_delete_their_file(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {"a.yaml": deployment("a"), "b.yaml": deployment("b"), "fn.yaml": function_config("fnrun-test/delete:v1", {"names": "a"})},
    )
    assert fnrun("run", str(tmp_path)).code == 0
    assert not (tmp_path / "a.yaml").exists() and (tmp_path / "b.yaml").exists()


@pytest.mark.parametrize(
    "annotation",
    [
        "config.k8s.io/function: |\n      container:\n        image: fnrun-test/label:v1",
        "config.kubernetes.io/container: fnrun-test/label:v1",
    ],
)
def test_legacy_declarations_are_accepted(tmp_path: Path, annotation: str) -> None:
    write_package(
        tmp_path,
        {
            "d.yaml": deployment("d"),
            "fn.yaml": f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    {annotation}\ndata:\n  legacy: ok\n",
        },
    )
    assert fnrun("run", str(tmp_path)).code == 0
    assert load(tmp_path / "d.yaml")["metadata"]["labels"] == {"legacy": "ok"}


@pytest.mark.parametrize(
    ("extra_annotation", "needle"),
    [
        ("      container:\n        image: x\n        privileged: true\n", "unknown key 'privileged'"),
        ("      exec:\n        path: ./x\n      container:\n        image: y\n", "exactly one of"),
        ("      deferFailure: true\n", "exactly one of"),
        ("      container: [\n", "fn.yaml"),
    ],
)
def test_bad_declarations_are_exit_2_naming_the_file(tmp_path: Path, extra_annotation: str, needle: str) -> None:
    write_package(
        tmp_path,
        {
            "d.yaml": deployment("d"),
            "fn.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\n  annotations:\n    config.kubernetes.io/function: |\n" + extra_annotation,
        },
    )
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path))
    assert_one_line_error(result, "fn.yaml", needle, code=2)
    assert snapshot(tmp_path) == before


def test_network_declared_without_flag_fails_before_anything_runs(tmp_path: Path) -> None:
    write_package(
        tmp_path,
        {
            "a/fn.yaml": function_config("fnrun-test/generate:v1", name="first"),
            "fn.yaml": function_config("fnrun-test/probe:v1", extra="  network: true\n", name="net"),
        },
    )
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path))
    assert_one_line_error(result, "network: true", "--network", code=2)
    assert "[ok]" not in result.stderr  # the generate function did not run
    assert snapshot(tmp_path) == before
    allowed = fnrun("run", str(tmp_path), "--network")
    assert allowed.code == 0, allowed
    probe = load(tmp_path / "sandbox-probe_configmap.yaml")
    assert probe["data"]["interfaces"] != "lo"  # a network beyond loopback


def test_function_sees_only_its_scope_and_local_mount(tmp_path: Path) -> None:
    write_package(tmp_path, {"p/fn.yaml": function_config("fnrun-test/probe:v1"), "p/notes.txt": "hello\n", "other/x.yaml": deployment("x")})
    assert fnrun("run", str(tmp_path)).code == 0
    probe = load(tmp_path / "p/sandbox-probe_configmap.yaml")["data"]
    assert probe["uid"] == "65534"
    assert probe["noNewPrivs"] == "1"
    assert int(probe["capEff"], 16) == 0
    assert probe["interfaces"] == "lo"
    assert probe["rootWritable"] == "false" and probe["localWritable"] == "false" and probe["tmpWritable"] == "true"
    assert probe["localListing"] == "fn.yaml,notes.txt"
    assert probe["env.LOG_TO_STDERR"] == "true" and probe["env.STRUCTURED_RESULTS"] == "true"
