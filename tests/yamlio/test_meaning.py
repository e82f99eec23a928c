"""Values that changed only in how a YAML 1.1 reader (or JSON's string keys) read them keep the
original's value; real changes beside them stay changes."""

from __future__ import annotations

import json

import pytest
import yaml

from orchestrator.yamlio import fast, meaning

TEXT = "spec:\n  mode: 0400\n  period: 1:20\n  big: 1_000\n  on: yes\n  quoted: '0400'\n  octal12: 0o17\ndata:\n  404: |\n    not found\n  true: x\n  1.5: y\n"


def test_a_yaml_1_1_and_json_reading_is_no_change() -> None:
    old = fast.load(TEXT, "t")
    read = json.loads(json.dumps(yaml.safe_load(TEXT)))  # 1.1, keys through JSON
    assert read != old
    assert meaning.kept(read, old, TEXT) == old


@pytest.mark.parametrize(
    ("path", "value"),
    [(("spec", "mode"), 257), (("spec", "big"), 1001), (("spec", "quoted"), 256), (("spec", "on"), False), (("data", "404"), "found")],
)
def test_real_changes_stay(path: tuple[str, str], value: object) -> None:
    old = fast.load(TEXT, "t")
    read = json.loads(json.dumps(yaml.safe_load(TEXT)))
    key = "true" if path[1] == "on" else path[1]
    read[path[0]][key] = value
    kept = meaning.kept(read, old, TEXT)
    assert kept != old
    assert value in kept[path[0]].values()


def test_nothing_is_parsed_when_no_difference_could_be_a_readings() -> None:
    old = {"spec": {"replicas": 2, "labels": {"a": "b"}}}
    new = {"spec": {"replicas": 3, "labels": {"a": "b", "c": "d"}}}
    assert meaning.kept(new, old, "not: [yaml") is new
