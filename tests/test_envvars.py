"""The functionConfig → environment / flags rules of `fnrun wrap` and `fnrun xargs` (orchestrator.envvars)."""

from __future__ import annotations

import pytest

from orchestrator import envvars


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (("replicas",), "REPLICAS"),
        (("maxSurge",), "MAX_SURGE"),
        (("HTTPPort",), "HTTP_PORT"),
        (("cpuLimitMB",), "CPU_LIMIT_MB"),
        (("port80Name",), "PORT80_NAME"),
        (("resources", "cpuLimit"), "RESOURCES_CPU_LIMIT"),
        (("log-level",), "LOG_LEVEL"),
        (("app.properties",), "APP_PROPERTIES"),
        (("2fast",), "_2FAST"),
    ],
)
def test_env_names(path: tuple[str, ...], name: str) -> None:
    assert envvars.env_name(path) == name


@pytest.mark.parametrize(
    ("value", "text"),
    [(5, "5"), (1.5, "1.5"), (float("inf"), ".inf"), (False, "false"), (None, ""), ("a b", "a b"), ({"k": [1]}, '{"k":[1]}')],
)
def test_values_are_spelled_as_yaml_would(value: object, text: str) -> None:
    assert envvars.scalar_text(value) == text


def test_a_later_field_with_the_same_name_wins() -> None:
    config = {"metadata": {"name": "meta"}, "spec": {"name": "spec", "a": {"b": 1}, "aB": 2}}
    assert envvars.environment(config) == {"NAME": "spec", "A_B": "2"}


def test_fields_come_from_metadata_spec_and_data_only() -> None:
    config = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {"x": 1}, "data": {"y": "2"}, "status": {"z": 3}}
    assert envvars.environment(config) == {"NAME": "n", "X": "1", "Y": "2"}
    assert envvars.flags(config) == ["--name=n", "--x=1", "--y=2"]
    assert envvars.environment(None) == {} and envvars.flags("not a map") == []  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "protected"), [("PATH", True), ("LD_PRELOAD", True), ("HOME", True), ("NAME", False), ("PATHS", False)])
def test_protected_names(name: str, protected: bool) -> None:
    assert envvars.protected(name) is protected
