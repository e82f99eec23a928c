"""Builtins in a fork of the fork server: the same protocol, limits and clean-up as a child
interpreter.

The catalog's behaviour in a fork is checked against the images in test_builtin.py; here, probe
modules do what catalog code never does (hang, exhaust memory, crash, read the environment) to
show the fork is held to the timeout, the memory limit and a clean environment, and reaped.
Each test gets a fresh server, forked from this process as it then is (patches included). A test
that needs the server forked (a fault patched into it) runs in a fork of the test process
(`alone`): one thread there, whatever earlier tests left running in this one."""

from __future__ import annotations

import functools
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError
from orchestrator.runtimes.host import forked
from orchestrator.runtimes.host.exec import run_process
from orchestrator.runtimes.host.sources import FUNCTIONS_DIR
from orchestrator.runtimes.protocol import Invocation, ItemsOutput, Sandbox
from testing.in_process import in_a_fork
from testing.processes import gone_within
from testing.stress import descendants

PROBE = '''
import os, sys
if __name__ == "__main__":
    what = sys.argv[1]
    if what == "echo":
        sys.stdout.write(sys.stdin.read().upper())
        print("args", sys.argv[2:], file=sys.stderr)
    elif what == "env":
        print(sorted(os.environ), os.getcwd())
    elif what == "hang":
        while True:
            pass
    elif what == "hog":
        hoard = [bytearray(1 << 20) for _ in range(4096)]
    elif what == "crash":
        raise RuntimeError("boom")
    elif what == "exit":
        sys.exit(3)
    elif what == "write":
        open(sys.argv[2], "w").write("x")
    elif what == "linger":
        os.close(1)
        os.close(2)
        while True:
            pass
'''


SERVER = forked.ForkServer()  # this module's, as a run's registry holds one


@pytest.fixture(autouse=True)
def fresh_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh server for each test, forked however big earlier tests left this process's heap
    (FORK_BELOW is the product's choice for fnrun's own heap, not the subject here; the test of
    the other way sets it to 0). Where this process has other threads (pytest-xdist's, in a worker
    of the fast subset) the server is a new interpreter: a test that needs it forked is `alone`."""
    monkeypatch.setattr(forked, "FORK_BELOW", 1 << 62)
    SERVER.stop()
    yield
    SERVER.stop()


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"fnrun_fork_probe_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def run(module: str, *args: str, stdin: bytes = b"", timeout: float = 30, cwd: str = "/"):
    invocation = Invocation(name=f"builtin {module}", args=tuple(args), sandbox=Sandbox(timeout=timeout))
    env = {"PATH": os.defpath, "ONLY_THIS": "1"}
    lines: list[str] = []
    spawn = lambda: SERVER.spawn(module, list(args), env, cwd, 256 << 20)  # noqa: E731
    output = run_process([], invocation, env, cwd, stdin, lines.append, spawn=spawn)
    return output, lines


def no_zombies() -> bool:
    """No child is left: this process has only the server, and the server none."""
    return all(pid == SERVER._server.pid for pid in descendants(os.getpid())) if SERVER._server else not descendants(os.getpid())


def test_the_child_sees_only_its_environment_and_directory(probe: str, tmp_path: Path) -> None:
    output, _ = run(probe, "env", cwd=str(tmp_path))
    assert output.stdout.decode().strip() == f"['ONLY_THIS', 'PATH'] {tmp_path}"


def test_a_runaway_fork_is_killed_at_the_timeout(probe: str) -> None:
    with pytest.raises(FunctionError, match="timed out after 0.5s"):
        run(probe, "hang", timeout=0.5)
    assert no_zombies()


def test_a_fork_that_closes_its_pipes_and_lingers_is_killed_at_the_timeout(probe: str) -> None:
    """The pipes end, the process does not: waiting for it is held to the same deadline."""
    with pytest.raises(FunctionError, match="timed out after 0.5s"):
        run(probe, "linger", timeout=0.5)
    assert no_zombies()


def test_memory_beyond_the_limit_is_refused(probe: str) -> None:
    output, lines = run(probe, "hog")
    assert output.exit_code == 1 and lines[-1] == "MemoryError"


def test_a_crash_is_the_interpreter_s_traceback_and_exit_1(probe: str) -> None:
    output, lines = run(probe, "crash")
    assert output.exit_code == 1 and lines[-1] == "RuntimeError: boom"
    assert run(probe, "exit")[0].exit_code == 3


def test_the_file_system_is_read_only_to_the_fork(probe: str, tmp_path: Path) -> None:
    from orchestrator.runtimes.host.confine import available

    if not available():
        pytest.skip("this kernel refuses the namespaces a builtin is confined in")
    output, lines = run(probe, "write", str(tmp_path / "escaped"))
    assert output.exit_code == 1 and "Read-only file system" in lines[-1]
    assert not (tmp_path / "escaped").exists()


def test_only_this_fnrun_s_functions_fork() -> None:
    assert forked.can_fork("functions.set_labels", FUNCTIONS_DIR)
    assert not forked.can_fork("functions.kpt_catalog.starlark", FUNCTIONS_DIR)  # the Go runtime's threads
    assert not forked.can_fork("functions.set_labels", FUNCTIONS_DIR.parent / "elsewhere")


# ------------------------------------------------------------------------------------------------
# The handover (orchestrator/runtimes/host/handover.py): a catalog function takes the items fnrun holds,
# in the same fork under the same runner. Faults a catalog function never has are injected by
# patching the SDK runner's `apply` in this process, which the fork inherits.

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "set-labels"


def sample() -> tuple[list, dict]:
    """The set-labels sample's resources and its function config, as fnrun reads them."""
    from orchestrator.read.package import read_package

    resources = read_package(SAMPLE).resources
    config = next(r for r in resources if r.data["kind"] == "ConfigMap")
    return [r for r in resources if r is not config], config.data


