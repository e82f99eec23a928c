"""What `fnrun test` prints: a line per case as it ends (verdict, time, name, reason), the detail
of each failure after all the lines, a summary; and the JUnit XML report CI systems read
(pytest's shape: testsuites/testsuite/testcase with failure, error or skipped)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import TextIO

from .runner import ERROR, FAIL, PASS, SKIP, UPDATED, Verdict

LABELS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP", ERROR: "ERROR", UPDATED: "UPDATED"}


def line(verdict: Verdict) -> str:
    reason = f"  {verdict.reason}" if verdict.reason else ""
    return f"{LABELS[verdict.outcome]:7} {verdict.seconds:6.2f}s  {verdict.case.name}{reason}"


def details(verdicts: list[Verdict], stream: TextIO) -> None:
    for verdict in verdicts:
        if verdict.outcome == FAIL and verdict.detail:
            stream.write(f"\n--- {verdict.case.name}: {verdict.reason}\n{verdict.detail.rstrip()}\n")


def summary(verdicts: list[Verdict], seconds: float) -> str:
    counts = Counter(v.outcome for v in verdicts)
    parts = [f"{counts[outcome]} {word}" for outcome, word in ((PASS, "passed"), (FAIL, "failed"), (ERROR, "errors"),
                                                                (SKIP, "skipped"), (UPDATED, "updated")) if counts[outcome]]
    return f"{len(verdicts)} cases: {', '.join(parts) or 'none ran'} in {seconds:.2f}s"


def write_junit(verdicts: list[Verdict], path: Path, seconds: float) -> None:
    counts = Counter(v.outcome for v in verdicts)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name="fnrun test", tests=str(len(verdicts)), failures=str(counts[FAIL]),
                          errors=str(counts[ERROR]), skipped=str(counts[SKIP]), time=f"{seconds:.3f}")
    for verdict in verdicts:
        classname, _, name = verdict.case.name.rpartition("/")
        case = ET.SubElement(suite, "testcase", classname=classname.replace("/", ".") or "cases", name=name, time=f"{verdict.seconds:.3f}")
        if verdict.outcome == FAIL:
            ET.SubElement(case, "failure", message=verdict.reason).text = verdict.detail or verdict.reason
        elif verdict.outcome == ERROR:
            ET.SubElement(case, "error", message=verdict.reason).text = verdict.reason
        elif verdict.outcome == SKIP:
            ET.SubElement(case, "skipped", message=verdict.reason)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
