"""Origin and transformer annotations on `--output -`, and `fnrun explain`."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.yamlio import fast
from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}
ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "config.kubernetes.io/transformations"
UPSTREAM = """\
apiVersion: v1
kind: Service
metadata:
  name: svc
  annotations:
    config.kubernetes.io/origin: |
      path: base/service.yaml
      repo: https://example.com/upstream
    config.kubernetes.io/transformations: |
      - configuredIn: base/kustomization.yaml
        configuredBy:
          apiVersion: builtin
          kind: PrefixSuffixTransformer
"""


def _package(root: Path) -> Path:
    """gen/ generates a ConfigMap that the root's label function then changes; the root's label
    and namespaced second label change deploy.yaml twice; untouched/ is out of every scope."""
    namespaced = function_config("fnrun-test/label:v1", {"tier": "front"}, name="tier").replace("  name: tier\n", "  name: tier\n  namespace: tools\n")
    return write_package(
        root,
        {
            "1-label.yaml": function_config("fnrun-test/label:v1", {"team": "web"}, name="team"),
            "2-tier.yaml": namespaced,
            "deploy.yaml": deployment("web"),
            "upstream.yaml": UPSTREAM,
            "gen/fn.yaml": function_config("fnrun-test/generate:v1", {"name": "made"}, name="maker"),
        },
    )


def _items(stdout: str) -> dict[str, dict]:
    return {f"{i['kind']}/{i['metadata']['name']}": i for i in fast.load(stdout, "stdout")["items"]}


def _annotations(item: dict) -> dict:
    return item["metadata"].get("annotations") or {}


def test_origin_and_transformations_tell_each_resources_story(tmp_path: Path) -> None:
    _package(tmp_path)
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--output", "-", "--origin-annotations", "--transformer-annotations", env=PLAIN)
    assert result.code == 0, result
    assert snapshot(tmp_path) == before  # stdout only
    items = _items(result.stdout)
    deploy = _annotations(items["Deployment/web"])
    assert deploy[ORIGIN] == "path: deploy.yaml\n"
    assert fast.load(deploy[TRANSFORMATIONS], "t") == [
        {"configuredIn": "1-label.yaml", "configuredBy": {"apiVersion": "v1", "kind": "ConfigMap", "name": "team"}},
        {"configuredIn": "2-tier.yaml", "configuredBy": {"apiVersion": "v1", "kind": "ConfigMap", "name": "tier", "namespace": "tools"}},
    ]
    made = _annotations(items["ConfigMap/made"])
    assert fast.load(made[ORIGIN], "o") == {"configuredIn": "gen/fn.yaml", "configuredBy": {"apiVersion": "v1", "kind": "ConfigMap", "name": "maker"}}
    assert [t["configuredIn"] for t in fast.load(made[TRANSFORMATIONS], "t")] == ["1-label.yaml", "2-tier.yaml"]
    maker = _annotations(items["ConfigMap/maker"])  # the generator's config: read, then labelled
    assert maker[ORIGIN] == "path: gen/fn.yaml\n"
    team = _annotations(items["ConfigMap/team"])  # its own config is not among a function's items
    assert team[ORIGIN] == "path: 1-label.yaml\n"
    assert [t["configuredIn"] for t in fast.load(team[TRANSFORMATIONS], "t")] == ["2-tier.yaml"]
    # an upstream tool's origin is kept, and its transformations are continued
    service = _annotations(items["Service/svc"])
    assert service[ORIGIN] == "path: base/service.yaml\nrepo: https://example.com/upstream\n"
    assert [t.get("configuredIn") for t in fast.load(service[TRANSFORMATIONS], "t")] == ["base/kustomization.yaml", "1-label.yaml", "2-tier.yaml"]
    # written as block strings, the way kustomize prints them
    assert "      config.kubernetes.io/origin: |\n        path: deploy.yaml\n" in result.stdout


def test_each_flag_alone_and_neither_by_default(tmp_path: Path) -> None:
    _package(tmp_path)
    plain = _items(fnrun("run", str(tmp_path), "--output", "-", env=PLAIN).stdout)
    assert ORIGIN not in _annotations(plain["Deployment/web"]) and TRANSFORMATIONS not in _annotations(plain["Deployment/web"])
    origin_only = _items(fnrun("run", str(tmp_path), "--output", "-", "--origin-annotations", env=PLAIN).stdout)
    assert ORIGIN in _annotations(origin_only["Deployment/web"]) and TRANSFORMATIONS not in _annotations(origin_only["Deployment/web"])
    changes_only = _items(fnrun("run", str(tmp_path), "--output", "-", "--transformer-annotations", env=PLAIN).stdout)
    assert ORIGIN not in _annotations(changes_only["Deployment/web"]) and TRANSFORMATIONS in _annotations(changes_only["Deployment/web"])
    assert [t["configuredIn"] for t in fast.load(_annotations(changes_only["ConfigMap/tier"])[TRANSFORMATIONS], "t")] == ["1-label.yaml"]


def test_annotations_work_on_a_stream_too(tmp_path: Path) -> None:
    _package(tmp_path)
    stream = fnrun("source", str(tmp_path)).stdout
    result = fnrun("run", "-", "--origin-annotations", "--transformer-annotations", stdin=stream, env=PLAIN)
    assert result.code == 0, result
    assert _annotations(_items(result.stdout)["Deployment/web"])[ORIGIN] == "path: deploy.yaml\n"


@pytest.mark.parametrize("flag", ["--origin-annotations", "--transformer-annotations"])
def test_annotations_are_never_written_into_files(tmp_path: Path, flag: str) -> None:
    _package(tmp_path)
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), flag, env=PLAIN)
    assert_one_line_error(result, flag.split("-")[2], "--output -", code=2)
    assert snapshot(tmp_path) == before


def test_explain_tells_where_a_resource_came_from_and_who_changed_it(tmp_path: Path) -> None:
    _package(tmp_path)
    before = snapshot(tmp_path)
    result = fnrun("explain", str(tmp_path), "Deployment/web", env=PLAIN)
    assert result.code == 0, result
    assert result.stdout == (
        "Deployment/web (apps/v1) in deploy.yaml\n"
        "  read from deploy.yaml\n"
        "  changed by:\n"
        "    1. fnrun-test/label:v1 (configured in 1-label.yaml by ConfigMap/team)\n"
        "    2. fnrun-test/label:v1 (configured in 2-tier.yaml by ConfigMap/tools/tier)\n"
    )
    assert snapshot(tmp_path) == before
    made = fnrun("explain", str(tmp_path), "v1/ConfigMap/made", env=PLAIN)
    assert made.stdout.splitlines()[:2] == ["ConfigMap/made (v1) in gen/made_configmap.yaml", "  created by fnrun-test/generate:v1 (configured in gen/fn.yaml by ConfigMap/maker)"]
    untouched = fnrun("explain", str(tmp_path), "apps/v1/Deployment/web", env=PLAIN)
    assert untouched.stdout == result.stdout


def test_explain_a_removed_resource(tmp_path: Path) -> None:
    write_package(tmp_path, {"a.yaml": deployment("a"), "fn.yaml": function_config("fnrun-test/delete:v1", {"names": "a"}, name="remover")})
    result = fnrun("explain", str(tmp_path), "deployment/a", env=PLAIN)
    assert result.code == 0, result
    assert result.stdout.splitlines() == [
        "Deployment/a (apps/v1) in a.yaml",
        "  read from a.yaml",
        "  not changed by any function",
        "  removed by fnrun-test/delete:v1 (configured in fn.yaml by ConfigMap/remover)",
    ]


def test_explain_names_what_it_cannot_find_or_tell_apart(tmp_path: Path) -> None:
    twins = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: {}\ndata: {{}}\n"
    write_package(tmp_path, {"a.yaml": twins.format("one"), "b.yaml": twins.format("two"), "d.yaml": deployment("web")})
    assert_one_line_error(fnrun("explain", str(tmp_path), "Deployment/nope", env=PLAIN), "no Deployment/nope", code=2)
    assert_one_line_error(fnrun("explain", str(tmp_path), "ConfigMap/cm", env=PLAIN), "matches 2 resources", "ConfigMap/one/cm", code=2)
    assert fnrun("explain", str(tmp_path), "ConfigMap/two/cm", env=PLAIN).stdout.startswith("ConfigMap/two/cm (v1) in b.yaml\n")
    assert_one_line_error(fnrun("explain", str(tmp_path), "web", env=PLAIN), "expected KIND/NAME", code=2)
