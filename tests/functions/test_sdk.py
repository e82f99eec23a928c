"""The function SDK (functions/sdk): paths, resources, typed config, results, and the process contract.

The last test runs this file and the catalog tests again under ruamel.yaml 0.17.21, the version
Debian bookworm ships inside the function images, in a cached venv (this file alone in the fast
subset).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
import ruamel.yaml

from functions import sdk
from functions.sdk import layout, paths
from functions.sdk.layout import Style
from functions.sdk.resourcelist import dump_yaml, new_yaml

REPO = Path(__file__).resolve().parents[2]
LEGACY_RUAMEL = "0.17.21"


def load(text: str) -> Any:
    return new_yaml().load(textwrap.dedent(text))


def resource(text: str) -> sdk.Resource:
    return sdk.Resource(load(text))


def dump(node: Any) -> str:
    return dump_yaml(node)


DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web # the web tier
      namespace: shop
      labels: {app: web}
      annotations:
        config.kubernetes.io/path: 'apps/web.yaml'
        config.kubernetes.io/index: '2'
    spec:
      template:
        metadata:
          labels:
            app: web
        spec:
          initContainers:
          - name: init
            image: busybox
          containers:
          - name: nginx
            image: "nginx:1.25" # pinned
          - image: sidecar
    """


# paths -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path, segments", [
    ("spec.template.spec.containers[name=web].image", ["spec", "template", "spec", "containers", ("name", "web"), "image"]),
    ("metadata.annotations['config.kubernetes.io/path']", ["metadata", "annotations", "config.kubernetes.io/path"]),
    ("metadata.labels.app.kubernetes.io/name", ["metadata", "labels", "app", "kubernetes", "io/name"]),
    ("spec.ports[0].port", ["spec", "ports", 0, "port"]),
    ('data["a.b"]', ["data", "a.b"]),
])
def test_path_grammar(path: str, segments: list) -> None:
    assert paths.parse(path) == segments
    assert paths.parse(paths.render(segments)) == segments


def test_render_quotes_keys_with_dots() -> None:
    assert paths.render(["metadata", "annotations", "fnrun.dev/size"]) == "metadata.annotations['fnrun.dev/size']"
    assert paths.render(["spec", "containers", ("name", "x"), "resources"]) == "spec.containers[name=x].resources"


def test_bad_path_is_rejected() -> None:
    with pytest.raises(ValueError, match="bad field path"):
        paths.parse("spec.[oops")


def test_get_walks_maps_indexes_and_selectors() -> None:
    r = resource(DEPLOYMENT)
    assert r.get("spec.template.spec.containers[name=nginx].image") == "nginx:1.25"
    assert r.get("spec.template.spec.containers[1].image") == "sidecar"
    assert r.get("spec.template.spec.containers[name=nope].image", "dflt") == "dflt"
    assert r.get("metadata.annotations['config.kubernetes.io/index']") == "2"
    assert r.get("kind.nothing") is None


def test_set_creates_parents_and_keeps_comments() -> None:
    r = resource(DEPLOYMENT)
    assert r.set("spec.template.spec.containers[name=nginx].resources.limits.cpu", "500m")
    out = dump(r.data)
    assert "name: web # the web tier" in out
    assert 'image: "nginx:1.25" # pinned' in out
    assert re.search(r"resources:\n\s+limits:\n\s+cpu: 500m", out)


def test_set_equal_value_is_a_no_op_that_keeps_quoting() -> None:
    r = resource(DEPLOYMENT)
    before = dump(r.data)
    assert not r.set("spec.template.spec.containers[name=nginx].image", "nginx:1.25")
    assert dump(r.data) == before
    assert r.set("spec.replicas", 1) and not r.set("spec.replicas", 1)
    assert r.set("spec.replicas", True), "true is not 1 in YAML"


def test_new_metadata_goes_before_spec() -> None:
    r = resource("apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec: {}\n")
    r.set("spec.template.metadata.labels.app", "x")
    r.set("metadata.name", "job")
    assert list(r.data) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(r.get("spec.template")) == ["metadata", "spec"]


def test_set_through_a_missing_list_element_fails() -> None:
    with pytest.raises(KeyError, match=r"containers\[name=ghost\]"):
        resource(DEPLOYMENT).set("spec.template.spec.containers[name=ghost].image", "x")


