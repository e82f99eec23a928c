"""Score fnrun against a kpt-format suite: kpt's fn-render and fn-eval e2e suites, the function catalog's tests.

    .venv/bin/python bench/conformance_render.py /path/to/kpt-checkout --builtin-catalog [-k NAME]
    .venv/bin/python bench/conformance_render.py /path/to/kpt-checkout --suite fn-eval --builtin-catalog --allow-exec
    .venv/bin/python bench/conformance_render.py /path/to/krm-functions-catalog --builtin-catalog

A thin wrapper over `fnrun test --compare data` (orchestrator.casetest): the cases are the suites'
own (every directory, at any depth, that holds `.expected/`; kpt's fn-render: 101 and fn-eval: 65
at kpt 23c57d7; the catalog: its `tests/` and `examples/`), each run as kpt's runner runs it with
fnrun standing in for kpt, scored by what the functions do to the package (exit status, resources
as data, stdOut as data) since the suites' stderr and results files are kpt's own words. What this
adds to `fnrun test`: the suites' layouts, the named known differences (conformance_known.py), and
with --builtin-catalog a summary per catalog function. --allow-exec is fnrun's one deliberate
difference: kpt fn eval runs --exec without it, so the fn-eval suite is scored with it. A case that
cannot run here (a registry, WASM, an image neither built-in nor local, another tool in exec.sh)
is reported as such, never as a pass. Nothing from the checkouts is copied into this repository."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator import casetest  # noqa: E402
from orchestrator.casetest.config import CaseError, parse_config  # noqa: E402
from orchestrator.casetest.discover import case_dirs  # noqa: E402
from orchestrator.casetest.runnable import cannot_run, images_of  # noqa: E402
from orchestrator.runtimes.host.kpt_catalog import catalog_name  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance_known import KNOWN  # noqa: E402

CANNOT = "cannot-run"
_OUTCOMES = {casetest.PASS: "pass", casetest.FAIL: "fail", casetest.SKIP: CANNOT, casetest.ERROR: CANNOT}


@dataclass
class Verdict:
    case: str
    outcome: str  # pass | fail | cannot-run
    why: str = ""
    functions: frozenset[str] = frozenset()  # the catalog functions the case runs (--builtin-catalog)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kpt", type=Path, help="a kpt checkout (its e2e/testdata/SUITE is read), a krm-functions-catalog checkout, or any directory of kpt-format cases")
    parser.add_argument("--suite", default="fn-render", help="with a kpt checkout: fn-render (default) or fn-eval")
    parser.add_argument("--allow-exec", action="store_true", help="add fnrun's --allow-exec to every kpt fn eval (kpt needs none)")
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    parser.add_argument("--builtin-catalog", action="store_true", help="run kpt's catalog functions by fnrun's builtins")
    args = parser.parse_args()
    suite = args.kpt.resolve()
    cases_dir = suite / "e2e/testdata" / args.suite
    if cases_dir.is_dir():
        cases, workdir = [(c, c.relative_to(cases_dir).as_posix()) for c in expected_cases(cases_dir)], suite / "e2e"
    elif (suite / "tests").is_dir() and (suite / "examples").is_dir():
        cases, workdir = catalog_cases(suite), suite
    elif suite.is_dir() and expected_cases(suite):
        cases, workdir = [(c, c.relative_to(suite).as_posix()) for c in expected_cases(suite)], suite
    else:
        parser.error(f"{args.kpt}: neither a kpt checkout (e2e/testdata/{args.suite}), a krm-functions-catalog checkout, nor a directory of cases")
    verdicts = []
    for case, name in cases:
        if args.only and args.only not in name:
            continue
        verdict = run_case(case, name, workdir, args.builtin_catalog, args.allow_exec)
        verdicts.append(verdict)
        known = f"  [known difference: {KNOWN[name]}]" if verdict.outcome == "fail" and name in KNOWN else ""
        print(f"{verdict.outcome:10}  {verdict.case}  {verdict.why}{known}", flush=True)
    ran = [v for v in verdicts if v.outcome != CANNOT]
    passed = sum(v.outcome == "pass" for v in ran)
    unexplained = [v.case for v in ran if v.outcome == "fail" and v.case not in KNOWN]
    if args.builtin_catalog:
        print_per_function(verdicts)
    print(f"\n{len(verdicts)} cases: {passed} pass, {len(ran) - passed} fail ({len(ran) - passed - len(unexplained)} known differences), "
          f"{len(verdicts) - len(ran)} cannot run here")
    if unexplained:
        print(f"failing without a named difference: {', '.join(unexplained)}")
    return 1 if unexplained else 0


def expected_cases(root: Path) -> list[Path]:
    """Every directory below root that holds `.expected/`, at any depth, in path order."""
    return [case for case in case_dirs(root) if case != root]


def catalog_cases(catalog: Path) -> list[tuple[Path, str]]:
    """The catalog's cases: `.expected/` folders at any depth of `tests/` and `examples/`."""
    return [(case, case.relative_to(catalog).as_posix()) for top in ("tests", "examples") for case in expected_cases(catalog / top)]


def print_per_function(verdicts: list[Verdict]) -> None:
    """pass/runnable per builtin function (a case counts for every function it runs)."""
    table: dict[str, list[int]] = {}
    for verdict in verdicts:
        for function in sorted(verdict.functions):
            row = table.setdefault(function, [0, 0, 0, 0])
            row[0] += verdict.outcome == "pass"
            row[1] += verdict.outcome != CANNOT
            row[2] += verdict.outcome == CANNOT
            row[3] += verdict.outcome == "fail" and verdict.case in KNOWN
    print("\nper builtin function (pass/runnable, known differences, cannot run):")
    for function, (passed, ran, skipped, known) in sorted(table.items()):
        print(f"  {function:18} {passed}/{ran}" + (f"  ({known} known)" if known else "") + (f"  ({skipped} cannot run)" if skipped else ""))


def run_case(case: Path, name: str, workdir: Path, builtin_catalog: bool = False, allow_exec: bool = False) -> Verdict:
    """`fnrun test --compare data` over one case; a case fnrun test calls malformed cannot run here."""
    settings = casetest.Settings(casetest.RunOptions(builtin_catalog, allow_exec), workdir, 600.0, False, "data")
    verdict = casetest.run_case(casetest.Case(case, name), settings)
    functions = frozenset()
    if builtin_catalog:
        try:
            functions = frozenset(filter(None, map(catalog_name, images_of(case, casetest.load_config(case)))))
        except CaseError:
            pass
    return Verdict(name, _OUTCOMES[verdict.outcome], verdict.reason, functions)


def _cannot_run(case: Path, config: dict, builtin_catalog: bool) -> str | None:
    """Why the case cannot run on this machine, or None (orchestrator.casetest.runnable)."""
    return cannot_run(case, parse_config(config, str(case / ".expected/config.yaml")), casetest.RunOptions(builtin_catalog))


if __name__ == "__main__":
    sys.exit(main())
