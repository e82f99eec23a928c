"""The seeds' merge rules (2-way and 3-way), Kubernetes merge keys, resource matching, conflicts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.errors import InputError
from orchestrator.merge import MergeConflict, merge2, merge2_resources, merge3, merge3_resources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "merge"


def y(text: str) -> Any:
    return yaml.load(text, Loader=yaml.CSafeLoader)


def fixture(name: str) -> list:
    return list(yaml.load_all((FIXTURES / name).read_text(), Loader=yaml.CSafeLoader))


def deployment(containers: list, **spec: Any) -> dict:
    """A Deployment carrying `containers`, the shape most Kubernetes merge keys live in."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": containers, **spec}}},
    }


def containers_of(resource: dict) -> list:
    return resource["spec"]["template"]["spec"]["containers"]


# ------------------------------------------------------------------------------- 2-way: fields


def test_seed_deployment_example_gives_the_seed_result() -> None:
    [src], [dest], [expected] = fixture("seed-src.yaml"), fixture("seed-dest.yaml"), fixture("seed-result.yaml")
    assert merge2(src, dest) == expected


@pytest.mark.parametrize(
    ("src", "dest", "expected"),
    [
        ({"n": 5}, {"n": 3}, {"n": 5}),  # scalar: src wins
        ({}, {"n": 3}, {"n": 3}),  # scalar only in dest: kept
        ({"l": [1, 2, 3]}, {"l": ["a", "b", "c"]}, {"l": [1, 2, 3]}),  # plain list: replaced
        ({}, {"l": ["a"]}, {"l": ["a"]}),  # plain list only in dest: kept
        (
            {"key1": "value1", "key2": "value2"},
            {"key2": "value0", "key3": "value3"},
            {"key1": "value1", "key2": "value2", "key3": "value3"},
        ),  # maps: merged by key
        ({"m": {"a": {"b": 1}}}, {"m": {"a": {"c": 2}}}, {"m": {"a": {"b": 1, "c": 2}}}),  # recursively
    ],
)
def test_2way_field_rules(src: dict, dest: dict, expected: dict) -> None:
    assert merge2(src, dest) == expected


@pytest.mark.parametrize("cleared", [3, [1, 2], {"a": 1}], ids=["scalar", "list", "map"])
def test_2way_null_in_src_removes_the_field(cleared: Any) -> None:
    assert merge2({"f": None}, {"f": cleared, "keep": 1}) == {"keep": 1}


def test_2way_null_for_a_field_dest_lacks_adds_nothing() -> None:
    assert merge2({"f": None, "m": {"a": None, "b": 1}}, {}) == {"m": {"b": 1}}


def test_2way_plain_list_of_maps_without_keys_is_replaced() -> None:
    src, dest = {"l": [{"x": 1}]}, {"l": [{"x": 2}, {"x": 3}]}
    assert merge2(src, dest) == src


def test_2way_associative_list_pairs_elements() -> None:
    src = {"items": [{"name": "b", "v": 2}, {"name": "new1"}, {"name": "new2"}]}
    dest = {"items": [{"name": "a", "v": 1}, {"name": "b", "v": 0, "w": 9}]}
    assert merge2(src, dest) == {
        "items": [{"name": "a", "v": 1}, {"name": "b", "v": 2, "w": 9}, {"name": "new1"}, {"name": "new2"}]
    }


def test_2way_null_inside_an_associative_element_clears_that_field() -> None:
    src, dest = deployment([{"name": "web", "command": None}]), deployment([{"name": "web", "command": ["x"], "image": "i"}])
    assert containers_of(merge2(src, dest)) == [{"name": "web", "image": "i"}]


def test_2way_empty_associative_list_keeps_dest_elements() -> None:
    """Elements only in dest are kept, so only `null` clears an associative list."""
    dest = deployment([{"name": "web"}])
    assert containers_of(merge2(deployment([]), dest)) == [{"name": "web"}]


def test_2way_type_change_takes_src() -> None:
    assert merge2({"f": [1], "g": {"a": 1}, "h": 1}, {"f": {"a": 1}, "g": 3, "h": [2]}) == {"f": [1], "g": {"a": 1}, "h": 1}


def test_src_nulls_clear_even_when_src_replaces_a_list_wholesale() -> None:
    """dest's elements cannot pair with src's, so src's list replaces them; its nulls still clear,
    so merging the same src again changes nothing."""
    src = {"l": [{"name": "a", "x": None, "y": 1}]}
    assert merge2(src, {"l": [1, 2]}) == {"l": [{"name": "a", "y": 1}]}
    assert merge3({"l": [1]}, src, {"l": [1]}) == {"l": [{"name": "a", "y": 1}]}