def test_delete() -> None:
    r = resource(DEPLOYMENT)
    assert r.delete("metadata.labels.app") and not r.delete("metadata.labels.app")
    assert r.labels == {}


# resources ---------------------------------------------------------------------------------------
def test_identity_accessors() -> None:
    r = resource(DEPLOYMENT)
    assert (r.api_version, r.group, r.kind, r.name, r.namespace) == ("apps/v1", "apps", "Deployment", "web", "shop")
    assert r.ref == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}
    assert r.file == {"path": "apps/web.yaml", "index": 2}
    assert r.display == "Deployment shop/web"
    r.namespace = "prod"
    assert r.get("metadata.namespace") == "prod"
    r.namespace = None
    assert "namespace" not in r.data["metadata"] and r.display == "Deployment web"


def test_file_from_internal_annotations_and_missing_index() -> None:
    r = resource("""\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: c
          annotations: {internal.config.kubernetes.io/path: a/b.yaml}
        """)
    assert r.file == {"path": "a/b.yaml", "index": 0}
    assert resource("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n").file is None


def test_labels_and_annotations_helpers() -> None:
    r = resource("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    assert r.labels == {} and r.annotations == {}
    assert r.set_label("app.kubernetes.io/name", "shop") and r.set_annotation("note", "x")
    assert r.labels == {"app.kubernetes.io/name": "shop"} and r.annotations == {"note": "x"}
    assert not r.set_label("app.kubernetes.io/name", "shop")
    assert r.remove_annotation("note") and r.annotations == {}


def test_containers_with_paths_init_first() -> None:
    found = [(c.name, c.path, c.init) for c in resource(DEPLOYMENT).containers()]
    assert found == [
        ("init", "spec.template.spec.initContainers[name=init]", True),
        ("nginx", "spec.template.spec.containers[name=nginx]", False),
        ("", "spec.template.spec.containers[1]", False),
    ]
    assert [c.name for c in resource(DEPLOYMENT).containers(init=False)] == ["nginx", ""]
    nginx = next(resource(DEPLOYMENT).containers(init=False))
    assert nginx.field("resources", "limits", "cpu") == "spec.template.spec.containers[name=nginx].resources.limits.cpu"
    assert nginx.get("image") == "nginx:1.25"


@pytest.mark.parametrize("api_version, kind, template", [
    ("apps/v1", "Deployment", "spec.template"),
    ("apps/v1", "StatefulSet", "spec.template"),
    ("apps/v1", "DaemonSet", "spec.template"),
    ("apps/v1", "ReplicaSet", "spec.template"),
    ("v1", "ReplicationController", "spec.template"),
    ("batch/v1", "Job", "spec.template"),
    ("batch/v1", "CronJob", "spec.jobTemplate.spec.template"),
    ("v1", "Pod", ""),
])
def test_every_workload_kind_yields_its_containers(api_version: str, kind: str, template: str) -> None:
    pod = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    data: dict = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}}
    if template:
        paths.assign(data, template, pod)
    else:
        data.update(pod)
    r = sdk.Resource(data)
    assert r.is_workload and r.pod_labels == {"app": "x"}
    prefix = f"{template}." if template else ""
    assert [c.path for c in r.containers()] == [f"{prefix}spec.containers[name=c]"]


def test_custom_resources_reusing_a_workload_kind_are_not_workloads() -> None:
    r = resource("""\
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: v}
        spec: {template: {spec: {containers: [{name: c}]}}}
        """)
    assert not r.is_workload and list(r.containers()) == [] and r.pod_labels == {}


def test_plain_and_unmatched() -> None:
    node = load("b: 1 # c\na: [x, {y: 2}]\n")
    assert sdk.plain(node) == {"a": ["x", {"y": 2}], "b": 1} and type(sdk.plain(node)) is dict
    assert sdk.unmatched({"app": "web", "tier": "front"}, {"app": "web", "tier": "back"}) == {"tier": "front"}
    assert sdk.unmatched({"n": "1"}, {"n": 1}) == {}


# reading and writing ResourceLists --------------------------------------------------------------
RESOURCE_LIST = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap # first
  metadata:
    name: a
    annotations:
      config.kubernetes.io/path: 'a.yaml'
      config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'a.yaml'
      internal.config.kubernetes.io/index: '0'
  data:
    list:
    - one
    - two
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fn
  data:
    team: shop
