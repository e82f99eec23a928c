"""Suite-wide settings. testcontainers' reaper (Ryuk) image cannot be pulled where no registry is
reachable, so the suite runs without it (every container it starts is removed by its test).

The `engine` marker is given here to every test that needs the engine, and every other test runs
with the engine refused (tests/testing/engine_guard.py): `pytest -m "not engine"` is the fast
subset, true by construction."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import sizing, spread
from testing.engine_guard import REFUSAL, EngineGuard, deselects_engine, module_needs_engine, needs_engine
from testing.thread_guard import ThreadGuard, tasks

# The fixtures tests share, found by name as if defined here (a test never imports a fixture).
pytest_plugins = ["testing.pipeline_helpers", "testing.catalog", "testing.registry"]

# A suite started in the background of a non-interactive shell (`bash .ci/run &`) inherits SIGINT
# ignored, and an ignored signal stays ignored across exec: every fnrun the Ctrl-C tests start
# would then shrug off their SIGINT. Those tests stand for a user at a terminal, so give the suite
# (and through it its children) SIGINT's default handling back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
# The suite starts fnrun (a new interpreter) over a thousand times: where the environment says not
# to write bytecode (PYTHONDONTWRITEBYTECODE), each start compiles fnrun's modules anew, which
# doubles its cost. The suite writes it (in __pycache__, ignored by git), and so do its children.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
# Every test sees its functions really run; the result cache has tests of its own (test_cache.py).
os.environ["FNRUN_CACHE"] = "0"
# Every test of a catalog image sees the image itself run; in-process builtins have their own tests
# (test_builtin.py), which turn them back on.
os.environ["FNRUN_BUILTIN"] = "0"

# Property tests explore new random examples on every developer run; in CI (CI=true) they run a
# fixed, derandomized set, so a submission's result does not depend on the draw.
if os.environ.get("CI") == "true":
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True)
    settings.load_profile("ci")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A run that leaves out the engine's tests (`-m "not engine"`) skips the modules all of whose
    tests need it, unimported: they would all be deselected anyway."""
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_") and _leaves_out_engine(config) \
            and module_needs_engine(collection_path):
        return True
    return None


def _leaves_out_engine(config: pytest.Config) -> bool:
    if _leaves_out not in config.stash:
        config.stash[_leaves_out] = bool(config.option.markexpr) and deselects_engine(config.option.markexpr)
    return config.stash[_leaves_out]


_leaves_out = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(spread.SETTING, "processes the fast subset (-m 'not engine') spreads over: auto (one per core), a number, 0 (one process)", default="")


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Iterator[int | pytest.ExitCode]:
    """The fast subset spread over the cores (testing.spread), decided before xdist reads `-n`
    (a wrapper runs before xdist's hook however the two were loaded)."""
    _spread(config)
    return (yield)


def _spread(config: pytest.Config) -> None:
    if not config.pluginmanager.hasplugin("xdist") or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    here = config.invocation_params.dir
    try:
        count = spread.workers(str(config.getini(spread.SETTING)), _leaves_out_engine(config), config.option.numprocesses,
                               [str(here / arg) for arg in config.args], spread.cores())
    except ValueError as err:
        raise pytest.UsageError(str(err)) from None
    if count is not None:
        config.option.numprocesses = count
        if config.option.dist == "no":
            config.option.dist = "worksteal"  # test times differ a hundredfold: an idle worker takes from a busy one


def pytest_configure(config: pytest.Config) -> None:
    """Whether this run is the fast subset (`-m "not engine"`) outside CI, decided before any test
    module is imported: a test that repeats a round over generated or randomly timed input runs
    fewer rounds there (testing.sizing), for feedback in minutes; the whole suite and CI (CI=true,
    even with `-m "not engine"`) run them all."""
    sizing.decide(_leaves_out_engine(config) and os.environ.get("CI") != "true")


@pytest.fixture(scope="session")
def fast_subset() -> bool:
    """Whether this run is the fast subset outside CI (testing.sizing): fewer rounds there."""
    return sizing.fast()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("engine") is None and needs_engine(item.path, list(getattr(item, "fixturenames", ()))):
            item.add_marker("engine")


_guard: EngineGuard | None = None
_saved_host = pytest.StashKey[str | None]()
_threads = ThreadGuard()
_threads_before = pytest.StashKey[set[int]]()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest) -> Iterator[object]:
    """A thread a wide fixture (module, session) starts is that fixture's until its teardown."""
    before = tasks() if fixturedef.scope != "function" else None
    try:
        return (yield)
    finally:
        if before is not None:
            _threads.fixture_started(before, fixturedef.argname, fixturedef)


def _check(item: pytest.Item) -> None:
    calls = _guard.take() if _guard is not None else []
    if calls and item.get_closest_marker("engine") is None:
        pytest.fail(f"{REFUSAL}: it called the Docker Engine API ({', '.join(dict.fromkeys(calls))})", pytrace=False)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """A test not marked `engine` gets the guard's socket for DOCKER_HOST (before its fixtures)."""
    global _guard
    item.stash[_threads_before] = tasks()
    if item.get_closest_marker("engine") is None:
        if _guard is None:
            _guard = EngineGuard()
        _guard.take()
        item.stash[_saved_host] = os.environ.get("DOCKER_HOST")
        os.environ["DOCKER_HOST"] = _guard.host
    try:
        return (yield)
    finally:
        _check(item)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    finally:
        _check(item)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        result = yield
    finally:
        try:
            _check(item)
        finally:
            if _saved_host in item.stash:
                saved = item.stash[_saved_host]
                if saved is None:
                    os.environ.pop("DOCKER_HOST", None)
                else:
                    os.environ["DOCKER_HOST"] = saved
    _check_threads(item)
    return result


def _check_threads(item: pytest.Item) -> None:
    """Fail a test that leaves a thread running in this process once it and its fixtures are
    torn down (testing.thread_guard says why it matters)."""
    if _threads_before in item.stash and (left := _threads.left_behind(item.stash[_threads_before])):
        pytest.fail(f"this test left {len(left)} thread(s) running in the pytest process: {'; '.join(left)}", pytrace=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _guard is not None:
        _guard.close()
