"""One event interface (orchestrator.events.Events): a library caller's listener overrides only
what it needs and hears every event of a run, the run's own ones included, in order; a unit run
in a worker hands its events on as the same calls."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from orchestrator import api
from orchestrator.errors import FnrunError
from orchestrator.events import Events, FunctionReport, RunSummary
from orchestrator.kinds import Kind
from orchestrator.requests import Functions, Output, RunRequest, SandboxSettings, Speed
from orchestrator.run.units import Buffer
from orchestrator.select.functions import FunctionSpec

SCRIPT = f"#!{sys.executable}\nimport sys\nsys.stderr.write('hello\\n')\nsys.stdout.write(sys.stdin.read())\n"


class Heard(Events):
    """Overrides some events only: the rest are the base class's no-ops."""

    def __init__(self) -> None:
        self.heard: list[str] = []

    def started(self, spec: FunctionSpec) -> None:
        self.heard.append(f"started {Path(spec.name).name}")

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        self.heard.append(f"stderr {line}")

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        self.heard.append(f"finished {report.kind} {report.exit_code}")

    def summary(self, summary: RunSummary) -> None:
        self.heard.append(f"summary {len(summary.reports)}")

    def failed(self, err: FnrunError) -> None:
        self.heard.append("failed")

    def close(self) -> None:
        self.heard.append("close")


def _request(tmp_path: Path, script: str) -> RunRequest:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    fn = tmp_path / "fn.py"
    fn.write_text(script)
    fn.chmod(0o755)
    return RunRequest(directory=str(package), functions=Functions(exec_path=str(fn)), sandbox=SandboxSettings(enable_exec=True),
                      output=Output(quiet=True), speed=Speed(cache=False))


def test_a_listener_hears_the_functions_and_the_run_end(tmp_path: Path) -> None:
    listener = Heard()
    api.run(_request(tmp_path, SCRIPT), listener, stdout=io.StringIO())
    assert listener.heard == ["started fn.py", "stderr hello", "finished exec 0", "summary 1", "close"]


def test_a_listener_hears_the_failure_before_it_is_raised(tmp_path: Path) -> None:
    listener = Heard()
    with pytest.raises(FnrunError):
        api.run(_request(tmp_path, f"#!{sys.executable}\nimport sys\nsys.exit(3)\n"), listener, stdout=io.StringIO())
    assert listener.heard == ["started fn.py", "finished exec 3", "failed", "close"]


def test_a_buffer_holds_events_then_tells_them_as_they_come() -> None:
    spec = FunctionSpec(kind=Kind.EXEC, exec_path="/bin/fn")
    buffer, listener = Buffer(), Heard()
    buffer.started(spec)
    buffer.stderr(spec, "early")
    assert listener.heard == [] and not buffer.live
    buffer.go_live(listener)
    buffer.finished(spec, FunctionReport("fn", Kind.EXEC))
    assert listener.heard == ["started fn", "stderr early", "finished exec 0"] and buffer.calls == []