"""


def test_untouched_resource_list_round_trips_byte_for_byte() -> None:
    assert sdk.ResourceList.parse(RESOURCE_LIST).dump() == RESOURCE_LIST


def test_resource_list_parts() -> None:
    rl = sdk.ResourceList.parse(RESOURCE_LIST)
    assert rl.shape == "ResourceList" and [r.name for r in rl.items] == ["a"]
    assert rl.function_config is not None and rl.function_config.name == "fn"


def test_added_and_removed_items_are_written() -> None:
    rl = sdk.ResourceList.parse(RESOURCE_LIST)
    rl.items.append(sdk.Resource(load("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")))
    rl.items.pop(0)
    out = new_yaml().load(rl.dump())
    assert [i["kind"] for i in out["items"]] == ["Secret"]


@pytest.mark.parametrize("text, expected", [
    ("a:\n  b:\n  - x\n", Style(2, 0)),
    ("a:\n    b:\n        c:\n            - x\n", Style(4, 4)),
    ("a:\n  b:\n    - x\n  c:\n    - y\n  d:\n  - z\n", Style(2, 2)),
    ("- a:\n    b:\n      - x\n", Style(2, 2)),
    ("a: 1\n", Style(2, 0)),
])
def test_guess_style(text: str, expected: Style) -> None:
    assert layout.guess_style(text) == expected


# What the orchestrator sends: each item keeps its file's style, head comments stand above the dash.
ORCHESTRATOR_LIST = """\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# Queue workers.
- apiVersion: apps/v1
  kind: StatefulSet
  metadata:
    name: worker # the name
  spec:
    template:
      spec:
        containers:
          # the worker
          - name: worker
            image: worker:1
            args: [--fast]

# Settings, from a file with unindented lists.
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data:
    hosts: |
      a.example.com
      - not a list item
  list:
  - one
  # between
  - two
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: fn
  data:
    team: shop
