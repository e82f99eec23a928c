"""The README's first command, as a new user runs it: in a copy of the repository's tracked files
(no .venv yet), verbatim, it sets up only what the nginx sample needs — a virtualenv with fnrun's
own dependencies from requirements-runtime.lock, none of the test tools — and runs the sample end
to end. Its time is printed (a benchmark's business, never asserted)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO

pytestmark = pytest.mark.engine  # the first command builds the sample's images and runs them


def _first_command() -> str:
    blocks = re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)
    command = blocks[0].strip()
    assert command.startswith("bash .ci/setup --sample") and "\n" not in command, command
    return command


@pytest.mark.skipif(os.geteuid() != 0, reason="the README's set-up runs as root (it may install apt packages)")
def test_the_readmes_first_command_sets_up_only_the_sample_and_runs_it(tmp_path: Path) -> None:
    copy = tmp_path / "fnrun"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("FNRUN_")}
    started = time.monotonic()
    done = subprocess.run(["bash", "-c", _first_command()], cwd=copy, env={**env, "CI": "true"}, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=1200)
    print(f"README first command: {time.monotonic() - started:.1f}s")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "kind: Deployment" in done.stdout and "replicas:" in done.stdout
    assert "installing requirements-runtime.lock" in done.stdout
    for test_only in ("podman", "runsc", "openssh-server", "nodejs", "docker-registry", "npm ci", "building images"):
        assert test_only not in done.stdout, (test_only, done.stdout)
    installed = subprocess.run([str(copy / ".venv" / "bin" / "python"), "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    for tool in ("pytest==", "hypothesis==", "testcontainers==", "mkdocs=="):
        assert tool not in installed.lower()
