"""kpt-format function tests (`fnrun test`): a case is a directory holding `.expected/` (config.yaml:
what to run and what to expect; diff.patch: the package's change as `git diff`; results.yaml;
optional exec.sh, setup.sh, teardown.sh), run as kpt's e2e runner runs it with fnrun standing in
for kpt. discover finds cases, config reads them, runnable says which cannot run here, runner runs
one (commands, gitrepo, process, expect), suite runs many, report prints and writes JUnit XML."""

from .commands import RunOptions
from .config import CaseConfig, CaseError, load_config
from .discover import Case, find_cases, selected
from .runner import ERROR, FAIL, PASS, SKIP, UPDATED, Settings, Verdict, run_case
from .suite import failed, run_suite

__all__ = ["Case", "CaseConfig", "CaseError", "ERROR", "FAIL", "PASS", "RunOptions", "SKIP", "Settings", "UPDATED", "Verdict",
           "failed", "find_cases", "load_config", "run_case", "run_suite", "selected"]