def handover(items: list, config: dict | None, lines: list[str] | None = None, allowed: bool = True, workers: int | None = None,
             **sandbox: object) -> tuple:
    from orchestrator.runtimes.host.builtin import BuiltinRuntime

    invocation = Invocation(name="fnrun/set-labels:v1", image="fnrun/set-labels:v1",
                            sandbox=Sandbox(**{"timeout": 30.0, "memory": 256 << 20, **sandbox}))  # type: ignore[arg-type]
    lines = [] if lines is None else lines
    return BuiltinRuntime("functions.set_labels", handover=allowed, server=SERVER, workers=workers).run_items(invocation, items, config, lines.append), lines


def alone(test: Callable[..., None]) -> Callable[..., None]:
    """The test run in a fork of this process, which has one thread (a fork copies only the one
    that forked) whatever earlier tests left here: the fork server is forked from it, as from a
    fnrun, and a fault patched into it reaches the server."""
    @functools.wraps(test)
    def in_fork(*args: object, **kwargs: object) -> None:
        def body() -> None:
            try:
                test(*args, **kwargs)
            finally:
                SERVER.stop()

        in_a_fork(body)
    return in_fork


@alone
def test_stdin_stdout_stderr_and_arguments(probe: str) -> None:
    output, lines = run(probe, "echo", "a=b", stdin=b"kind: ConfigMap\n")
    assert (output.exit_code, output.stdout) == (0, b"KIND: CONFIGMAP\n")
    assert lines == ["args ['a=b']"]
    assert no_zombies()
    assert SERVER._server is not None and SERVER._server.process is None, "the server was not forked"


def patch_apply(monkeypatch: pytest.MonkeyPatch, fault: object) -> None:
    from functions.sdk import runner

    monkeypatch.setattr(runner, "apply", fault)
    SERVER.stop()
    SERVER.start()  # a server forked now, which the fault is in
    assert SERVER._server is not None and SERVER._server.process is None, "the server was not forked: the fault cannot reach it"


def test_handover_gives_the_values_the_text_way_gives() -> None:
    from orchestrator.run import resourcelist
    from orchestrator.runtimes.host.builtin import BuiltinRuntime

    items, config = sample()
    output, lines = handover(items, config)
    assert output is not None and output.exit_code == 0 and lines == []
    back, results = output.items, output.results
    text_way = BuiltinRuntime("functions.set_labels", server=SERVER).run(
        Invocation(name="fnrun/set-labels:v1"), resourcelist.encode(items, config).encode())
    assert not isinstance(text_way, ItemsOutput)  # the text way hands back bytes only
    assert [r.data for r in back] == [r.data for r in resourcelist.decode(text_way.stdout.decode(), "out").items]
    assert results == []
    for sent, returned in zip(items, back):  # every sample resource gets the labels
        assert returned is not sent and not returned.fresh and returned.body == sent.body


