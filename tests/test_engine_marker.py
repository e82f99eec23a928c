"""The `engine` marker's guard and rule (tests/testing/engine_guard.py): the guard's socket refuses
the Docker Engine API and remembers each call, and a module is told apart by what it imports."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from testing.engine_guard import REFUSAL, EngineGuard, deselects_engine, imports_engine, module_needs_engine, needs_engine


def _ask(path: Path, request_line: str) -> tuple[str, dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        client.sendall(f"{request_line}\r\nHost: docker\r\n\r\n".encode())
        answer = b""
        while chunk := client.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0].decode(), json.loads(body)


def test_the_guard_refuses_every_call_and_remembers_it() -> None:
    guard = EngineGuard()
    try:
        status, body = _ask(guard.path, "GET /v1.43/containers/json HTTP/1.1")
        assert status.startswith("HTTP/1.1 500")
        assert body == {"message": REFUSAL}
        _ask(guard.path, "HEAD /_ping HTTP/1.1")
        assert guard.take() == ["GET /v1.43/containers/json", "HEAD /_ping"]
        assert guard.take() == []
    finally:
        guard.close()
    assert not guard.path.exists()


def test_this_test_runs_with_the_guard_for_its_engine() -> None:
    """Not marked `engine`, so DOCKER_HOST names the session's guard, whatever the machine set."""
    host = os.environ.get("DOCKER_HOST", "")
    assert host.startswith("unix://") and "fnrun-guard-" in host


@pytest.mark.parametrize(("source", "engine"), [
    ("import docker\n", True),
    ("import docker.errors as e\n", True),
    ("from testcontainers.core.container import DockerContainer\n", True),
    ("def f():\n    from testing.engine_fixtures import podman_service\n", True),
    ("from testing.pipeline_helpers import fnrun\n", False),
    ("import dockerfile_parse\nfrom orchestrator.runtimes.container import engine_choice\n", False),
    ("this is not python (\n", False),
])
def test_a_module_needs_the_engine_when_it_imports_a_client_of_it(tmp_path: Path, source: str, engine: bool) -> None:
    module = tmp_path / "test_x.py"
    module.write_text(source)
    assert imports_engine(module) is engine
    assert needs_engine(module, ["tmp_path"]) is engine


def test_an_engine_fixture_makes_a_test_need_the_engine(tmp_path: Path) -> None:
    module = tmp_path / "test_y.py"
    module.write_text("from testing.pipeline_helpers import fnrun\n")
    assert needs_engine(module, ["tmp_path", "test_images"])
    assert not needs_engine(module, ["tmp_path"])


def test_an_unmarked_test_that_calls_the_engine_fails_saying_so(tmp_path: Path) -> None:
    """A session with the suite's conftest as its plugin: the test that asks the engine (as the
    SDK would, through DOCKER_HOST) fails with the guard's words, even though it asserts nothing
    about the answer; a test marked `engine` gets the engine the machine names."""
    (tmp_path / "test_inner.py").write_text(
        "import os, socket\nimport pytest\n\n"
        "def _ping():\n"
        "    host = os.environ.get('DOCKER_HOST', '')\n"
        "    if host.startswith('unix://'):\n"
        "        with socket.socket(socket.AF_UNIX) as s:\n"
        "            s.connect(host[len('unix://'):])\n"
        "            s.sendall(b'GET /_ping HTTP/1.1\\r\\nHost: docker\\r\\n\\r\\n')\n"
        "            s.recv(4096)\n"
        "    return host\n\n"
        "def test_unmarked():\n    _ping()\n\n"
        "@pytest.mark.engine\n"
        "def test_marked():\n    assert os.environ['DOCKER_HOST'] == 'unix:///nonexistent/docker.sock'\n"
    )
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]), "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rf",
                             "-o", "markers=engine: needs the engine", str(tmp_path / "test_inner.py")],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed" in result.stdout, result.stdout
    assert "FAILED test_inner.py::test_unmarked" in result.stdout, result.stdout
    assert f"{REFUSAL}: it called the Docker Engine API (GET /_ping)" in result.stdout, result.stdout


