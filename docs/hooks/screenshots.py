"""MkDocs hook: the terminal pictures in the docs are real runs, recorded when the site is built.

Each picture runs a command from the docs in a real terminal (a tmux pane, 120 columns) over a
fresh copy of samples/, reads the final screen with its colours (wrapped lines joined), and has rich write it as SVG.
Nothing is drawn by hand, so a picture shows what fnrun prints today."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 120, 80
DONE = "__fnrun_docs_done__"

#: picture (under docs/images/) -> the command it records, run from a copy of samples/'s parent
SHOTS = {
    "images/live-run.svg": "fnrun run samples/nginx --no-cache",
    "images/check-failure.svg": "fnrun run samples/set-labels --check",
}


def on_files(files: Any, config: Any, **_: Any) -> Any:
    from mkdocs.structure.files import File

    for path, command in SHOTS.items():
        files.append(File.generated(config, path, content=record(command)))
    return files


def record(command: str) -> str:
    """The SVG of `command`'s final screen in a real terminal."""
    from rich.console import Console
    from rich.text import Text

    screen = run_in_terminal(command)
    console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    console.print(Text(f"$ {command}", style="bold"))
    console.print(Text.from_ansi(screen))
    return console.export_svg(title=command.split(" --")[0])


def run_in_terminal(command: str) -> str:
    if shutil.which("tmux") is None:
        raise SystemExit("docs: tmux is needed to record the terminal pictures (apt-get install tmux, or run .ci/setup)")
    with tempfile.TemporaryDirectory(prefix="fnrun-docs-") as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "samples", work / "samples")
        shim = work / "bin" / "fnrun"
        shim.parent.mkdir()
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m orchestrator \"$@\"\n")
        shim.chmod(0o755)
        session = f"fnrun-docs-{os.getpid()}-{abs(hash(command)) % 10_000}"
        script = f"cd {shlex.quote(str(work))} && export PATH={shlex.quote(str(shim.parent))}:$PATH GITHUB_ACTIONS= PYTHONPATH={shlex.quote(str(REPO))}; {command}; echo {DONE}; sleep 120"
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(WIDTH), "-y", str(HEIGHT), script], check=True)
        try:
            screen = _wait(session)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    lines = screen.rstrip("\n").splitlines()
    kept = lines[: next(i for i, line in enumerate(lines) if DONE in line)]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def _wait(session: str, timeout: float = 300) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-e", "-J", "-t", session], capture_output=True, text=True).stdout
        if DONE in screen:
            return screen
        time.sleep(0.2)
    raise SystemExit(f"docs: the terminal picture of session {session} did not finish in {timeout:.0f}s")
