"""The dataclass methods' kept code (orchestrator.methodcode): a class made from kept code is the
class `dataclasses` makes by compiling its text (generated classes, every flag, compared by what
they do); a second start compiles nothing; a file it cannot use is ignored; nothing is written
where Python writes no bytecode; and the `fnrun` command keeps and reuses it."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator import methodcode
from testing.pipeline_helpers import REPO
from testing.sizing import examples


@contextmanager
def kept_at(path: Path) -> Iterator[methodcode.Kept]:
    """A Kept on `path` in front of dataclasses' compiler for the block, as install() puts it."""
    kept = methodcode.Kept(str(path))
    dataclasses.exec = kept  # type: ignore[attr-defined]
    try:
        yield kept
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]  # the builtin again


NAMES = st.lists(st.sampled_from(["a", "b", "name", "value", "items", "x1"]), min_size=0, max_size=5, unique=True)
FLAGS = st.fixed_dictionaries({"frozen": st.booleans(), "eq": st.booleans(), "order": st.booleans(), "repr": st.booleans(),
                               "unsafe_hash": st.booleans(), "kw_only": st.booleans(), "slots": st.booleans()})


def make(names: list[str], defaults: int, flags: dict[str, Any]) -> type:
    """A dataclass with `names` as int fields, the last `defaults` of them with a default (one a
    factory), under `flags` (order needs eq)."""
    flags = {**flags, "order": flags["order"] and flags["eq"]}
    namespace: dict[str, Any] = {"__annotations__": {name: int for name in names}, "__module__": __name__}
    for index, name in enumerate(names[len(names) - defaults:]):
        namespace[name] = dataclasses.field(default_factory=lambda: 7) if index == 0 else index
    return dataclasses.dataclass(**flags)(type("Made", (), namespace))


def behaviour(cls: type, names: list[str]) -> dict[str, Any]:
    """What a class does, in values: construction, repr, equality, order, hash, assignment."""
    fields = [f.name for f in dataclasses.fields(cls)]
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    one, two = cls(**{name: 1 for name in required}), cls(**{name: 2 for name in required})
    own_repr = cls.__repr__ is not object.__repr__
    seen: dict[str, Any] = {"fields": fields, "repr": repr(one) if own_repr else "object's", "eq": one == two, "self_eq": one == one,
                            "values": [getattr(one, name) for name in fields], "init": dict(cls.__init__.__annotations__),
                            "match_args": getattr(cls, "__match_args__", None), "has_hash": cls.__hash__ is not None}
    seen["hash"] = hash(one) == hash(cls(**{name: 1 for name in required})) if cls.__hash__ is not None else None
    try:
        seen["lt"] = one < two
    except TypeError:
        seen["lt"] = "TypeError"
    for name in fields[:1]:
        try:
            setattr(one, name, 5)
            seen["set"] = getattr(one, name)
        except dataclasses.FrozenInstanceError:
            seen["set"] = "frozen"
    return seen


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=NAMES, defaults=st.integers(0, 5), flags=FLAGS)
def test_a_class_from_kept_code_is_the_class_dataclasses_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: list[str], defaults: int,
                                                                  flags: dict[str, Any]) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as an installed fnrun runs (the suite's shell sets PYTHONDONTWRITEBYTECODE)
    defaults = min(defaults, len(names))
    path = tmp_path / "kept.bin"
    path.unlink(missing_ok=True)
    compiled = behaviour(make(names, defaults, flags), names)
    with kept_at(path) as first:
        assert behaviour(make(names, defaults, flags), names) == compiled
        assert first.new, "the first maker compiles the methods' text"
        first.save()
    with kept_at(path) as second:
        assert behaviour(make(names, defaults, flags), names) == compiled
        assert second.new == {}, "a second start compiles nothing the first kept"


def test_a_file_it_cannot_use_is_ignored(tmp_path: Path) -> None:
    """Empty, not marshal, cut short, another interpreter's header, not a table of code."""
    path = tmp_path / "kept.bin"
    expected = behaviour(make(["a", "b"], 1, {"frozen": True, "eq": True, "order": False, "repr": True, "unsafe_hash": False,
                                              "kw_only": False, "slots": False}), ["a", "b"])
    for content in (b"", b"not marshal", methodcode._header() + b"\xff\xfe", b"\0\0\0\0" + b"rest",
                    methodcode._header() + __import__("marshal").dumps({"text": 3})):
        path.write_bytes(content)
        with kept_at(path) as kept:
            assert kept.known == {}
            made = make(["a", "b"], 1, {"frozen": True, "eq": True, "order": False, "repr": True, "unsafe_hash": False, "kw_only": False,
                                        "slots": False})
            assert behaviour(made, ["a", "b"]) == expected and kept.new


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "kept.bin"
    with kept_at(path) as kept:
        make(["a"], 0, {"frozen": True, "eq": True, "order": False, "repr": True, "unsafe_hash": False, "kw_only": False, "slots": False})
        kept.save()
    assert not path.exists()


def fnrun(*args: str, prefix: Path) -> subprocess.CompletedProcess[str]:
    """`python -m orchestrator ARGS` as the `fnrun` script runs it, writing bytecode under `prefix`."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(prefix), PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)


def test_the_fnrun_command_keeps_the_code_and_reuses_it(tmp_path: Path) -> None:
    first = fnrun("--help", prefix=tmp_path)
    assert first.returncode == 0, first.stderr
    [kept] = tmp_path.rglob("dataclass-methods.*.bin")
    before = kept.stat()
    second = fnrun("--help", prefix=tmp_path)
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, first.stderr)
    after = kept.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), "nothing new to keep: not written again"
    assert len(methodcode._load(str(kept))) > 50
