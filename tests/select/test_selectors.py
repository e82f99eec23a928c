"""kpt's selector semantics (pkg/fn/runtime/utils.go), checked on plain resources."""

import pytest

from orchestrator.errors import InputError
from orchestrator.resource import Resource
from orchestrator.select import Selector, selected


def res(kind="Deployment", name="web", api="apps/v1", namespace=None, labels=None, annotations=None):
    meta = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return Resource({"apiVersion": api, "kind": kind, "metadata": meta})


def test_from_dict_reads_kptfile_keys():
    s = Selector.from_dict(
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod",
         "labels": {"app": "web"}, "annotations": {"a": "b"}}, "Kptfile")
    assert s == Selector("apps/v1", "Deployment", "web", "prod", {"app": "web"}, {"a": "b"})


def test_unknown_key_names_the_place():
    with pytest.raises(InputError, match=r"^pkg/Kptfile: pipeline.mutators\[0\].*unknown selector field 'labelz'"):
        Selector.from_dict({"labelz": {}}, "pkg/Kptfile: pipeline.mutators[0]")


@pytest.mark.parametrize("bad", [["kind"], "Deployment", {"labels": ["a"]}, {"kind": {"a": 1}}])
def test_malformed_selectors_are_input_errors(bad):
    with pytest.raises(InputError, match="^Kptfile"):
        Selector.from_dict(bad, "Kptfile")


def test_yaml_scalars_compare_as_kpt_strings():
    s = Selector.from_dict({"labels": {"skip": True, "n": 3}}, "K")
    assert s.labels == {"skip": "true", "n": "3"}
    assert s.matches(res(labels={"skip": True, "n": 3}))
    assert s.matches(res(labels={"skip": "true", "n": "3"}))


def test_fields_within_one_selector_are_anded():
    s = Selector(kind="Deployment", name="web")
    assert s.matches(res())
    assert not s.matches(res(name="db"))
    assert not s.matches(res(kind="Service"))


def test_api_version_is_compared_whole():
    assert Selector(api_version="apps/v1").matches(res())
    assert not Selector(api_version="apps").matches(res())
    assert not Selector(api_version="v1").matches(res())


def test_namespace_exact_and_unset_matches_any():
    assert Selector(namespace="prod").matches(res(namespace="prod"))
    assert not Selector(namespace="prod").matches(res())
    assert Selector(kind="Deployment").matches(res(namespace="prod"))
    assert Selector(kind="Deployment").matches(res())


def test_labels_and_annotations_all_must_hold():
    s = Selector(labels={"app": "web", "tier": "fe"})
    assert s.matches(res(labels={"app": "web", "tier": "fe", "x": "y"}))
    assert not s.matches(res(labels={"app": "web"}))
    assert not s.matches(res(labels={"app": "web", "tier": "be"}))
    assert not s.matches(res())
    assert Selector(annotations={"a": "1"}).matches(res(annotations={"a": "1"}))
    assert not Selector(annotations={"a": "1"}).matches(res(annotations={"a": "2"}))


def test_selected_ors_selectors_and_applies_exclusions():
    dep, svc, cm = res(), res(kind="Service"), res(kind="ConfigMap", labels={"skip": "true"})
    sels = [Selector(kind="Deployment"), Selector(kind="ConfigMap")]
    assert [selected(r, sels, []) for r in (dep, svc, cm)] == [True, False, True]
    assert [selected(r, [], []) for r in (dep, svc, cm)] == [True, True, True]
    excl = [Selector(labels={"skip": "true"})]
    assert [selected(r, [], excl) for r in (dep, svc, cm)] == [True, True, False]
    assert [selected(r, sels, excl) for r in (dep, svc, cm)] == [True, False, False]


def test_empty_exclusion_excludes_nothing_empty_selector_selects_all():
    r = res()
    assert selected(r, [], [Selector()])
    assert selected(r, [Selector()], [])


def test_malformed_metadata_does_not_crash():
    r = Resource({"kind": "X", "metadata": "oops"})
    assert not Selector(name="x").matches(r)
    assert Selector(kind="X").matches(r)