"""


def test_orchestrator_list_round_trips_byte_for_byte() -> None:
    rl = sdk.ResourceList.parse(ORCHESTRATOR_LIST)
    assert [r.name for r in rl.items] == ["worker", "settings"] and rl.function_config.name == "fn"
    assert rl.items[1].get("data.hosts") == "a.example.com\n- not a list item\n"
    assert rl.dump() == ORCHESTRATOR_LIST


def test_each_item_keeps_its_own_style_when_edited() -> None:
    rl = sdk.ResourceList.parse(ORCHESTRATOR_LIST)
    rl.items[0].set("spec.template.spec.containers[name=worker].ports", [{"containerPort": 80}])
    rl.items[1].get("list").append("three")
    rl.items.append(sdk.Resource(load("apiVersion: v1\nkind: Secret\nmetadata:\n  name: new\n")))
    out = rl.dump()
    assert "            args: [--fast]\n            ports:\n              - containerPort: 80\n" in out
    assert "  list:\n  - one\n  # between\n  - two\n  - three\n" in out
    assert out.startswith(ORCHESTRATOR_LIST.split("            args")[0])
    assert "- apiVersion: v1\n  kind: Secret\n" in out
    assert "# Settings, from a file with unindented lists.\n- apiVersion: v1\n" in out


def test_indented_items_of_other_tools_keep_their_columns() -> None:
    text = textwrap.dedent("""\
        apiVersion: config.kubernetes.io/v1
        kind: ResourceList
        items:
          # Queue workers.
          - apiVersion: apps/v1
            kind: StatefulSet
            metadata:
              name: worker # the name
            spec:
              containers:
                - name: w
          - apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings}
            list:
            - one
        """)
    rl = sdk.ResourceList.parse(text)
    assert [r.kind for r in rl.items] == ["StatefulSet", "ConfigMap"]
    assert rl.dump() == text


def test_flow_items_and_multi_document_lists_are_read_whole() -> None:
    flow = "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\n"
    rl = sdk.ResourceList.parse(flow)
    assert rl.shape == "List" and rl.items[0].name == "a" and rl.dump() == flow
    with_marker = "---\n" + RESOURCE_LIST
    assert [r.name for r in sdk.ResourceList.parse(with_marker).items] == ["a"]


def test_dump_twice_gives_the_same_text() -> None:
    rl = sdk.ResourceList.parse(ORCHESTRATOR_LIST)
    rl.error("once", rl.items[0])
    assert rl.dump() == rl.dump() and rl.dump().count("message: once") == 1


@pytest.mark.parametrize("style", ["- ", "  - "])
def test_output_keeps_the_sequence_indentation_it_read(style: str) -> None:
    text = RESOURCE_LIST.replace("    - one\n    - two", f"    {style}one\n    {style}two")
    rl = sdk.ResourceList.parse(text)
    rl.items[0].set("data.new", "x")
    assert re.search(rf"\n( *)list:\n\1{style}one\n\1{style}two\n", rl.dump())


def test_kind_list_comes_back_as_a_list() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n"
    rl = sdk.ResourceList.parse(text)
    assert rl.shape == "List" and rl.function_config is None
    rl.error("bad", rl.items[0])
    assert rl.dump() == text, "a List has no results field"


def test_bare_stream_comes_back_as_a_stream() -> None:
    text = "# first\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n"
    rl = sdk.ResourceList.parse(text)
    assert rl.shape == "stream" and [r.kind for r in rl.items] == ["ConfigMap", "Secret"]
    assert rl.dump() == text
    assert sdk.ResourceList.parse("").dump() == ""


def test_empty_resource_list() -> None:
    rl = sdk.ResourceList.parse("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
    assert rl.items == [] and rl.function_config is None
    only_config = sdk.ResourceList.parse("kind: ResourceList\nfunctionConfig: {kind: ConfigMap, data: {a: b}}\n")
    assert only_config.shape == "ResourceList" and only_config.items == []
    assert only_config.function_config.get("data.a") == "b"


@pytest.mark.parametrize("text, message", [
    ("a: [unclosed\n", "input is not valid YAML"),
    ("kind: ResourceList\nitems: 3\n", "`items` is not a list"),
    ("kind: ResourceList\nitems:\n- just a string\n", "item 0 is not a mapping"),
])
def test_bad_input_is_an_input_error(text: str, message: str) -> None:
    with pytest.raises(sdk.InputError, match=message):
        sdk.ResourceList.parse(text)


# typed config ------------------------------------------------------------------------------------
@dataclass
class Nested:
    port: int = 80


@dataclass
class Config:
    name: str
    replicas: int = 1
    enabled: bool = False
    ratio: float = 1.0
    hosts: list[str] = field(default_factory=list)
    annotation_name: str = "fnrun.dev/x"
    mode: Literal["fast", "safe"] = "safe"
    owner: str | None = None
    nested: Nested = field(default_factory=Nested)
    raw: Any = None


def config_from(text: str, cls: type = Config) -> Any:
    return sdk.load_config(resource(text), cls)


def test_config_map_strings_convert_to_field_types() -> None:
    cfg = config_from("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: c}
        data:
          name: web
          replicas: "3"
          enabled: "yes"
          ratio: "0.5"
          hosts: "a.example.com, b.example.com,"
          annotationName: fnrun.dev/y
          mode: fast
        """)
    assert cfg == Config(name="web", replicas=3, enabled=True, ratio=0.5, hosts=["a.example.com", "b.example.com"],
                         annotation_name="fnrun.dev/y", mode="fast")


def test_custom_resource_spec_with_nested_and_raw_nodes() -> None:
    cfg = config_from("""\
        apiVersion: fnrun.dev/v1
        kind: Thing
        metadata: {name: c}
        spec:
          name: web
          enabled: true
          hosts: [a, b]
          nested: {port: "8080"}
          raw:
            key: value # kept
          owner: null
        """)
    assert (cfg.name, cfg.enabled, cfg.hosts, cfg.nested, cfg.owner) == ("web", True, ["a", "b"], Nested(8080), None)
    assert "# kept" in dump(cfg.raw), "Any fields receive the YAML node with its comments"


def test_top_level_fields_when_there_is_no_spec() -> None:
    assert config_from("apiVersion: fn.dev/v1\nkind: SetThing\nmetadata: {name: c}\nname: top\n").name == "top"


def test_snake_case_keys_are_accepted_too() -> None:
    assert config_from("kind: X\nspec: {name: n, annotation_name: a}\n").annotation_name == "a"


