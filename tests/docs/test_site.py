"""The documentation site builds with warnings as errors (a broken link, an anchor that is gone or
a page left out of the nav fails), its command reference is generated from the CLI itself, and its
terminal pictures are real runs. The commands the pages show run in tests/cli/test_examples.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from orchestrator.cli import app
from testing.pipeline_helpers import REPO

pytestmark = pytest.mark.usefixtures("test_images")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "GITHUB_ACTIONS": ""}
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-4000:]
    assert "WARNING" not in built.stderr, built.stderr[-4000:]
    return out


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_every_command_and_option_is_in_the_reference(site: Path) -> None:
    page = _text((site / "reference" / "cli" / "index.html").read_text())
    root = typer.main.get_command(app)
    seen = 0

    def walk(path: list[str], command) -> None:
        nonlocal seen
        assert " ".join(path) in page, path
        for param in command.params:
            if param.param_type_name == "option" and not getattr(param, "hidden", False):
                for name in param.opts:
                    assert name in page, (path, name)
                    seen += 1
        for name, sub in getattr(command, "commands", {}).items():
            if not getattr(sub, "hidden", False):
                walk([*path, name], sub)

    for name, command in root.commands.items():
        walk(["fnrun", name], command)
    assert seen > 100


def test_the_terminal_pictures_are_real_runs(site: Path) -> None:
    live = (site / "images" / "live-run.svg").read_text()
    assert live.startswith("<svg") and "fnrun/nginx-template:v1" in live and "2&#160;added" in live.replace(" ", "&#160;")
    check = (site / "images" / "check-failure.svg").read_text()
    assert "diff&#160;--git" in check.replace(" ", "&#160;") and "would&#160;change" in check.replace(" ", "&#160;")


def test_every_page_is_built(site: Path) -> None:
    pages = sorted(p.relative_to(REPO / "docs").with_suffix("") for p in (REPO / "docs").rglob("*.md"))
    assert len(pages) >= 30
    for page in pages:
        built = site / page / "index.html" if page.name != "index" else site / page.parent / "index.html"
        assert built.is_file(), page


def test_no_file_points_outside_the_repository() -> None:
    """The decisions the code follows are the docs' reference pages; no tracked file cites a note
    that is not in the repository."""
    outside = ("SPEC" + "-NOTES", "/work/" + "shared")
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    hits = [name for name in tracked if (REPO / name).is_file() and any(word in (REPO / name).read_text(errors="replace") for word in outside)]
    assert hits == []
