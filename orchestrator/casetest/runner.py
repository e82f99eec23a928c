"""One case, run as kpt's runner runs it: twice, each time from a fresh copy of the case in a
temporary git repository (committed), setup.sh, exec.sh or the render/eval command, the outcome
compared with the expectations (orchestrator.casetest.expect), teardown.sh. The second run must
give the same verdict: a function whose output depends on the run (time, randomness, leftovers)
fails there. A run that fails as expected ends the case, as in kpt."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .commands import RunOptions, eval_command, is_eval, render_command, shim_environment
from .config import EXPECTED, CaseConfig, CaseError, load_config
from .datacompare import compare_data, expected_package
from .discover import Case
from .expect import Mismatch, Outcome, compare, expected_file
from .gitrepo import changes_since, commit_all
from .process import run
from .runnable import cannot_run

PASS, FAIL, SKIP, ERROR, UPDATED = "pass", "fail", "skip", "error", "updated"
RUNS = 2
EXACT, DATA = "exact", "data"


@dataclass(frozen=True)
class Verdict:
    case: Case
    outcome: str  # pass | fail | skip | error | updated
    reason: str = ""
    detail: str = ""
    seconds: float = 0.0
    sequential: bool = False


@dataclass(frozen=True)
class Settings:
    options: RunOptions = RunOptions()
    workdir: Path = Path(".")  # where render/eval commands start (kpt's suite: its e2e/)
    timeout: float = 600.0  # for each script and command
    update: bool = False
    compare: str = "exact"  # exact: kpt's rules | data: bench's conformance scoring (orchestrator.casetest.datacompare)


def run_case(case: Case, settings: Settings) -> Verdict:
    started = time.monotonic()
    config = CaseConfig()
    try:
        config = load_config(case.path)
        reason = cannot_run(case.path, config, settings.options)
        if reason is not None:
            return Verdict(case, SKIP, reason, sequential=config.sequential)
        expected_file(case.path, "diff.patch")  # a diff.patch that is not a patch is the case's error, before anything runs
        for iteration in range(1, RUNS + 1):
            outcome, mismatch = _run_once(case, config, settings)
            if settings.update:
                _write_expected(case.path, config, outcome)
                return Verdict(case, UPDATED, _updated_note(case.path, config, outcome), seconds=time.monotonic() - started)
            if mismatch is not None:
                where = f"run {iteration} of {RUNS}: " if iteration > 1 else ""
                return Verdict(case, FAIL, where + mismatch.reason, mismatch.detail, time.monotonic() - started, config.sequential)
            if outcome.exit_code:
                break
    except CaseError as err:
        return Verdict(case, ERROR, str(err), seconds=time.monotonic() - started, sequential=config.sequential)
    return Verdict(case, PASS, seconds=time.monotonic() - started, sequential=config.sequential)


def _run_once(case: Case, config: CaseConfig, settings: Settings) -> tuple[Outcome, Mismatch | None]:
    expected = case.path / EXPECTED
    with tempfile.TemporaryDirectory(prefix="fnrun-casetest-") as scratch:
        tmp = Path(scratch)
        package = tmp / case.path.resolve().name
        shutil.copytree(case.path, package, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        results = tmp / "results" if (expected / "results.yaml").exists() else None
        out = package / "out" if (case.path / "out").is_dir() else None
        first = commit_all(package, "first")
        env = shim_environment(tmp / "bin", config, settings.options)
        _script(expected / "setup.sh", package, env, settings.timeout)
        if (expected / "exec.sh").exists():
            command, cwd = ["bash", str((expected / "exec.sh").resolve())], package
        elif is_eval(config):
            command, cwd = eval_command(case.path.resolve(), package, config, settings.options, results, out), settings.workdir
        else:
            command, cwd = render_command(package, config, settings.options, results, out), settings.workdir
        code, stdout, stderr = run(command, cwd, env, settings.timeout, f"{case.name}: {Path(command[1]).name if command[0] == 'bash' else 'fnrun'}")
        outcome = Outcome(code, stdout, stderr, _results(results, case), changes_since(package, first))
        if settings.compare == DATA:
            mismatch = compare_data(config, outcome, package, expected_package(case.path, tmp / "expected"))
        else:
            mismatch = compare(case.path, config, outcome, scratch)
        if code == 0 or not is_eval(config):
            _script(expected / "teardown.sh", package, env, settings.timeout)
        return outcome, mismatch


def _script(path: Path, package: Path, env: dict[str, str], timeout: float) -> None:
    if not path.exists():
        return
    code, stdout, stderr = run(["bash", str(path.resolve())], package, env, timeout, str(path))
    if code:
        said = (stderr.strip() or stdout.strip()).splitlines()
        raise CaseError(f"{path} exited {code}" + (f": {said[-1]}" if said else ""))


def _results(results: Path | None, case: Case) -> str:
    """The results file the run wrote, trimmed; a run that wrote more than one is the case's error."""
    if results is None or not results.is_dir():
        return ""
    files = sorted(results.iterdir())
    if len(files) > 1:
        raise CaseError(f"{case.name}: the run wrote {len(files)} results files, expected 0 or 1")
    return files[0].read_text(encoding="utf-8", errors="replace").strip() if files else ""


def _write_expected(case: Path, config: CaseConfig, outcome: Outcome) -> None:
    """results.yaml and diff.patch from what happened (kpt's KPT_E2E_UPDATE_EXPECTED); a
    diff.patch the run no longer produces is removed, so the next run passes."""
    expected = case / EXPECTED
    if outcome.results:
        (expected / "results.yaml").write_text(outcome.results + "\n", encoding="utf-8")
    patch = expected / "diff.patch"
    if outcome.diff:
        patch.write_text(outcome.diff + "\n", encoding="utf-8")
    elif patch.exists():
        patch.unlink()


def _updated_note(case: Path, config: CaseConfig, outcome: Outcome) -> str:
    written = [name for name, text in (("results.yaml", outcome.results), ("diff.patch", outcome.diff)) if text]
    note = f"wrote {', '.join(written)}" if written else "no change to record"
    if outcome.exit_code != config.exit_code:
        note += f"; the run exited {outcome.exit_code} where config.yaml says exitCode {config.exit_code} (edit it by hand)"
    return note