@pytest.mark.parametrize("spec, message", [
    ("{}", "missing required config field 'name'"),
    ("{name: n, replicas: three}", "config field 'replicas': expected an integer, got 'three'"),
    ("{name: n, replicas: 1.5}", "config field 'replicas': expected an integer, got 1.5"),
    ("{name: n, enabled: maybe}", "config field 'enabled': expected true or false, got 'maybe'"),
    ("{name: n, ratio: x}", "config field 'ratio': expected a number"),
    ("{name: {a: 1}}", "config field 'name': expected a string, got a mapping"),
    ("{name: n, hosts: {a: 1}}", "config field 'hosts': expected a list, got a mapping"),
    ("{name: n, mode: slow}", "config field 'mode': expected one of fast, safe, got 'slow'"),
    ("{name: n, nested: {port: x}}", "config field 'nested.port': expected an integer"),
    ("{name: n, nested: {prot: 1}}", r"unknown config field nested.'prot' \(known: port\)"),
    ("{name: n, replica: 2}", "unknown config field 'replica'"),
    ("{name: null}", "config field 'name': a value is required"),
])
def test_bad_config_names_the_field(spec: str, message: str) -> None:
    with pytest.raises(sdk.ConfigError, match=message):
        config_from(f"kind: X\nspec: {spec}\n")


def test_missing_function_config() -> None:
    @dataclass
    class Optional_:
        size: int = 3

    assert sdk.load_config(None, Optional_) == Optional_()
    with pytest.raises(sdk.ConfigError, match="missing required config field 'name'"):
        sdk.load_config(None, Config)


@dataclass
class Labels:
    labels: dict[str, str] = sdk.rest()
    strict: bool = False


def test_rest_field_takes_unclaimed_keys() -> None:
    cm = config_from("kind: ConfigMap\napiVersion: v1\ndata: {app: web, tier: front, strict: 'true'}\n", Labels)
    assert cm == Labels({"app": "web", "tier": "front"}, strict=True)
    cr = config_from("kind: SetLabels\napiVersion: fn.dev/v1\nspec: {labels: {app: web}, env: prod}\n", Labels)
    assert cr == Labels({"app": "web", "env": "prod"})


# results -----------------------------------------------------------------------------------------
def test_result_schema() -> None:
    r = resource(DEPLOYMENT)
    result = sdk.Result("no cpu limit", "warning", r,
                        sdk.Field("spec.x", current_value=r.get("metadata.labels"), proposed_value="1"),
                        tags={"container": "nginx"})
    assert sdk.plain(result.to_yaml()) == {
        "message": "no cpu limit", "severity": "warning",
        "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"},
        "file": {"path": "apps/web.yaml", "index": 2},
        "field": {"path": "spec.x", "currentValue": {"app": "web"}, "proposedValue": "1"},
        "tags": {"container": "nginx"},
    }
    assert result.to_line() == "warning: Deployment shop/web: no cpu limit (field spec.x) [apps/web.yaml#2]"
    assert sdk.plain(sdk.Result("plain").to_yaml()) == {"message": "plain", "severity": "error"}


def test_bad_severity_is_refused() -> None:
    with pytest.raises(ValueError, match="severity"):
        sdk.Result("x", "fatal")  # type: ignore[arg-type]


def test_results_quote_item_values_without_aliases() -> None:
    rl = sdk.ResourceList.parse(RESOURCE_LIST)
    item = rl.items[0]
    rl.error("look", item, field=sdk.Field("data.list", current_value=item.get("data.list")))
    rl.info("fine")
    out = rl.dump()
    assert "&" not in out and "*" not in out
    results = new_yaml().load(out)["results"]
    assert [r["severity"] for r in results] == ["error", "info"]
    assert results[0]["field"]["currentValue"] == ["one", "two"] and results[0]["file"] == {"path": "a.yaml", "index": 0}
    assert rl.has_errors


