"""The environment's switches (orchestrator.settings): read once at the edge, every bad value one
line naming its variable, and no module below reading them again."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from orchestrator import workers
from orchestrator.errors import InputError
from orchestrator.settings import DEFAULT_CACHE_SIZE, OFF, HelperPlace, Settings, cache_dir, chosen_workers, helper_place, switch
from tests.testing.pipeline_helpers import assert_one_line_error, fnrun

PACKAGE = Path(__file__).resolve().parents[1] / "orchestrator"
VARIABLES = {
    "cache": "FNRUN_CACHE", "cache_size": "FNRUN_CACHE_SIZE", "builtin": "FNRUN_BUILTIN",
    "builtin_handover": "FNRUN_BUILTIN_HANDOVER", "builtin_fork": "FNRUN_BUILTIN_FORK", "jobs": "FNRUN_JOBS", "warm": "FNRUN_WARM",
    "workers": "FNRUN_WORKERS", "builtin_catalog": "FNRUN_BUILTIN_CATALOG", "cache_dir": "FNRUN_CACHE_DIR",
    "helper": "FNRUN_WARM_HELPER",
}
#: Where a variable may still be named: the settings; the launcher, which decides before any
#: run's settings exist.
READERS = {"settings.py": set(VARIABLES.values()), "launch.py": set(VARIABLES.values())}


@given(st.one_of(st.none(), st.text(alphabet=" \t"), st.text()), st.booleans())
def test_a_switch_is_its_default_when_blank_off_when_spelled_off_else_on(value: str | None, default: bool) -> None:
    expected = default if value is None or not value.strip() else value.strip().lower() not in OFF
    assert switch(value, default) is expected


@given(st.sampled_from(OFF), st.sampled_from([str.upper, str.lower, str.title]), st.text(alphabet=" \t"))
def test_every_spelling_of_off_turns_a_switch_off(word: str, case: object, pad: str) -> None:
    assert switch(pad + case(word) + pad, True) is False  # type: ignore[operator]


def test_an_empty_environment_is_the_defaults() -> None:
    assert Settings.from_environ({}) == Settings()
    assert Settings().cache_size == DEFAULT_CACHE_SIZE and Settings().jobs is None and Settings().workers is None


def test_each_variable_sets_its_field() -> None:
    assert set(VARIABLES) == {f.name for f in fields(Settings)}
    read = Settings.from_environ({"FNRUN_CACHE": "off", "FNRUN_CACHE_SIZE": "2G", "FNRUN_BUILTIN": "0", "FNRUN_BUILTIN_HANDOVER": "no",
                                  "FNRUN_BUILTIN_FORK": "false", "FNRUN_JOBS": " 3 ", "FNRUN_WARM": "0", "FNRUN_WORKERS": "2",
                                  "FNRUN_BUILTIN_CATALOG": "yes", "FNRUN_CACHE_DIR": "/c", "FNRUN_WARM_HELPER": " /h/fnrun-warm ",
                                  "XDG_CACHE_HOME": "/x", "CC": "clang"})
    assert read == Settings(cache=False, cache_size=2 << 30, builtin=False, builtin_handover=False, builtin_fork=False, jobs=3, warm=False,
                            workers=2, builtin_catalog=True, cache_dir=Path("/c"), helper=HelperPlace("/h/fnrun-warm", Path("/x/fnrun"), "clang"))


@given(st.one_of(st.none(), st.text(alphabet=" \t"), st.text()))
def test_the_builtin_catalog_switch_is_spelled_as_every_switch(value: str | None) -> None:
    """One spelling of on and off for every switch: FNRUN_BUILTIN_CATALOG (off by default) too."""
    environ = {} if value is None else {"FNRUN_BUILTIN_CATALOG": value}
    assert Settings.from_environ(environ).builtin_catalog is switch(value, False)


def test_the_cache_and_the_helper_share_one_home() -> None:
    """FNRUN_CACHE_DIR moves the result cache alone; XDG_CACHE_HOME moves both (the warm helper is
    built there, whatever FNRUN_CACHE_DIR says)."""
    home = Path.home() / ".cache" / "fnrun"
    assert Settings().cache_dir == cache_dir({}) == home
    assert cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/fnrun")
    assert cache_dir({"XDG_CACHE_HOME": "/x", "FNRUN_CACHE_DIR": "/c"}) == Path("/c")
    assert Settings().helper.home == home and helper_place({"XDG_CACHE_HOME": "/x", "FNRUN_CACHE_DIR": "/c"}).home == Path("/x/fnrun")


@pytest.mark.parametrize(("variable", "value"), [("FNRUN_CACHE_SIZE", "lots"), ("FNRUN_JOBS", "many"), ("FNRUN_JOBS", "0"), ("FNRUN_JOBS", "-2"),
                                                 ("FNRUN_WORKERS", "many"), ("FNRUN_WORKERS", "0"), ("FNRUN_WORKERS", "-1"), ("FNRUN_WORKERS", "²")])
def test_a_bad_value_is_refused_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(InputError) as caught:
        Settings.from_environ({variable: value})
    assert str(caught.value).startswith(f"{variable}") and repr(value) in str(caught.value)


@pytest.mark.parametrize(("variable", "value"), [("FNRUN_CACHE_SIZE", "lots"), ("FNRUN_WORKERS", "all")])
def test_the_command_line_refuses_a_bad_value_before_it_runs_anything(variable: str, value: str, tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    before = (tmp_path / "cm.yaml").read_bytes()
    assert_one_line_error(fnrun("run", str(tmp_path), "--exec", "true", "--allow-exec", env={variable: value}), variable, code=2)
    assert (tmp_path / "cm.yaml").read_bytes() == before


@pytest.mark.parametrize("command", [("source",), ("sink",), ("list",), ("merge", "SRC"), ("lock", "--check")])
def test_a_command_that_runs_no_function_refuses_a_bad_worker_count_at_its_edge(command: tuple[str, ...], tmp_path: Path) -> None:
    """`fnrun source`, `sink`, `list`, `merge` and `lock` read packages (on every core when big):
    FNRUN_WORKERS is parsed where each starts and handed down, so a bad one is refused as `run`
    refuses it, whatever the package's size, and the package is untouched."""
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (tmp_path / "SRC").mkdir()
    before = (tmp_path / "cm.yaml").read_bytes()
    args = [str(tmp_path / "SRC") if word == "SRC" else word for word in command[1:]]
    stdin = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n" if command[0] == "sink" else None
    result = fnrun(command[0], *args, str(tmp_path), stdin=stdin, cwd=tmp_path, env={"FNRUN_WORKERS": "all"})
    assert_one_line_error(result, "FNRUN_WORKERS", code=2)
    assert (tmp_path / "cm.yaml").read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["SRC", "cm.yaml"]