def test_unchanged_items_come_back_as_they_went() -> None:
    items, config = sample()
    output, _ = handover(items, {**config, "data": {"app": "payments-api"}})  # the api's own label
    assert output is not None and output.exit_code == 0
    assert output.items[0] is items[0]


@alone
def test_errors_and_results_come_back_as_the_text_way_s(monkeypatch: pytest.MonkeyPatch) -> None:
    items, config = sample()
    output, lines = handover(items, {**config, "data": {"bad key!": "x"}})
    assert output is not None and output.exit_code == 1 and output.items is None
    assert lines == ["set-labels: label key 'bad key!' is not a valid Kubernetes label key"]

    def report(resource_list, fn, config=None):
        resource_list.error("not allowed", resource_list.items[0], field="metadata.name")
        return resource_list

    patch_apply(monkeypatch, report)
    output, _ = handover(items, config)
    assert output is not None and output.exit_code == 1
    assert output.results == [{
        "message": "not allowed", "severity": "error",
        "resourceRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "payments-api"},
        "file": {"path": "api.yaml", "index": 0}, "field": {"path": "metadata.name"}}]


@pytest.mark.parametrize("value", [{1: "x"}, b"bytes", {"a"}, __import__("datetime").date(2024, 1, 1)],
                         ids=["int-key", "binary", "set", "date"])
def test_values_json_does_not_carry_go_the_text_way(value: object) -> None:
    from orchestrator.resource import Resource
    from orchestrator.runtimes.host.handover import is_plain

    items, config = sample()
    odd = Resource({**items[0].data, "spec": {"odd": value}}, items[0].text, items[0].body)
    assert not is_plain(odd.data)
    assert handover([odd, *items[1:]], config)[0] is None


def test_aliases_and_cycles_are_not_plain() -> None:
    """A value a YAML alias shares between places would take an edit at one place to all (the
    SDK gives a changed place its own copy only on ruamel's nodes): the text way runs it."""
    from orchestrator.runtimes.host.handover import is_plain

    shared = {"a": [1, 2.5, True, None]}
    assert is_plain({"x": shared, "y": {"a": list(shared["a"])}})
    assert not is_plain({"x": shared, "y": shared})
    cycle: dict = {"a": []}
    cycle["a"].append(cycle)
    assert not is_plain(cycle)


@alone
def test_a_function_that_adds_an_item_goes_the_text_way(monkeypatch: pytest.MonkeyPatch) -> None:
    from functions import sdk
    from functions.sdk import runner

    original = runner.apply

    def add_one(resource_list, fn, config=None):
        print("adding one", file=sys.stderr)
        original(resource_list, fn, config)
        resource_list.items.append(sdk.Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "new"}}))
        return resource_list

    patch_apply(monkeypatch, add_one)
    items, config = sample()
    output, lines = handover(items, config)
    assert output is None and lines == []  # nothing shown: the text way shows it once


@alone
def test_the_handover_is_killed_at_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(*_: object) -> None:
        print("working", file=sys.stderr, flush=True)
        while True:
            pass

    patch_apply(monkeypatch, hang)
    lines: list[str] = []
    with pytest.raises(FunctionError, match="timed out after 0.5s"):
        handover(*sample(), lines, timeout=0.5)
    assert lines == ["working"]  # what it said before it was killed is shown, as the text way does
    assert no_zombies()


def test_stderr_floods_pass_through_instead_of_piling_up() -> None:
    from orchestrator.runtimes.host.handover import HeldLines

    shown: list[str] = []
    held = HeldLines(shown.append, limit=10)
    held("four")
    assert shown == []
    held("more than ten")
    held("after")
    assert shown == ["four", "more than ten", "after"]
    held.release()
    assert shown == ["four", "more than ten", "after"]


@alone
def test_the_handover_is_held_to_the_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    patch_apply(monkeypatch, lambda *_: [bytearray(1 << 20) for _ in range(4096)])
    output, lines = handover(*sample())
    assert output is not None and output.exit_code == 1 and lines[-1] == "MemoryError"


@alone
def test_endless_output_of_the_handover_is_cut_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def flood(*_: object) -> None:
        while True:
            sys.stdout.write("x" * 65536)

    patch_apply(monkeypatch, flood)
    with pytest.raises(FunctionError, match="max-output"):
        handover(*sample(), max_output=1 << 20)
    assert no_zombies()


