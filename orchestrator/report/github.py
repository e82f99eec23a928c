"""GitHub Actions: each function's output in a collapsible group (opened only when there is
output to hold), error and warning results as workflow annotations on the line where their
resource starts, `--check` drift as an error annotation on the first line that would change, and
the error that ends a run as an annotation on its file and line when it names one (a YAML syntax
error, a bad Kptfile field). Paths are relative to the repository's top level (report.paths)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..write.diff import first_changed_line
from .base import RunSummary, describe
from .locate import resource_line
from .paths import repo_path
from .plain import PlainEvents

if TYPE_CHECKING:
    from ..errors import FnrunError
    from ..events import FunctionReport
    from ..select.functions import FunctionSpec


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    """`::name key=value,...::message`, escaped as the runner wants."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


class GitHubDisplay(PlainEvents):
    def __init__(self, stream: IO[str] | None = None, quiet: bool = False, verbose: bool = False, root: Path | None = None) -> None:
        super().__init__(stream, quiet=quiet, verbose=verbose)
        self.root = root
        self._group_open = False

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        if not self.quiet and not self._group_open:  # a group holds output: none is opened empty
            where = f" ({spec.declared_in})" if spec.declared_in else ""
            self.say(f"::group::{escape_data(spec.name + where)}")
            self._group_open = True
        super().stderr(spec, line)

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        self._end_group()
        super().finished(spec, report)

    def _end_group(self) -> None:
        if self._group_open:
            self.say("::endgroup::")
            self._group_open = False

    def result(self, spec: FunctionSpec, result: dict) -> None:
        severity = result["severity"]
        if severity not in ("error", "warning"):
            super().result(spec, result)
            return
        file = given if isinstance(given := result.get("file"), dict) else {}
        path = str(file.get("path") or "")
        line = resource_line(self.root, path, file.get("index"), result.get("resourceRef")) if path and self.root else None
        if line is None:
            self.say(command(severity, describe(result).split(": ", 1)[1]))
            return
        field = given if isinstance(given := result.get("field"), dict) else {}
        message = str(result["message"]) + (f" (field {field['path']})" if field.get("path") else "")
        self.say(command(severity, message, file=self.relative(path), line=line))

    def relative(self, path: str) -> str:
        """A package path as the repository sees it."""
        assert self.root is not None
        return repo_path(self.root, path)

    def failed(self, err: FnrunError) -> None:
        """The error that ends the run, as an annotation on the file (and line) it names."""
        from ..write.diff import Drift

        if not isinstance(err, Drift):  # drift is annotated file by file in the summary
            self.say(error_command(err, self.root))
        err.annotated = True  # the CLI edge need not annotate it again

    def summary(self, summary: RunSummary) -> None:
        super().summary(summary)
        if not (summary.check and summary.plan and summary.plan.changes and self.root):
            return
        for change in summary.plan.changes:
            if change.old is None:
                self.say(command("error", f"fnrun {summary.command} would create {self.relative(change.path)}"))
            else:
                what = "delete this file" if change.new is None else "change this file"
                self.say(command("error", f"fnrun {summary.command} would {what}", file=self.relative(change.path), line=first_changed_line(change)))

    def close(self) -> None:
        self._end_group()


def error_command(err: FnrunError, root: Path | None) -> str:
    """`::error file=F,line=N::message` when the message starts with a file of the package (or of
    the working directory), `PATH:LINE: ...` or `PATH: ...`; else a plain `::error::message`."""
    message = str(err)
    head, sep, _rest = message.partition(": ")
    path, colon, line = head.rpartition(":")
    if not (colon and line.isdigit()):
        path, line = head, ""
    base = root if root is not None else Path(".")
    if sep and path and len(path) < 4096 and (base / path).is_file():
        return command("error", message, file=repo_path(base, path), line=line or None)
    return command("error", message)


def annotate_error(err: FnrunError, stream: IO[str] | None = None, environ: Mapping[str, str] = os.environ) -> None:
    """At the CLI edge: an error no display annotated (a bad flag, a command without a display)."""
    if environ.get("GITHUB_ACTIONS") == "true" and not err.annotated:
        print(error_command(err, None), file=stream or sys.stderr)