def test_2way_whole_values() -> None:
    assert merge2(5, 3) == 5
    assert merge2(None, {"a": 1}) is None
    assert merge2({"a": 1}, None) == {"a": 1}


def test_yaml_types_are_not_conflated() -> None:
    """`true` and `1` are different values in YAML even though Python calls them equal."""
    assert merge3({"f": 1}, {"f": True}, {"f": 1}) == {"f": True}
    src = {"l": [{"name": "1", "v": "s"}]}
    assert merge2(src, {"l": [{"name": 1, "v": "i"}]}) == {"l": [{"name": 1, "v": "i"}, {"name": "1", "v": "s"}]}


def test_merges_never_mutate_their_inputs_nor_share_with_the_result() -> None:
    [src], [dest] = fixture("seed-src.yaml"), fixture("seed-dest.yaml")
    before = copy.deepcopy((src, dest))
    result = merge2(src, dest)
    containers_of(result)[0]["image"] = "changed"
    result3 = merge3(dest, src, dest)
    containers_of(result3)[1]["image"] = "changed"
    assert (src, dest) == before


# ------------------------------------------------------------------- Kubernetes merge keys (2-way)


@pytest.mark.parametrize(
    ("field", "dest_items", "src_items", "expected"),
    [
        (
            "env",
            [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            [{"name": "B", "value": "3"}],
            [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}],
        ),
        (
            "volumeMounts",  # two mounts of one volume: paired by mountPath, never by name
            [{"name": "data", "mountPath": "/a"}, {"name": "data", "mountPath": "/b"}],
            [{"name": "data", "mountPath": "/b", "readOnly": True}],
            [{"name": "data", "mountPath": "/a"}, {"name": "data", "mountPath": "/b", "readOnly": True}],
        ),
        (
            "volumeDevices",
            [{"name": "raw", "devicePath": "/dev/a"}, {"name": "raw", "devicePath": "/dev/b"}],
            [{"name": "raw2", "devicePath": "/dev/a"}],
            [{"name": "raw2", "devicePath": "/dev/a"}, {"name": "raw", "devicePath": "/dev/b"}],
        ),
        (
            "ports",  # a renamed port is the same port: paired by containerPort, not by name
            [{"name": "http", "containerPort": 80}],
            [{"name": "web", "containerPort": 80}],
            [{"name": "web", "containerPort": 80}],
        ),
        (
            "ports",  # one port number, two protocols: two ports, as the API server sees them
            [{"containerPort": 53, "protocol": "UDP", "name": "dns"}, {"containerPort": 53, "name": "dns-tcp"}],
            [{"containerPort": 53, "protocol": "TCP", "hostPort": 53}],
            [
                {"containerPort": 53, "protocol": "UDP", "name": "dns"},
                {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP", "hostPort": 53},
            ],
        ),
    ],
)
def test_container_fields_use_their_kubernetes_merge_key(field: str, dest_items: list, src_items: list, expected: list) -> None:
    dest = deployment([{"name": "web", field: dest_items}])
    src = deployment([{"name": "web", field: src_items}])
    assert containers_of(merge2(src, dest)) == [{"name": "web", field: expected}]


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("initContainers", "name"),
        ("ephemeralContainers", "name"),
        ("volumes", "name"),
        ("imagePullSecrets", "name"),
        ("hostAliases", "ip"),
        ("topologySpreadConstraints", "topologyKey"),
    ],
)
def test_pod_fields_use_their_kubernetes_merge_key(field: str, key: str) -> None:
    # Every element also carries a `type` the seed's key order would pick first.
    dest = deployment([], **{field: [{key: "k1", "type": "t", "x": 1}, {key: "k2", "type": "u"}]})
    src = deployment([], **{field: [{key: "k1", "type": "u", "x": 2}]})
    merged = merge2(src, dest)["spec"]["template"]["spec"][field]
    assert merged == [{key: "k1", "type": "u", "x": 2}, {key: "k2", "type": "u"}]


