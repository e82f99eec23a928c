"""Shell completion as a user installs it: the script `fnrun --show-completion` prints (for the
shell it runs from), loaded into a real bash, completes commands and options; zsh and fish ask
fnrun the same way and get answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent  # the virtualenv's fnrun, which the scripts call by name


def _bash_completions(words: list[str]) -> list[str]:
    # typer detects the user's shell from the process tree, which fails without a terminal (CI):
    # its own switch for tests makes --show-completion take the shell's name instead
    shown = dict(os.environ, _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    script = subprocess.run([sys.executable, "-m", "orchestrator", "--show-completion", "bash"], capture_output=True, text=True,
                            env=shown, timeout=120).stdout
    assert "complete -o default -F _fnrun_completion fnrun" in script, script
    program = f"""{script}
COMP_WORDS=({' '.join(words)})
COMP_CWORD={len(words) - 1}
_fnrun_completion fnrun
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split() or [f"(nothing; stderr: {done.stderr})"]


@pytest.mark.skipif(not (BIN / "fnrun").exists(), reason="fnrun is not installed in this interpreter's environment")
def test_bash_completes_commands_and_options() -> None:
    assert _bash_completions(["fnrun", "ren"]) == ["render"]
    assert {"--no-cache", "--no-builtin", "--no-warm"} <= set(_bash_completions(["fnrun", "run", "--no-"]))


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_ask_fnrun_as_their_scripts_do_and_get_answers(shell: str) -> None:
    """Their scripts (printed by --show-completion when run from that shell, which it detects)
    call fnrun with these variables; neither shell is on this machine to load them."""
    env = dict(os.environ, _FNRUN_COMPLETE=f"complete_{shell}", _TYPER_COMPLETE_ARGS="fnrun ren", _TYPER_COMPLETE_FISH_ACTION="get-args")
    answer = subprocess.run([sys.executable, "-m", "orchestrator"], capture_output=True, text=True, env=env, timeout=120)
    assert answer.returncode == 0, answer.stderr
    assert "render" in answer.stdout
