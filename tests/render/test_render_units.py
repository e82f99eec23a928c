"""The pure parts of `fnrun render`: image names and tag constraints, Kptfile parsing, order."""

import pytest

from orchestrator.errors import InputError
from orchestrator.render import packages
from orchestrator.render.images import DEFAULT_PREFIX, best_match, image_prefix, is_constraint, resolve
from orchestrator.render.kptfile import parse
from orchestrator.resource import Resource


def test_short_names_prefix_and_latest(monkeypatch):
    monkeypatch.setenv("KPT_IMAGE_PREFIX", "reg.example/fns")  # read by the option schema at the edge, never here
    assert resolve("set-labels", None, image_prefix(None), "K") == DEFAULT_PREFIX + "set-labels:latest"
    assert resolve("set-labels:v1", None, image_prefix("fnrun"), "K") == "fnrun/set-labels:v1"
    assert resolve("a.io/x/y", None, DEFAULT_PREFIX, "K") == "a.io/x/y:latest"
    assert resolve("localhost:5000/x", None, DEFAULT_PREFIX, "K") == "localhost:5000/x:latest"
    assert resolve("x/y:v1", "v2", DEFAULT_PREFIX, "K") == "x/y:v2"
    assert image_prefix("reg.example/fns") == "reg.example/fns/" and image_prefix("mine/") == "mine/"


def test_versions_are_literal_tags_constraints_are_not():
    assert not is_constraint("v0.4.1") and not is_constraint("0.4") and not is_constraint("latest")
    assert is_constraint("~0.4") and is_constraint("^1") and is_constraint(">=1, <2") and is_constraint("1.2.x")
    with pytest.raises(InputError, match="neither"):
        resolve("x/y", "bad tag!", DEFAULT_PREFIX, "K")


@pytest.mark.parametrize("constraint, expected", [
    ("~0.4", "v0.4.3"), ("^0.4", "v0.4.3"), ("^1", "1.9.1"), (">=1, <2", "1.9.1"), ("1.2.x", "1.2.0"),
    ("<1 || >=2", "v2.0.0"), ("0.4.1 - 0.4.3", "v0.4.3"), ("0.4 - 1.2", "1.2.0"), ("0.4.2 - 0.4", "v0.4.3"), ("=0.4.1", "v0.4.1"), (">=3", None),
])
def test_best_match_picks_the_highest_satisfying_release(constraint, expected):
    tags = ["v0.4.1", "v0.4.3", "v0.5.0-rc1", "1.2.0", "1.9.1", "v2.0.0", "latest", "sha256-abc"]
    assert best_match(constraint, tags, "K") == expected


def kf(path, pipeline=None, annotations=None, api="kpt.dev/v1"):
    data = {"apiVersion": api, "kind": "Kptfile", "metadata": {"name": "x", "annotations": annotations or {}}}
    if pipeline is not None:
        data["pipeline"] = pipeline
    return Resource(data | {"metadata": data["metadata"] | {"annotations": {**(annotations or {}), "config.kubernetes.io/path": path}}})


@pytest.mark.parametrize("pipeline, needle", [
    ({"mutators": [{"image": "a", "exec": "b"}]}, "exactly one of image or exec"),
    ({"mutators": [{}]}, "exactly one of image or exec"),
    ({"mutators": [{"image": "a", "configMap": {}, "configPath": "x.yaml"}]}, "only one of configPath"),
    ({"mutators": [{"image": "a", "imagePullPolicy": "x"}]}, "unknown key 'imagePullPolicy'"),
    ({"mutators": {"image": "a"}}, "must be a list"),
    ({"mutator": []}, "unknown key 'mutator'"),
    ({"mutators": [{"image": "a", "configPath": "/etc/x"}]}, "relative"),
    ({"mutators": [{"image": "a", "selectors": [{"kinds": "X"}]}]}, "selectors[0]"),
])
def test_kptfile_mistakes_name_the_step(pipeline, needle):
    with pytest.raises(InputError) as err:
        parse(kf("app/Kptfile", pipeline))
    assert str(err.value).startswith("app/Kptfile") and needle in str(err.value)


def test_wrong_api_version_is_refused():
    with pytest.raises(InputError, match="kpt.dev/v1"):
        parse(kf("Kptfile", api="kpt.dev/v1alpha1"))


def test_depth_first_and_breadth_first_order():
    paths = ["Kptfile", "b/Kptfile", "a/Kptfile", "a/x/y/Kptfile", "a/z/Kptfile"]
    found = packages.kptfiles([kf(p) for p in paths])
    assert [k.path for k in packages.order(found)] == ["a/x/y/Kptfile", "a/z/Kptfile", "a/Kptfile", "b/Kptfile", "Kptfile"]
    found = packages.kptfiles([kf(p, annotations={"kpt.dev/bfs-rendering": "true"} if p == "Kptfile" else None) for p in paths])
    assert [k.path for k in packages.order(found)] == ["Kptfile", "a/Kptfile", "b/Kptfile", "a/x/y/Kptfile", "a/z/Kptfile"]


def test_a_directory_of_packages_renders_its_top_level_packages_and_needs_one_kptfile():
    found = packages.kptfiles([kf("b/Kptfile"), kf("a/Kptfile"), kf("a/sub/Kptfile")])
    assert [k.path for k in packages.order(found)] == ["a/sub/Kptfile", "a/Kptfile", "b/Kptfile"]
    with pytest.raises(InputError, match="no Kptfile at the package root or below"):
        packages.kptfiles([])