# the process contract ---------------------------------------------------------------------------
def run(fn: Any, text: str, config: type | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = sdk.run(fn, config, stdin=io.StringIO(text), stdout=out, stderr=err, prog="t")
    return code, out.getvalue(), err.getvalue()


def test_run_success_keeps_annotations_and_comments() -> None:
    code, out, err = run(lambda rl: rl.items[0].set_label("x", "y"), RESOURCE_LIST)
    assert (code, err) == (0, "")
    assert "kind: ConfigMap # first" in out
    for key in ("config.kubernetes.io/path", "config.kubernetes.io/index",
                "internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index"):
        assert f"{key}: " in out
    assert sdk.ResourceList.parse(out).items[0].labels == {"x": "y"}


def test_run_error_result_prints_the_list_and_exits_1() -> None:
    code, out, err = run(lambda rl: rl.error("broken", rl.items[0]), RESOURCE_LIST)
    assert code == 1 and err == ""
    assert new_yaml().load(out)["results"][0]["message"] == "broken"


def test_run_warnings_exit_0() -> None:
    code, out, _ = run(lambda rl: rl.warning("hm"), RESOURCE_LIST)
    assert code == 0 and "severity: warning" in out


def test_run_config_error_is_one_line_and_no_output() -> None:
    @dataclass
    class Needs:
        count: int

    code, out, err = run(lambda rl, cfg: None, RESOURCE_LIST, Needs)
    assert (code, out) == (1, "")
    assert err == "t: unknown config field 'team' (known: count)\n"


def test_run_config_error_raised_by_the_function() -> None:
    def fn(rl: sdk.ResourceList) -> None:
        raise sdk.ConfigError("namespace 'A' is not valid")

    assert run(fn, RESOURCE_LIST) == (1, "", "t: namespace 'A' is not valid\n")


def test_run_bad_yaml_is_one_line() -> None:
    code, out, err = run(lambda rl: None, "a: [\n")
    assert code == 1 and out == "" and err.startswith("t: input is not valid YAML") and err.count("\n") == 1


def test_run_stream_input_reports_results_on_stderr() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
    code, out, err = run(lambda rl: rl.error("bad", rl.items[0], field="data"), text)
    assert (code, out) == (1, text)
    assert err == "t: error: ConfigMap a: bad (field data)\n"


def test_docstring_example_is_a_working_function(tmp_path: Path) -> None:
    example = re.search(r"\n\n(    from dataclasses.*?sdk\.main\(add_team, Config\)\n)", sdk.__doc__, re.S)
    assert example, "the module docstring carries the example"
    script = tmp_path / "add_team.py"
    script.write_text(textwrap.dedent(example.group(1)))
    assert len(script.read_text().strip().splitlines()) <= 25
    text = RESOURCE_LIST.replace("    team: shop", "    team: shop\n    requireLimits: 'true'").replace(
        "kind: ConfigMap # first", "kind: Pod # first").replace("  data:\n    list:", "  spec:\n    containers:\n    - name: app\n  data:\n    list:")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(script)], input=text, capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc.stderr
    out = new_yaml().load(proc.stdout)
    assert out["items"][0]["metadata"]["labels"] == {"team": "shop"}
    assert out["results"][0]["field"]["path"] == "spec.containers[name=app].resources.limits"


# ruamel.yaml as the images have it -----------------------------------------------------------------
def legacy_python() -> str:
    """A Python with ruamel.yaml 0.17.21 (bookworm's) and pytest, in a venv cached across runs."""
    if os.environ.get("FNRUN_LEGACY_PYTHON"):
        return os.environ["FNRUN_LEGACY_PYTHON"]
    venv = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "fnrun-tests" / f"ruamel-{LEGACY_RUAMEL}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", f"ruamel.yaml=={LEGACY_RUAMEL}", "pytest"],
                             capture_output=True, text=True)
        if pip.returncode != 0:
            python.unlink(missing_ok=True)
            pytest.skip(f"cannot install ruamel.yaml {LEGACY_RUAMEL}: {pip.stderr.strip()[-300:]}")
    return str(python)


@pytest.mark.skipif(ruamel.yaml.__version__ == LEGACY_RUAMEL, reason="already running under the legacy version")
def test_sdk_and_catalog_pass_under_bookworm_ruamel(fast_subset: bool) -> None:
    """Both files in the whole suite and CI; the SDK's own tests alone in the fast subset (the
    layer that meets ruamel's API; the catalog functions stand on it)."""
    python = legacy_python()
    version = subprocess.run([python, "-c", "import ruamel.yaml; print(ruamel.yaml.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == LEGACY_RUAMEL
    proc = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest", "-o", "addopts=",
         "tests/functions/test_sdk.py", *(() if fast_subset else ("tests/functions/test_catalog_functions.py",))],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"\d+ passed", proc.stdout)
