"""`fnrun test` over kpt-format cases written for fnrun's own images: they pass, a changed
expectation fails with its diff, --update makes it pass again, bad cases are one line each while
the run goes on, a case that cannot run is skipped (never passed), and the JUnit report parses."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from testing.pipeline_helpers import fnrun

pytestmark = pytest.mark.usefixtures("test_images")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OWN = FIXTURES / "fnrun"


def _lines(stdout: str, label: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(label + " ")]


def test_the_cases_pass_and_the_junit_report_says_so(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    done = fnrun("test", str(OWN), "-j", "2", "--junit-xml", str(report))
    assert done.code == 0, done.stdout + done.stderr
    names = {line.split()[2] for line in _lines(done.stdout, "PASS")}
    assert names == {f"{OWN}/{case}" for case in ("render-set-namespace", "eval-set-labels", "exec-kpt-eval", "expected-failure")}
    assert "4 cases: 4 passed" in done.stdout
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "0", "0", "0")
    assert sorted(case.get("name") for case in suite.iter("testcase")) == ["eval-set-labels", "exec-kpt-eval", "expected-failure", "render-set-namespace"]


def test_a_changed_function_fails_with_the_diff_and_update_records_it(tmp_path: Path) -> None:
    case = tmp_path / "render-set-namespace"
    shutil.copytree(OWN / "render-set-namespace", case)
    kptfile = case / "Kptfile"
    kptfile.write_text(kptfile.read_text().replace("namespace: staging", "namespace: qa"))
    report = tmp_path / "report.xml"
    failed = fnrun("test", str(case), "--junit-xml", str(report))
    assert failed.code == 1, failed.stdout + failed.stderr
    assert _lines(failed.stdout, "FAIL") and "diff differs from diff.patch" in failed.stdout
    assert "-+  namespace: staging" in failed.stdout and "++  namespace: qa" in failed.stdout  # the diff of the diffs
    failure = ET.parse(report).getroot().find("testsuite/testcase/failure")
    assert failure is not None and "namespace: qa" in (failure.text or "")

    updated = fnrun("test", str(case), "--update")
    assert updated.code == 0 and _lines(updated.stdout, "UPDATED"), updated.stdout + updated.stderr
    assert "+  namespace: qa" in (case / ".expected/diff.patch").read_text()
    again = fnrun("test", str(case))
    assert again.code == 0 and _lines(again.stdout, "PASS"), again.stdout + again.stderr


def _case(root: Path, name: str, files: dict[str, str]) -> Path:
    case = root / name
    shutil.copytree(OWN / "render-set-namespace", case)
    for rel, text in files.items():
        (case / rel).write_text(text)
    return case


def test_bad_cases_are_one_line_each_and_the_run_goes_on(tmp_path: Path) -> None:
    _case(tmp_path, "good", {})
    _case(tmp_path, "not-yaml", {".expected/config.yaml": "exitCode: [1\n"})
    _case(tmp_path, "wrong-type", {".expected/config.yaml": "exitCode: one\n"})
    _case(tmp_path, "not-a-patch", {".expected/diff.patch": "this is not a patch\n"})
    _case(tmp_path, "hangs", {".expected/setup.sh": "sleep 600 &\nsleep 600\n"})
    done = fnrun("test", str(tmp_path), "--case-timeout", "60")
    assert done.code == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    errors = {line.split()[2]: line for line in _lines(done.stdout, "ERROR")}
    assert set(errors) == {f"{tmp_path}/{name}" for name in ("not-yaml", "wrong-type", "not-a-patch", "hangs")}
    assert "not YAML" in errors[f"{tmp_path}/not-yaml"] and "exitCode must be an integer" in errors[f"{tmp_path}/wrong-type"]
    assert "not a patch" in errors[f"{tmp_path}/not-a-patch"] and "did not finish in 60s" in errors[f"{tmp_path}/hangs"]
    assert [line.split()[2] for line in _lines(done.stdout, "PASS")] == [f"{tmp_path}/good"]


def test_a_case_fnrun_cannot_run_is_skipped_with_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRM_FN_RUNTIME", raising=False)
    _case(tmp_path, "absent-image", {".expected/config.yaml": "testType: eval\nimage: example.invalid/nothing:v1\n"})
    _case(tmp_path, "wasm", {".expected/config.yaml": "allowWasm: true\n"})
    _case(tmp_path, "other-tool", {".expected/exec.sh": "kpt pkg get https://example.invalid/x\n"})
    _case(tmp_path, "podman-only", {".expected/config.yaml": "runtimes: [podman]\n"})
    report = tmp_path / "report.xml"
    done = fnrun("test", str(tmp_path), "--junit-xml", str(report))
    assert done.code == 0, done.stdout + done.stderr
    skipped = {line.split()[2].rsplit("/", 1)[1]: line for line in _lines(done.stdout, "SKIP")}
    assert set(skipped) == {"absent-image", "wasm", "other-tool", "podman-only"} and not _lines(done.stdout, "PASS")
    assert "example.invalid/nothing:v1" in skipped["absent-image"] and "WASM" in skipped["wasm"] and "kpt pkg" in skipped["other-tool"]
    assert "runs only on podman" in skipped["podman-only"]
    assert ET.parse(report).getroot().find("testsuite").get("skipped") == "4"


def test_k_selects_and_bad_usage_exits_2(tmp_path: Path) -> None:
    chosen = fnrun("test", str(OWN), "-k", "eval-set")
    assert chosen.code == 0 and [line.split()[2] for line in _lines(chosen.stdout, "PASS")] == [f"{OWN}/eval-set-labels"]
    for args, needle in ((["-k", "no-such-case"], "no case"), (["--compare", "bytes"], "--compare"), ([], "no case")):
        target = str(OWN) if args else str(tmp_path)
        done = fnrun("test", target, *args)
        assert done.code == 2 and needle in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    missing = fnrun("test", str(tmp_path / "nowhere"))
    assert missing.code == 2 and "nowhere: no such directory" in missing.stderr


def test_a_case_whose_second_run_differs_fails_there(tmp_path: Path) -> None:
    """kpt's runner runs each case twice from a fresh copy: a function that remembers an earlier
    run (here exec.sh, through a file outside the package) passes the first and fails the second."""
    marker = tmp_path / "ran-before"
    script = ('kpt fn eval --image fnrun/set-namespace:v1 -- namespace=prod\n'
              'if [ -e "$MARKER" ]; then echo "# ran before" >> resources.yaml; fi\ntouch "$MARKER"\n')
    case = _case(tmp_path, "remembers", {".expected/exec.sh": script, ".expected/config.yaml": f"env:\n  MARKER: {marker}\n"})
    assert fnrun("test", str(case), "--update").code == 0
    marker.unlink()
    done = fnrun("test", str(case))
    assert done.code == 1, done.stdout + done.stderr
    assert "run 2 of 2: the package's diff differs from diff.patch" in done.stdout and "+# ran before" in done.stdout