def test_conditions_merge_by_type() -> None:
    dest = {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Synced", "status": "True"}]}}
    src = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert merge2(src, dest)["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "Synced", "status": "True"},
    ]


def test_service_ports_merge_by_port_and_protocol() -> None:
    def service(ports: list) -> dict:
        return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dns"}, "spec": {"ports": ports}}

    dest = service([{"name": "dns", "port": 53, "protocol": "UDP"}, {"name": "dns-tcp", "port": 53, "protocol": "TCP"}])
    src = service([{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353}, {"port": 9153, "name": "metrics"}])
    assert merge2(src, dest)["spec"]["ports"] == [
        {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
        {"port": 9153, "name": "metrics"},
    ]


def test_unknown_list_is_associative_by_the_first_seed_key_all_elements_carry() -> None:
    dest = {"rules": [{"type": "a", "name": "x", "v": 1}, {"type": "b", "name": "y"}]}
    src = {"rules": [{"type": "a", "name": "renamed", "v": 2}]}
    assert merge2(src, dest) == {"rules": [{"type": "a", "name": "renamed", "v": 2}, {"type": "b", "name": "y"}]}


def test_unknown_list_skips_a_seed_key_that_repeats() -> None:
    """Printer columns share `type: string`; they are told apart by name."""
    dest = {"columns": [{"name": "Age", "type": "date"}, {"name": "Phase", "type": "string"}]}
    src = {"columns": [{"name": "Phase", "type": "string", "jsonPath": ".status.phase"}, {"name": "Ready", "type": "string"}]}
    assert merge2(src, dest) == {
        "columns": [
            {"name": "Age", "type": "date"},
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
            {"name": "Ready", "type": "string"},
        ]
    }


def test_list_with_an_element_lacking_every_key_is_plain() -> None:
    src, dest = {"l": [{"name": "a"}, {"other": 1}]}, {"l": [{"name": "b"}]}
    assert merge2(src, dest) == src


def test_known_field_whose_elements_lack_the_key_falls_back_to_the_seed_keys() -> None:
    dest = deployment([{"name": "web", "env": [{"type": "a", "v": 1}]}])
    src = deployment([{"name": "web", "env": [{"type": "a", "v": 2}, {"type": "b"}]}])
    assert containers_of(merge2(src, dest))[0]["env"] == [{"type": "a", "v": 2}, {"type": "b"}]


# -------------------------------------------------------------------------------- 2-way: conflicts


def test_duplicate_key_in_one_list_is_a_conflict_naming_the_element() -> None:
    dest = deployment([{"name": "nginx"}, {"name": "nginx", "image": "x"}])
    with pytest.raises(MergeConflict) as err:
        merge2(deployment([{"name": "nginx"}]), dest)
    message = str(err.value)
    assert "Deployment shop/web" in message and "spec.template.spec.containers[name=nginx]" in message
    assert "\n" not in message and err.value.exit_code == 2


def test_unknown_list_whose_every_key_repeats_is_a_conflict() -> None:
    with pytest.raises(MergeConflict, match=r"at items: .*\(type, name\)"):
        merge2({"items": [{"name": "a", "type": "t"}]}, {"items": [{"name": "a", "type": "t"}, {"name": "a", "type": "t"}]})


# ----------------------------------------------------------------------- placement annotations


def placed(resource: dict, path: str, index: str = "0") -> dict:
    resource = copy.deepcopy(resource)
    annotations = {
        "config.kubernetes.io/path": path,
        "config.kubernetes.io/index": index,
        "internal.config.kubernetes.io/path": path,
        "internal.config.kubernetes.io/index": index,
    }
    resource["metadata"]["annotations"] = {**resource["metadata"].get("annotations", {}), **annotations}
    return resource


def test_merged_resource_keeps_dest_path_and_index() -> None:
    dest = placed(deployment([]), "app/deploy.yaml", "2")
    src = placed(deployment([{"name": "web"}]), "upstream/other.yaml")
    assert merge2(src, dest)["metadata"] == dest["metadata"]
    assert merge3(src, src, dest)["metadata"] == dest["metadata"]


def test_src_placement_is_not_added_to_a_dest_without_one() -> None:
    assert merge2(placed(deployment([]), "a.yaml"), deployment([]))["metadata"] == {"name": "web", "namespace": "shop"}


def test_clearing_annotations_keeps_placement() -> None:
    dest = placed(deployment([]), "app/deploy.yaml")
    dest["metadata"]["annotations"]["team"] = "a"
    src = deployment([])
    src["metadata"]["annotations"] = None
    assert merge2(src, dest)["metadata"]["annotations"] == {
        k: v for k, v in dest["metadata"]["annotations"].items() if k != "team"
    }


# ------------------------------------------------------------------------- 2-way: resource lists


def configmap(name: str, namespace: str = "shop", **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def test_merge2_resources_matches_by_identity() -> None:
    dest = [configmap("a", x="1"), placed(configmap("b", x="1"), "app/b.yaml"), configmap("c", x="1")]
    src = [placed(configmap("new", y="2"), "src/new.yaml"), configmap("b", x="2"), configmap("a", "other")]
    merged = merge2_resources(src, dest)
    assert merged == [
        configmap("a", x="1"),
        placed(configmap("b", x="2"), "app/b.yaml"),
        configmap("c", x="1"),
        placed(configmap("new", y="2"), "src/new.yaml"),  # new to dest: keeps its source path
        configmap("a", "other"),  # another namespace is another resource
    ]


def test_merge2_resources_ignores_the_api_version_within_a_group() -> None:
    old = {"apiVersion": "apps/v1beta1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1}}
    new = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    assert merge2_resources([new], [old]) == [new]


@pytest.mark.parametrize("side", ["src", "dest"])
def test_duplicate_identity_in_one_list_is_an_input_error(side: str) -> None:
    twice = [placed(configmap("a"), "one.yaml"), placed(configmap("a"), "two.yaml")]
    lists = {"src": [configmap("a")], "dest": [configmap("a")], side: twice}
    with pytest.raises(InputError, match=r"ConfigMap shop/a \(one\.yaml\) and ConfigMap shop/a \(two\.yaml\)"):
        merge2_resources(lists["src"], lists["dest"])


# --------------------------------------------------------------------------------- 3-way: fields


@pytest.mark.parametrize(
    ("original", "updated", "dest", "expected"),
    [
        ({"f": 1}, {"f": 1}, {"f": 5}, {"f": 5}),  # unchanged upstream: keep dest
        ({"f": 1}, {"f": 2}, {"f": 5}, {"f": 2}),  # changed upstream: take updated
        ({}, {"f": 2}, {"f": 5}, {"f": 2}),  # added upstream
        ({"f": 1}, {}, {"f": 5}, {}),  # deleted upstream
        ({"f": 1}, {"f": 1}, {}, {}),  # deleted locally, unchanged upstream: stays deleted
        ({"f": 1}, {"f": 2}, {}, {"f": 2}),  # deleted locally, changed upstream: updated value
        ({}, {}, {"f": 5}, {"f": 5}),  # only in dest
        ({"f": 1}, {"f": None}, {"f": 5}, {}),  # null in updated clears
        ({"f": 1}, {"f": 1}, {"f": None}, {}),  # null in dest clears
        ({"f": None}, {}, {"f": 5}, {"f": 5}),  # a null original is an absent one
        ({"l": [1]}, {"l": [1]}, {"l": [9]}, {"l": [9]}),  # plain lists: as scalars
        ({"l": [1]}, {"l": [2]}, {"l": [9]}, {"l": [2]}),
        ({"l": [1]}, {"l": None}, {"l": [9]}, {}),
        ({"m": {"a": 1}}, {"m": None}, {"m": {"a": 1, "b": 2}}, {}),  # null clears maps too
    ],
)
def test_3way_scalar_and_list_rules(original: dict, updated: dict, dest: dict, expected: dict) -> None:
    assert merge3(original, updated, dest) == expected


def test_3way_maps() -> None:
    original = {"m": {"a": 1, "b": 1}, "gone": {"x": 1}, "kept": {"x": 1}, "dropped": {"x": 1, "y": 1}}
    updated = {"m": {"a": 2, "b": 1, "c": 3}, "kept": {"x": 1}, "dropped": {"x": 1, "y": 2}, "new": {"z": 1}}
    dest = {"m": {"a": 1, "b": 7, "d": 4}, "gone": {"x": 1, "local": 1}, "mine": {"q": 1}}
    assert merge3(original, updated, dest) == {
        "m": {"a": 2, "b": 7, "d": 4, "c": 3},  # recursed: upstream's change, dest's edit and addition
        "gone": {"local": 1},  # deleted upstream: only what dest added survives
        "mine": {"q": 1},  # only in dest
        "dropped": {"y": 2},  # deleted locally, changed upstream: only the delta comes back
        "new": {"z": 1},  # added upstream
    }


def test_3way_associative_lists() -> None:
    original = deployment([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}, {"name": "c", "image": "c:1", "tty": True}])
    updated = deployment([{"name": "new", "image": "n:1"}, {"name": "a", "image": "a:2"}, {"name": "c", "image": "c:2", "tty": True}])
    dest = deployment([{"name": "mine"}, {"name": "b", "image": "b:1"}, {"name": "a", "image": "a:1", "args": ["x"]}])
    assert containers_of(merge3(original, updated, dest)) == [
        {"name": "mine"},  # only in dest: kept in place
        {"name": "a", "image": "a:2", "args": ["x"]},  # recursively merged
        {"name": "new", "image": "n:1"},  # added upstream: appended in updated's order
        {"name": "c", "image": "c:2"},  # deleted locally, changed upstream: the delta, with its key
    ]  # b: deleted upstream, unchanged locally: gone


def test_3way_element_deleted_locally_and_unchanged_upstream_stays_deleted() -> None:
    original = deployment([{"name": "a"}, {"name": "b"}])
    assert containers_of(merge3(original, original, deployment([{"name": "a"}]))) == [{"name": "a"}]


def test_3way_without_original_merges_like_added_upstream() -> None:
    updated = deployment([{"name": "web", "image": "web:2"}], replicas=None)
    dest = deployment([{"name": "web", "image": "web:1", "tty": True}, {"name": "proxy"}], replicas=3)
    assert containers_of(merge3(None, updated, dest)) == [{"name": "web", "image": "web:2", "tty": True}, {"name": "proxy"}]


def test_3way_kind_changes() -> None:
    assert merge3({"f": 1}, {"f": {"a": 1}}, {"f": 1}) == {"f": {"a": 1}}  # only upstream changed it
    assert merge3({"f": 1}, {"f": 1}, {"f": [1]}) == {"f": [1]}  # only dest changed it
    assert merge3({"f": {"a": 1}}, {"f": 2}, {"f": [1]}) == {"f": 2}  # upstream's new scalar wins
    assert merge3({"f": 1}, {}, {"f": {"a": 1}}) == {}  # upstream deleted it


@pytest.mark.parametrize(("upstream", "local"), [({"a": 1}, ["x"]), (["x"], {"a": 1}), ({"a": 1}, "s")])
def test_3way_both_sides_turning_a_field_into_different_kinds_is_a_conflict(upstream: Any, local: Any) -> None:
    original = deployment([{"name": "nginx", "image": "nginx:1"}])
    updated = deployment([{"name": "nginx", "image": upstream}])
    dest = deployment([{"name": "nginx", "image": local}])
    with pytest.raises(MergeConflict, match=r"^Deployment shop/web: merge conflict at spec\.template\.spec\.containers\[name=nginx\]\.image: "):
        merge3(original, updated, dest)


def test_3way_duplicate_key_is_a_conflict() -> None:
    twice = deployment([{"name": "nginx"}, {"name": "nginx"}])
    with pytest.raises(MergeConflict, match=r"containers\[name=nginx\]"):
        merge3(twice, deployment([{"name": "nginx", "image": "x"}]), deployment([{"name": "nginx"}]))


# ------------------------------------------------------------------------- 3-way: resource lists


def test_merge3_resources_on_a_forked_package() -> None:
    merged = merge3_resources(fixture("original.yaml"), fixture("updated.yaml"), fixture("local.yaml"))
    assert merged == fixture("expected.yaml")


def test_merge3_resources_rules_one_by_one() -> None:
    original = [configmap("deleted"), configmap("edited"), configmap("kept", x="1"), configmap("removed-locally")]
    updated = [configmap("kept", x="2"), configmap("removed-locally", x="2"), configmap("added")]
    dest = [
        placed(configmap("deleted"), "a.yaml"),  # differs from original only by placement: unchanged
        configmap("edited", x="local"),
        configmap("kept", x="1", y="local"),
        configmap("local"),
    ]
    assert merge3_resources(original, updated, dest) == [
        configmap("edited", x="local"),  # deleted upstream but changed locally: kept
        configmap("kept", x="2", y="local"),
        configmap("local"),
        configmap("added"),
    ]


def test_merge3_resources_added_on_both_sides_merges_with_no_original() -> None:
    updated, dest = [configmap("both", x="up", y="up")], [configmap("both", x="local", z="local")]
    assert merge3_resources([], updated, dest) == [configmap("both", x="up", z="local", y="up")]


def test_merge3_resources_rejects_duplicate_identities() -> None:
    with pytest.raises(InputError, match="original: two resources are ConfigMap shop/a"):
        merge3_resources([configmap("a"), configmap("a")], [], [])


def test_merge3_resources_names_the_resource_in_conflicts() -> None:
    original, updated, dest = [configmap("a", x="1")], [configmap("a", x="1")], [configmap("a")]
    updated[0]["data"] = ["list"]
    dest[0]["data"] = {"y": "2"}
    with pytest.raises(MergeConflict, match=r"^ConfigMap shop/a: merge conflict at data: "):
        merge3_resources(original, updated, dest)