@alone
def test_a_crash_in_the_handover_is_a_traceback_and_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*_: object) -> None:
        raise RuntimeError("boom")

    patch_apply(monkeypatch, crash)
    output, lines = handover(*sample())
    assert output is not None and (output.exit_code, output.items) == (1, None)
    assert lines[-1] == "RuntimeError: boom"


@alone
def test_sigterm_during_the_handover_kills_the_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import signal
    import threading

    from orchestrator.errors import Interrupted

    def hang(*_: object) -> None:
        while True:
            pass

    patch_apply(monkeypatch, hang)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        with pytest.raises(Interrupted):
            handover(*sample())
    finally:
        timer.cancel()
    assert no_zombies()


def test_the_handover_can_be_turned_off() -> None:
    assert handover(*sample(), allowed=False)[0] is None
    assert handover(*sample())[0] is not None


def test_an_edit_only_the_round_trip_can_write_goes_the_text_way(tmp_path: Path) -> None:
    """A label added inside a flow map: the write-back round-trips such an item, keeping the
    function's own text, which only the text way has."""
    from orchestrator.read.package import read_package

    (tmp_path / "flow.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: flow, labels: {app: flow}}\n")
    (tmp_path / "block.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: block  # {not flow}\n")
    block, flow = read_package(tmp_path).resources  # in path order
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"team": "a"}}
    assert handover([flow], config)[0] is None
    output, _ = handover([block], config)  # block YAML: text edits; a `{` in a comment is tried and passes
    assert output is not None and output.items[0].data["metadata"]["labels"] == {"team": "a"}


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things{n}.example.com  # [a comment with brackets]
spec:
  group: example.com
  versions:
  - name: v1
    schema:
      openAPIV3Schema:
        description: 'Thing {n}: *quoted*, with [brackets] | and > signs'
        properties:
          spec:
            description: |
              A block scalar,
              of two lines.
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_edits_worked_out_on_every_core_are_the_write_back_s(workers: int, tmp_path: Path) -> None:
    """Items whose text has what text edits may refuse are tried before the step stands, in
    forked workers for a big package; each returned item carries its edit to the write-back, and
    it is the one a fresh edit in this process gives."""
    from orchestrator.read.package import read_package
    from orchestrator.yamlio import textedit

    for n in range(6):
        (tmp_path / f"crd{n}.yaml").write_text(CRD.format(n=n))
    items = read_package(tmp_path, workers=workers).resources
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"team": "a"}}
    output, _ = handover(items, config, workers=workers)
    assert output is not None and output.exit_code == 0
    back = output.items
    assert [r.data["metadata"]["labels"] for r in back] == [{"team": "a"}] * 6
    for sent, returned in zip(items, back):
        fresh = textedit.edit(sent.body, returned.value)
        assert returned.known_edit == textedit.KnownEdit(sent.body, repr(returned.value), fresh) and fresh is not None
        assert "  labels:\n    team: a\n" in fresh and fresh.replace("  labels:\n    team: a\n", "", 1) == sent.body


@pytest.mark.parametrize("workers", [1, 2])
def test_one_item_text_edits_cannot_write_sends_the_whole_step_the_text_way(workers: int, tmp_path: Path) -> None:
    from orchestrator.read.package import read_package

    for n in range(5):
        (tmp_path / f"crd{n}.yaml").write_text(CRD.format(n=n))
    (tmp_path / "crd9.yaml").write_text(CRD.format(n=9).replace("metadata:\n  name: things9.example.com  # [a comment with brackets]", "metadata: {name: things9.example.com}"))
    items = read_package(tmp_path, workers=workers).resources
    assert len(items) == 6
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"team": "a"}}
    assert handover(items, config, workers=workers)[0] is None


def test_fnrun_s_heap_stays_collectable_the_server_freezes_its_own(probe: str) -> None:
    """The server freezes its heap before it forks (no collection in a child copies its pages);
    fnrun, which no longer forks for builtins, keeps collecting as usual."""
    import gc

    run(probe, "echo")
    assert gc.get_freeze_count() == 0


