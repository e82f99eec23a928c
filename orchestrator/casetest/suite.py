"""Many cases: up to `jobs` at once (threads; each case is its own processes), the cases marked
`sequential` one at a time after the others, each verdict handed to `report` as it is reached."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .config import CaseError, load_config
from .discover import Case
from .runner import ERROR, FAIL, Settings, Verdict, run_case


def run_suite(cases: list[Case], settings: Settings, jobs: int = 1, report: Callable[[Verdict], None] = lambda v: None) -> list[Verdict]:
    """The verdicts, in the cases' order."""
    alone = [case for case in cases if _sequential(case)]
    together = [case for case in cases if case not in alone]
    verdicts: dict[Case, Verdict] = {}

    def one(case: Case) -> None:
        verdict = run_case(case, settings)
        verdicts[case] = verdict
        report(verdict)

    if jobs > 1 and len(together) > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(one, together))
    else:
        for case in together:
            one(case)
    for case in alone:
        one(case)
    return [verdicts[case] for case in cases]


def _sequential(case: Case) -> bool:
    try:
        return load_config(case.path).sequential
    except CaseError:
        return False


def failed(verdicts: list[Verdict]) -> bool:
    return any(v.outcome in (FAIL, ERROR) for v in verdicts)