@given(st.one_of(st.text(), st.integers(-3, 10**6).map(str)), st.text(alphabet=" \t"))
def test_a_worker_count_is_read_as_a_job_count_is(text: str, pad: str) -> None:
    """FNRUN_WORKERS and FNRUN_JOBS are both a whole number of at least 1: one parser says what
    each accepts, and what the edge refuses is what `workers.count` could not take."""
    def read(variable: str) -> int | None | str:
        try:
            got = Settings.from_environ({variable: pad + text + pad})
        except InputError as refused:
            assert str(refused).startswith(f"{variable} {text.strip()!r}:")
            return "refused"
        return got.workers if variable == "FNRUN_WORKERS" else got.jobs

    assert read("FNRUN_WORKERS") == read("FNRUN_JOBS")


def test_workers_count_takes_the_value_the_edge_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_WORKERS", " 3 ")
    assert workers.count(1, 10**9, Settings.from_environ().workers) == chosen_workers() == 3
    monkeypatch.setenv("FNRUN_WORKERS", "three")
    assert workers.count(1, 10**9, None) == 1  # below the edge nothing reads the variable
    with pytest.raises(InputError, match="^FNRUN_WORKERS 'three': "):
        chosen_workers()


def _named(source: str) -> set[str]:
    """The variables a module names as a whole string in its code (not in docstrings or messages)."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in VARIABLES.values() and id(node) not in docstrings}


def test_no_module_below_the_edge_reads_a_switch() -> None:
    found = {str(path.relative_to(PACKAGE)): _named(path.read_text()) for path in sorted(PACKAGE.rglob("*.py"))}
    assert {where: names - READERS.get(where, set()) for where, names in found.items() if names - READERS.get(where, set())} == {}
    assert found["settings.py"] == set(VARIABLES.values())
