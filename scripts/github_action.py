"""The GitHub Action's check step (action.yml): run `fnrun render|run --check` over a package,
show the diff, set the step's outputs and summary, and exit with fnrun's exit code.

Run by the Action's own virtualenv's Python, with the inputs in FNRUN_COMMAND, FNRUN_PACKAGE and
FNRUN_ARGS. Why a script rather than shell: the arguments are a YAML list or text split as a shell
splits it (quotes kept together), never word-split on spaces, and the outputs come from fnrun's
JSON results document rather than from scraping its lines.

Outputs (GITHUB_OUTPUT): `changed` (true when files would change), `files` (those files, one a
line, as paths from the repository root), `exit-code` (fnrun's: 0 current, 3 drift, 1 a function
failed, 2 bad input, 4 the machine)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path, PurePosixPath

import yaml

COMMANDS = ("run", "render")


def arguments(raw: str) -> list[str]:
    """FNRUN_ARGS: a YAML list (`[--image-prefix, fnrun]`, or one `- item` a line), else text
    split as a shell would split it (so `--match-name 'my app'` stays two arguments)."""
    stripped = raw.strip()
    if stripped.startswith(("[", "- ")) or stripped == "-":
        try:
            value = yaml.safe_load(stripped)
        except yaml.YAMLError as err:
            raise ValueError(f"args is not a YAML list: {err.problem if hasattr(err, 'problem') else err}") from None
        if not isinstance(value, list) or not all(isinstance(item, (str, int, float, bool)) for item in value):
            raise ValueError("args as YAML must be a list of plain values")
        return [item if isinstance(item, str) else json.dumps(item) for item in value]
    try:
        return shlex.split(stripped)
    except ValueError as err:
        raise ValueError(f"args: {err}") from None


def changed_files(document: dict, package: str) -> list[str]:
    """The files the check says would change, as paths from the repository root."""
    files = (document.get("summary") or {}).get("files") or {}
    names = [name for kind in ("created", "updated", "deleted") for name in files.get(kind) or []]
    return sorted(str(PurePosixPath(package) / name) for name in names)


def set_outputs(values: dict[str, str]) -> None:
    """Each output in GITHUB_OUTPUT's multi-line form, with a delimiter the value cannot hold."""
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as out:
        for name, value in values.items():
            delimiter = "FNRUN_EOF"
            while delimiter in value:
                delimiter += "_"
            out.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def write_summary(command: str, package: str, code: int, files: list[str], error: str | None) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    verdict = {0: "up to date", 3: f"{len(files)} file{'s' if len(files) != 1 else ''} would change"}.get(code, f"failed (exit {code})")
    lines = [f"### fnrun {command} `{package}`: {verdict}", ""]
    lines += [f"- `{name}`" for name in files]
    if error and code not in (0, 3):
        lines += ["", f"> {error}"]
    with open(target, "a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def fail(message: str, code: int = 2) -> int:
    print(f"::error::fnrun action: {message}", flush=True)
    set_outputs({"changed": "false", "files": "", "exit-code": str(code)})
    return code


def main() -> int:
    command = os.environ.get("FNRUN_COMMAND", "run").strip()
    package = os.environ.get("FNRUN_PACKAGE", ".").strip() or "."
    if command not in COMMANDS:
        return fail(f"command must be run or render, not {command!r}")
    try:
        extra = arguments(os.environ.get("FNRUN_ARGS", ""))
    except ValueError as err:
        return fail(str(err))
    fnrun = Path(sys.executable).parent / "fnrun"
    argv = [str(fnrun), command, package, "--check", "--results-format", "json", *extra]
    print("$ " + shlex.join(["fnrun", *argv[1:]]), flush=True)
    done = subprocess.run(argv, stdout=subprocess.PIPE)  # stderr (progress, annotations) goes to the log as it comes
    try:
        document = json.loads(done.stdout)
    except ValueError:
        document = {}
        sys.stdout.buffer.write(done.stdout)
    files = changed_files(document, package)
    diff = document.get("diff") or ""
    if diff:
        print("::group::What would change", flush=True)
        print(diff, end="" if diff.endswith("\n") else "\n")
        print("::endgroup::", flush=True)
    set_outputs({"changed": "true" if files else "false", "files": "\n".join(files), "exit-code": str(done.returncode)})
    write_summary(command, package, done.returncode, files, document.get("error"))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
