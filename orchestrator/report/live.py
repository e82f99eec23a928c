"""The terminal display: a live board (rich) with every function of the run, its state and its
duration, results printed above it as they arrive, and a summary when the run ends. A function's
stderr is shown when it fails (or always, with --verbose), so a healthy run stays one screen."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from .base import HELD_LINES, Display, RunSummary, changes_text, describe
from .plain import file_lines

if TYPE_CHECKING:
    from ..events import FunctionReport
    from ..select.functions import FunctionSpec

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


@dataclass
class _Row:
    spec: FunctionSpec
    state: str = "pending"  # pending | running | ok | failed
    started: float = 0.0
    report: FunctionReport | None = None
    held: deque[str] = field(default_factory=lambda: deque(maxlen=HELD_LINES))


class _Board:
    """Re-rendered on every refresh, so running durations tick."""

    def __init__(self) -> None:
        self.rows: list[_Row] = []
        self.spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> RenderableType:
        table = Table.grid(padding=(0, 1))
        table.add_column(width=1, no_wrap=True)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=3)
        table.add_column(no_wrap=True, overflow="ellipsis", style="dim", ratio=2)
        table.add_column(no_wrap=True, justify="right", min_width=7)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=2)
        for row in self.rows:
            table.add_row(*self._cells(row))
        return table

    def _cells(self, row: _Row) -> tuple[RenderableType, ...]:
        where = row.spec.declared_in or "(command line)"
        name = Text(row.spec.name)
        if row.state == "pending":
            return Text("·", style="dim"), Text(row.spec.name, style="dim"), where, "", Text("waiting", style="dim")
        if row.state == "running":
            return self.spinner, name, where, f"{time.monotonic() - row.started:.1f}s", Text("running", style="cyan")
        assert row.report is not None
        duration = f"{row.report.duration:.2f}s" + (" (cached)" if row.report.cached else "") + (" (builtin)" if row.report.builtin else "")
        if row.state == "failed":
            return Text("✗", style="bold red"), name, where, duration, Text("failed", style="bold red")
        return Text("✓", style="bold green"), name, where, duration, Text(changes_text(row.report), style="green" if row.report.added + row.report.changed + row.report.removed else "dim")


class LiveDisplay(Display):
    def __init__(self, stream: IO[str], quiet: bool = False, verbose: bool = False) -> None:
        super().__init__(quiet=quiet, verbose=verbose)
        self.console = Console(file=stream, highlight=False, soft_wrap=False)
        self.board = _Board()
        self.live: Live | None = None

    def planned(self, specs: list[FunctionSpec]) -> None:
        self.board.rows = [_Row(spec) for spec in specs]
        if specs and self.live is None:
            self.live = Live(self.board, console=self.console, refresh_per_second=8, transient=False, redirect_stdout=False, redirect_stderr=False)
            self.live.start()

    def _row(self, spec: FunctionSpec, states: tuple[str, ...]) -> _Row:
        for row in self.board.rows:
            if row.state in states and row.spec == spec:
                return row
        row = _Row(spec)
        self.board.rows.append(row)
        return row

    def started(self, spec: FunctionSpec) -> None:
        row = self._row(spec, ("pending",))
        row.state, row.started = "running", time.monotonic()

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        text = f"[{spec.name}] {line.rstrip()}"
        if self.verbose:
            self.console.print(Text(text, style="dim"))
        else:
            self._row(spec, ("running",)).held.append(text)

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        row = self._row(spec, ("running", "pending"))
        row.report, row.state = report, "failed" if report.error else "ok"
        if report.error:  # its stderr; why it failed is the run's closing error line (the row says failed)
            for text in row.held:
                self.console.print(Text(text, style="dim"))
            if spec.defer_failure:  # a deferred failure the closing line may not name
                self.console.print(Text(f"✗ {spec.name}: {report.error}", style="bold red"))
        row.held.clear()
        for result in report.results:
            self.console.print(Text(f"  {describe(result)}", style=_SEVERITY_STYLE.get(result["severity"], "")))
        if self.live is not None:
            self.live.refresh()

    def summary(self, summary: RunSummary) -> None:
        self._stop()
        style = "bold yellow" if summary.check and summary.plan and summary.plan.changes else "bold"
        self.console.print(Text(f"fnrun {summary.command}{' --check' if summary.check else ''}: {summary.line()}", style=style))
        if self.verbose:
            for line in file_lines(summary):
                self.console.print(Text(f"  {line}"))

    def _stop(self) -> None:
        if self.live is not None:
            self.live.refresh()
            self.live.stop()
            self.live = None

    def close(self) -> None:
        self._stop()
