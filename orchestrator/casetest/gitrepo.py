"""The temporary git repository a case's package runs in, as kpt's runner makes it: the copy
committed, and what the run changed read back as `git diff FIRST HEAD`. git runs without the
user's or the system's configuration, so the diff's bytes do not depend on the machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .config import CaseError


def _git(directory: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(directory), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_DIFF_OPTS": "", "LC_ALL": "C", "GIT_AUTHOR_NAME": "none", "GIT_AUTHOR_EMAIL": "none",
           "GIT_COMMITTER_NAME": "none", "GIT_COMMITTER_EMAIL": "none"}
    done = subprocess.run(["git", *args], cwd=directory, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise CaseError(f"git {args[0]} in {directory}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return done.stdout


def commit_all(directory: Path, message: str) -> str:
    """Commit everything in the directory (a repository made on first use); the commit's short hash."""
    if not (directory / ".git").exists():
        _git(directory, "init", "-q")
    _git(directory, "add", "--all")
    _git(directory, "commit", "-q", "--allow-empty", "--no-gpg-sign", "-m", message)
    return _git(directory, "log", "-n", "1", "--pretty=format:%h")


def changes_since(directory: Path, first: str) -> str:
    """What changed since `first`, as kpt's runner reads it: committed, then `git diff`, trimmed."""
    commit_all(directory, "second")
    return _git(directory, "diff", first, "HEAD").strip()
