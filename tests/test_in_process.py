"""testing.in_process runs fnrun's CLI in the test's process for the tests whose subject is what a
command does: it must give what fnrun started anew gives, on the same commands (exit code, stdout,
stderr; timings aside), or the tests that use it would test something else. `in_a_fork` runs a
function in a fork of the test process: one thread there, its value or its failure brought back."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from testing.in_process import fnrun_here, in_a_fork
from testing.kpt import CATALOG, ON, write
from testing.pipeline_helpers import fnrun

PACKAGE = {
    "Kptfile": f"""
        apiVersion: kpt.dev/v1
        kind: Kptfile
        metadata:
          name: pkg
        pipeline:
          mutators:
            - image: {CATALOG}/set-labels:v0.2.0
              configMap:
                tier: backend
        """,
    "app.yaml": """
        # the app
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: app # kept
        data:
          greeting: "h\u00e9llo"
        """,
    "broken.yaml.txt": "not read\n",
}


def _timeless(text: str) -> str:
    return re.sub(r"\d+\.\d+s", "_s", text)


@pytest.mark.parametrize("args", [
    ["source", "{pkg}"],
    ["render", "{pkg}", "-o", "stdout"],
    ["render", "{pkg}", "-o", "{out}"],
    ["render", "{pkg}", "--file-names", "kind-name"],
    ["run", "{pkg}", "--image", f"{CATALOG}/set-annotations:latest", "--", "owner=team-a"],
    ["run", "-", "--image", f"{CATALOG}/set-namespace:latest", "-o", "stdout", "--", "namespace=prod"],
    ["render", "{pkg}/missing"],
    ["no-such-command"],
    ["render", "--help"],
], ids=lambda args: "-".join(a.strip("{}-") for a in args[:3]))
def test_the_cli_in_process_gives_what_fnrun_started_anew_gives(tmp_path: Path, args: list[str]) -> None:
    results = []
    for run, where in ((fnrun, "started"), (fnrun_here, "here")):
        root = tmp_path / where
        write(root / "pkg", PACKAGE)
        argv = [a.format(pkg=root / "pkg", out=root / "out") for a in args]
        stdin = (root / "pkg" / "app.yaml").read_text() if "-" in argv else None
        result = run(*argv, stdin=stdin, cwd=root, env=ON)
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
        results.append((result.code, result.stdout.replace(str(root), "ROOT"), _timeless(result.stderr.replace(str(root), "ROOT")), files))
    assert results[0] == results[1]


@pytest.mark.parametrize("args", [
    ["wrap", "--", "cat"],
    ["xargs", "--", "sh", "-c", "echo \"$# $*\" >&2; cat"],
    ["wrap", "--", "sh", "-c", "echo broken; exit 3"],
    ["wrap"],
], ids=lambda args: "-".join(args[:3]))
def test_wrap_and_xargs_in_process_give_what_fnrun_started_anew_gives(args: list[str]) -> None:
    """`wrap` and `xargs` skip the CLI framework (orchestrator.entry): the fork takes the same way."""
    given = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a  # kept\n" \
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n  data:\n    tier: web\n"
    started, here = fnrun(*args, stdin=given), fnrun_here(*args, stdin=given)
    assert (here.code, here.stdout, here.stderr) == (started.code, started.stdout, started.stderr)


def _threads_here() -> int:
    return len(os.listdir("/proc/self/task"))


def test_a_fork_gives_back_the_value_and_runs_with_one_thread_whatever_runs_here() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="left-running")
    other.start()
    try:
        assert _threads_here() >= 2
        assert in_a_fork(_threads_here) == 1
        assert in_a_fork(lambda a, b=0: {"sum": a + b}, 2, b=3) == {"sum": 5}
    finally:
        stop.set()
        other.join()


def test_a_failure_in_the_fork_fails_here_with_its_traceback() -> None:
    def fails() -> None:
        assert 1 + 1 == 3, "arithmetic in the fork"

    with pytest.raises(AssertionError, match="(?s)in a fork of the test process:.*arithmetic in the fork"):
        in_a_fork(fails)
    with pytest.raises(AssertionError, match="ended with status 7 before it answered"):
        in_a_fork(os._exit, 7)
