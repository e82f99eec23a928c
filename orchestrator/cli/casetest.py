"""`fnrun test`: run kpt-format function test cases (orchestrator.casetest) and report them as a
test runner does; exit 0 when every case that ran passed, 1 when any failed, 2 for bad usage."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import typer

from ..option_schema import PULL_POLICIES
from . import options as opts
from .app import app
from .helptext import PanelCommand

EXAMPLES = ("Examples:\n"
            "  fnrun test my-function/tests                         # every case (a directory with .expected/) under it\n"
            "  fnrun test e2e/testdata/fn-render --builtin-catalog   # kpt's suite, its catalog functions in-process\n"
            "  fnrun test tests -k set-labels -j 4 --junit-xml report.xml\n"
            "  fnrun test tests/new-case --update                    # write diff.patch and results.yaml from the run")


@app.command("test", cls=PanelCommand, epilog=EXAMPLES)
@opts.takes(opts.named("builtin_catalog", "allow_exec"))
def test_command(
    paths: list[Path] = typer.Argument(None, help="Cases, or directories to look for cases in (default: the current one)."),
    pattern: str | None = typer.Option(None, "-k", metavar="PATTERN", help="Only cases whose name contains PATTERN (`not PATTERN`: all others)."),
    update: bool = typer.Option(False, "--update", help="Write each case's diff.patch and results.yaml from what its run did."),
    junit_xml: Path | None = typer.Option(None, "--junit-xml", metavar="PATH", help="Also write a JUnit XML report to PATH."),
    jobs: int = typer.Option(1, "-j", "--jobs", min=1, help="Cases to run at once (cases marked sequential run alone)."),
    case_timeout: float = typer.Option(600.0, "--case-timeout", min=1, metavar="SECONDS", help="Seconds before a case's script or command is killed."),
    compare: str = typer.Option("exact", "--compare", metavar="exact|data", help="exact: kpt's rules (stderr, results, the diff byte for byte); data: exit status and resources as data only (for suites whose stderr is kpt's own)."),
    image_pull_policy: str | None = typer.Option(None, "--image-pull-policy", help="Overrides every case's own: always | ifNotPresent | never."),
    **values: Any,
) -> int:
    """Run kpt-format function tests: each directory holding `.expected/`, as kpt's e2e runner runs it.

    Each case runs twice from a fresh git copy: setup.sh, then exec.sh (with a `kpt` on PATH that
    is fnrun) or `fnrun render`/`fnrun run` per testType; the exit code, stdErr/stdOut, results.yaml
    and the package's `git diff` against diff.patch are checked, then teardown.sh. A case fnrun
    cannot run here (an image neither local nor in-process, WASM, a registry) is skipped with why."""
    from .. import casetest
    from ..errors import InputError

    if image_pull_policy is not None and image_pull_policy not in PULL_POLICIES:
        raise InputError(f"--image-pull-policy {image_pull_policy!r}: expected {', '.join(PULL_POLICIES[:-1])} or {PULL_POLICIES[-1]}")
    if compare not in ("exact", "data"):
        raise InputError(f"--compare {compare!r}: expected exact or data")
    roots = list(paths or [Path(".")])
    for root in roots:
        if not root.is_dir():
            raise InputError(f"{root}: no such directory")
    found = casetest.find_cases(roots)
    cases = casetest.selected(found, pattern)
    if not cases:
        where = ", ".join(map(str, roots))
        raise InputError(f"{where}: no case (a directory holding .expected/)" + (f" matches -k {pattern!r}" if found else ""))
    from ..runtimes.container.engine_choice import requested_runtime
    from ..settings import Settings

    options = casetest.RunOptions(values["builtin_catalog"], values["allow_exec"], image_pull_policy,
                                  builtin=Settings.from_environ().builtin, engine=requested_runtime(os.environ))
    settings = casetest.Settings(options, Path.cwd(), case_timeout, update, compare)
    from ..casetest import report

    started = time.monotonic()
    verdicts = casetest.run_suite(cases, settings, jobs, lambda verdict: print(report.line(verdict), flush=True))
    seconds = time.monotonic() - started
    report.details(verdicts, sys.stdout)
    print(f"\n{report.summary(verdicts, seconds)}")
    if junit_xml is not None:
        report.write_junit(verdicts, junit_xml, seconds)
    return 1 if casetest.failed(verdicts) else 0


init_app = typer.Typer(help="Start something new: a function with its first test case.", no_args_is_help=True)
app.add_typer(init_app, name="init")


@init_app.command("function", cls=PanelCommand, epilog="Example:\n  fnrun init function add-greeting && fnrun test add-greeting/tests")
def init_function(
    name: str = typer.Argument(..., help="The function's name (a DNS label: add-greeting); the directory it is written to."),
    directory: Path = typer.Option(Path("."), "--directory", "-C", help="Where to create NAME/ (default: here)."),
) -> None:
    """Scaffold a Python function on fnrun's SDK: NAME/NAME.py, a Dockerfile, and a test case that passes."""
    from ..casetest.scaffold import init_function as scaffold

    root = scaffold(name, directory)
    print(f"fnrun init: wrote {root}/ (function, Dockerfile, tests/); next: fnrun test {root}/tests", file=sys.stderr)