@pytest.mark.parametrize(("markexpr", "leaves_out"), [
    ("not engine", True),
    ("not engine and not slow", True),
    ("not (engine or slow)", True),
    ("slow and not engine", True),
    ("not engine or slow", False),
    ("engine", False),
    ("slow", False),
    ("not engine(kind=1)", False),
    ("not (engine", False),
])
def test_a_mark_expression_leaves_out_the_engine_when_no_other_marker_brings_it_back(markexpr: str, leaves_out: bool) -> None:
    assert deselects_engine(markexpr) is leaves_out


@pytest.mark.parametrize(("source", "engine"), [
    ("import pytest\npytestmark = pytest.mark.engine\n", True),
    ("import pytest\npytestmark = [pytest.mark.skipif(False, reason='x'), pytest.mark.engine]\n", True),
    ("import pytest\npytestmark = pytest.mark.usefixtures('test_images')\n", True),
    ("import pytest\npytestmark = pytest.mark.usefixtures('tmp_path')\n", False),
    ("import pytest\n\n@pytest.mark.engine\ndef test_one():\n    pass\n\ndef test_two():\n    pass\n", False),
    ("from docker.errors import NotFound\n", True),
])
def test_a_module_says_by_itself_whether_all_its_tests_need_the_engine(tmp_path: Path, source: str, engine: bool) -> None:
    module = tmp_path / "test_z.py"
    module.write_text(source)
    assert module_needs_engine(module) is engine


def test_a_run_that_leaves_out_the_engine_does_not_import_the_engines_modules(tmp_path: Path) -> None:
    """`-m "not engine"` leaves a module marked `engine` as a whole unimported (here it would fail
    to import), and runs the rest; without `-m` the same module is imported, and fails."""
    (tmp_path / "test_engine_only.py").write_text("import pytest\npytestmark = pytest.mark.engine\nraise RuntimeError('imported')\n")
    (tmp_path / "test_plain.py").write_text("import pytest\n\n@pytest.mark.engine\ndef test_marked():\n    pass\n\ndef test_plain():\n    pass\n")
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
                               "-o", "markers=engine: needs the engine", *args, str(tmp_path)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    fast = pytest_run("-m", "not engine")
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert "1 passed, 1 deselected" in fast.stdout, fast.stdout
    whole = pytest_run("--collect-only")
    assert whole.returncode == 2 and "RuntimeError: imported" in whole.stdout, whole.stdout


def test_the_fast_subset_outside_ci_draws_fewer_rounds_and_every_other_run_all(tmp_path: Path) -> None:
    """testing.sizing: `-m "not engine"` outside CI runs a tenth of a property test's examples
    (and `fast_subset` is true); the whole suite, and the subset in CI (CI=true), run them all."""
    (tmp_path / "test_rounds.py").write_text(
        "import os\nfrom hypothesis import given, settings, strategies as st\nfrom testing.sizing import examples\n"
        "drawn = []\n\n@settings(max_examples=examples(50), database=None)\n@given(st.integers())\n"
        "def test_draws(n):\n    drawn.append(n)\n\n"
        "def test_counted(fast_subset):\n    want = int(os.environ['WANT'])\n"
        "    assert len(drawn) == want and fast_subset == (want == 5), (len(drawn), fast_subset)\n")
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}
    env.pop("CI", None)
    for args, extra, want in ((["-m", "not engine"], {}, 5), (["-m", "not engine"], {"CI": "true"}, 50), ([], {}, 50)):
        run = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
                              "-o", "markers=engine: needs the engine", *args, str(tmp_path)],
                             cwd=tmp_path, env={**env, **extra, "WANT": str(want)}, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and "2 passed" in run.stdout, (args, extra, run.stdout + run.stderr)


@pytest.mark.parametrize("command", [
    ["docker", "ps"],
    ["kpt", "fn", "eval", "{package}", "--image", "fnrun/set-labels:v1", "--image-pull-policy", "never", "--", "a=b"],
], ids=["docker", "kpt"])
def test_the_guard_sees_a_container_started_through_the_docker_cli(tmp_path: Path, command: list[str]) -> None:
    """kpt starts a function image through the `docker` CLI, which goes through DOCKER_HOST: an
    unmarked test that runs kpt over an image (or docker itself) is caught like one using the SDK."""
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    guard = EngineGuard()
    try:
        result = subprocess.run([part.format(package=tmp_path) for part in command], env={**os.environ, "DOCKER_HOST": guard.host},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0, result.stdout + result.stderr
        assert guard.take(), result.stderr
    finally:
        guard.close()
