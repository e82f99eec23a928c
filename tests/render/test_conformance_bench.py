"""bench/conformance_render.py over a small suite written here in kpt's case format (a package plus
`.expected/`): an eval case run as kpt's runner builds the command line, an exec.sh case whose
`kpt fn eval --exec` reaches fnrun with --allow-exec, a case fnrun fails, one that cannot run. The
real suites need a kpt checkout; this checks the scoring itself without one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, deployment

pytestmark = pytest.mark.usefixtures("test_images")


def _case(root: Path, files: dict[str, str], expected: dict[str, str], change: dict[str, str] | None = None) -> None:
    """A case folder; `change` is what the run should leave (its diff becomes .expected/diff.patch)."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if change:
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "case"], check=True)
        for rel, text in change.items():
            (root / rel).write_text(text)
        patch = subprocess.run([*git, "diff"], check=True, capture_output=True, text=True).stdout
        subprocess.run([*git, "checkout", "-q", "--", "."], check=True)
        subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
        expected = {**expected, "diff.patch": patch}
    for rel, text in expected.items():
        (root / ".expected" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / ".expected" / rel).write_text(text)


def test_the_bench_scores_an_eval_suite(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    web = deployment("web")
    labelled = web.replace("  name: web  # keep me\n", "  name: web  # keep me\n  labels:\n    tier: web\n")
    _case(suite / "label-by-image", {"app.yaml": web}, {"config.yaml": "testType: eval\nimage: fnrun-test/label:v1\nargs:\n  tier: web\n"},
          {"app.yaml": labelled})
    _case(suite / "exec-from-path", {"app.yaml": web}, {"exec.sh": "set -e\nkpt fn eval --exec \"sed -e 's/name: web/name: shop/'\"\n"},
          {"app.yaml": web.replace("name: web", "name: shop")})
    _case(suite / "expects-a-failure", {"app.yaml": web}, {"config.yaml": "testType: eval\nimage: fnrun-test/label:v1\nexitCode: 1\n"})
    _case(suite / "wasm", {"app.yaml": web}, {"config.yaml": "testType: eval\nallowWasm: true\nimage: example.invalid/fn.wasm\n"})
    done = subprocess.run([sys.executable, str(REPO / "bench/conformance_render.py"), str(suite), "--allow-exec"],
                          capture_output=True, text=True, timeout=600)
    verdicts = {line.split()[1]: line.split()[0] for line in done.stdout.splitlines() if line.split()[:1] in (["pass"], ["fail"], ["cannot-run"])}
    assert verdicts == {"label-by-image": "pass", "exec-from-path": "pass", "expects-a-failure": "fail", "wasm": "cannot-run"}, done.stdout + done.stderr
    assert "4 cases: 2 pass, 1 fail (0 known differences), 1 cannot run here" in done.stdout
    assert done.returncode == 1  # a failure without a named difference


def test_without_allow_exec_an_exec_case_fails_as_fnrun_refuses(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    web = deployment("web")
    _case(suite / "exec-from-path", {"app.yaml": web}, {"exec.sh": "set -e\nkpt fn eval --exec \"sed -e 's/name: web/name: shop/'\"\n"},
          {"app.yaml": web.replace("name: web", "name: shop")})
    done = subprocess.run([sys.executable, str(REPO / "bench/conformance_render.py"), str(suite)], capture_output=True, text=True, timeout=600)
    assert "fail        exec-from-path" in done.stdout and "--allow-exec" in done.stdout, done.stdout
