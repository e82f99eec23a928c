"""What every runtime owes the pipeline, checked the same way for each through the protocol alone
(tests/testing/runtimes.py): items through, a failure returned as an exit code with its stderr
lines delivered, a hang ended by the timeout, a flood ended by the output cap, each as one
FunctionError naming the function."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.errors import FunctionError
from orchestrator.runtimes import Sandbox
from testing.runtime_fixtures import require_base_image
from testing.runtimes import Subject, builtin_subject, close_warm_pools, container_subject, drive, drive_bytes, exec_subject, open_warm_pool, starlark_subject, warm_subject


@pytest.fixture(scope="module", autouse=True)
def _warm_containers_go() -> Iterator[None]:
    open_warm_pool()
    yield
    close_warm_pools()


ITEMS = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": {"k": str(i)}} for i in range(3)]


def subjects() -> list[Subject]:
    base = require_base_image()
    return [exec_subject(), container_subject(base), warm_subject(base), starlark_subject(), builtin_subject()]


def cases(behaviour: str) -> list:
    return [pytest.param(s, id=s.name) for s in subjects() if behaviour in s.behaviours]


@pytest.mark.parametrize("subject", cases("passes"))
def test_items_go_through(subject: Subject, tmp_path: Path) -> None:
    driven = drive(subject, "passes", tmp_path, ITEMS)
    assert driven.output.exit_code == 0, driven.output.stderr
    assert [item["metadata"]["name"] for item in driven.items] == ["cm-0", "cm-1", "cm-2"]
    assert driven.output.duration >= 0


@pytest.mark.parametrize("subject", cases("fails"))
def test_a_failure_is_an_exit_code_with_its_stderr_lines(subject: Subject, tmp_path: Path) -> None:
    driven = drive(subject, "fails", tmp_path, ITEMS)
    assert driven.output.exit_code != 0
    said = "\n".join(driven.stderr_lines) or driven.output.stderr
    assert any(words in said for words in ("oops: the function says no", "bad key!")), said


@pytest.mark.parametrize("subject", cases("hangs"))
def test_a_hang_ends_at_the_timeout_as_one_error_naming_the_function(subject: Subject, tmp_path: Path) -> None:
    call_name = subject.invocation("hangs", tmp_path).name
    started = time.monotonic()
    with pytest.raises(FunctionError, match="timed out") as caught:
        drive(subject, "hangs", tmp_path, ITEMS, Sandbox(timeout=2.0, image_pull_policy="never"))
    assert time.monotonic() - started < 30
    assert call_name in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("subject", cases("floods"))
def test_a_flood_ends_at_the_output_cap_as_one_error_naming_the_function(subject: Subject, tmp_path: Path) -> None:
    call_name = subject.invocation("floods", tmp_path).name
    with pytest.raises(FunctionError, match="wrote more than 1M") as caught:
        drive(subject, "floods", tmp_path, ITEMS, replace(Sandbox(image_pull_policy="never"), max_output=1 << 20))
    assert call_name in str(caught.value)


@pytest.mark.parametrize("subject", cases("echoes"))
def test_megabytes_of_any_bytes_come_back_unchanged(subject: Subject, tmp_path: Path) -> None:
    data = os.urandom(5 * 1024 * 1024)
    out = drive_bytes(subject, "echoes", tmp_path, data)
    assert out.exit_code == 0 and out.stdout == data


@pytest.mark.parametrize("subject", cases("chatty"))
def test_output_before_reading_input_does_not_deadlock(subject: Subject, tmp_path: Path) -> None:
    out = drive_bytes(subject, "chatty", tmp_path, b"y" * 4_000_000)
    assert out.stdout == b"x" * 4_000_000 + b"y" * 4_000_000


@pytest.mark.parametrize("subject", cases("streams"))
def test_stderr_lines_arrive_while_the_function_runs_and_the_exit_code_is_returned(subject: Subject, tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    out = drive_bytes(subject, "streams", tmp_path, b"x", lambda line: seen.append((time.monotonic(), line)))
    assert out.exit_code == 4
    assert [line for _, line in seen] == ["first", "second", "no newline"]
    assert seen[1][0] - seen[0][0] > 0.7  # "first" came while the function was still running
    assert out.stderr == "first\nsecond\nno newline"