def test_a_config_typed_with_module_names_loads_in_the_fork(tmp_path: Path) -> None:
    """require-resource-limits types `severity` as Literal[...], a name of its own module: the
    fork calls its function directly, with its module's names to resolve the annotations in."""
    from orchestrator.read.package import read_package
    from orchestrator.runtimes.host.builtin import BuiltinRuntime
    from orchestrator.runtimes.host.handover import entry_of

    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n")
    items = read_package(tmp_path).resources
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"severity": "warning"}}
    assert entry_of("functions.require_resource_limits") is not None
    lines: list[str] = []
    output = BuiltinRuntime("functions.require_resource_limits", server=SERVER).run_items(
        Invocation(name="fnrun/require-resource-limits:v1"), items, config, lines.append)
    assert output is not None and (output.exit_code, lines) == (0, [])
    assert [r["severity"] for r in output.results] == ["warning", "warning"]
    config["data"] = {"severity": "fatal"}
    output = BuiltinRuntime("functions.require_resource_limits", server=SERVER).run_items(
        Invocation(name="fnrun/require-resource-limits:v1"), items, config, lines.append)
    assert output is not None and output.exit_code == 1
    assert lines == ["require-resource-limits: config field 'severity': expected one of error, warning, got 'fatal'"]


@pytest.mark.parametrize("stdout", [b'{"items": [-1], "results": []}', b'{"items": [[true, {}]], "results": []}',
                                    b'{"items": [9], "results": []}', b'{"items": [0]}', b'not json'])
def test_output_that_is_not_the_protocol_s_is_invalid_output(stdout: bytes) -> None:
    from orchestrator.runtimes.host.handover import handed_back

    items, _ = sample()
    with pytest.raises(FunctionError, match="fnrun/x:v1 returned invalid output"):
        handed_back(stdout, 0, items, "fnrun/x:v1")
    assert handed_back(stdout, 1, items, "fnrun/x:v1") is None  # a failed function: its exit code is reported


# ------------------------------------------------------------------------------------------------
# Stopping: an interrupted run ends a builtin waited on by a worker thread, and nothing of the
# server outlives the process that started it, even killed.

def _children_of_server(within: float = 30.0) -> list[int]:
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        server = SERVER._server
        found = descendants(server.pid) if server is not None else []
        if found:
            return found
        time.sleep(0.05)
    return []


def test_stopping_the_children_ends_a_hung_builtin_another_thread_waits_on(probe: str) -> None:
    import signal
    import threading

    from orchestrator.runtimes.supervise import children

    outcome: list[object] = []

    def attempt() -> None:
        try:
            outcome.append(run(probe, "hang", timeout=0)[0])  # no timeout: only the stop ends it
        except BaseException as err:  # noqa: BLE001 - carried to the test's thread
            outcome.append(err)

    SERVER.start()
    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    assert _children_of_server(), "the builtin never started"
    children.stop_all()  # what an interrupted run does from its main thread (run/units.py)
    worker.join(30)
    assert not worker.is_alive(), "the worker still waits on the builtin"
    # killed with the server: 128 + SIGKILL (the fork servers' one convention, a container's too), or,
    # stopped before the server said it forked it, an error
    assert getattr(outcome[0], "exit_code", None) == 128 + signal.SIGKILL or isinstance(outcome[0], FunctionError), outcome
    assert descendants(os.getpid()) == []


def test_a_killed_fnrun_leaves_no_builtin_running(probe: str, tmp_path: Path) -> None:
    """The child made its own session, so nothing but PR_SET_PDEATHSIG ties it to fnrun."""
    import signal
    import subprocess

    script = tmp_path / "starts_a_builtin.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from orchestrator.runtimes.host import forked
        child = forked.ForkServer().spawn({probe!r}, ["hang"], {{}}, "/", 256 << 20)
        print(child.pid, flush=True)
        child.wait()
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline())  # type: ignore[union-attr]
        assert os.path.exists(f"/proc/{pid}")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert gone_within(pid, 30), "the builtin outlived the process that started it"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_new_interpreter_serves_when_fnrun_must_not_fork(probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other threads running, or a big heap: the server is a new interpreter, and serves the same."""
    monkeypatch.setattr(forked, "FORK_BELOW", 0)
    SERVER.start()
    server = SERVER._server
    assert server is not None and server.process is not None  # started by exec, not forked
    output, lines = run(probe, "echo", "a=b", stdin=b"kind: ConfigMap\n")
    assert (output.exit_code, output.stdout, lines) == (0, b"KIND: CONFIGMAP\n", ["args ['a=b']"])
    output, _ = handover(*sample())
    assert output is not None and output.exit_code == 0 and output.items is not None
