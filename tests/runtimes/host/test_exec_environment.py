"""Exec functions from a virtualenv that is not activated: `#!/usr/bin/env python3` scripts get the
interpreter fnrun runs in, even when the first python3 on PATH has no third-party packages (a fresh
machine's system Python)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orchestrator.runtimes.host.exec import fnrun_environment
from testing.pipeline_helpers import REPO

IN_VENV = sys.prefix != sys.base_prefix
FNRUN = Path(sys.executable).parent / "fnrun"


def bare_python_dir(tmp_path: Path) -> Path:
    """A directory whose `python3` is the base interpreter without any site-packages (-S): what
    `/usr/bin/env python3` finds on a machine whose system Python has nothing installed."""
    bin_dir = tmp_path / "system-bin"
    bin_dir.mkdir()
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec {base} -S "$@"\n')
    wrapper.chmod(0o755)
    check = subprocess.run([str(wrapper), "-c", "import ruamel.yaml"], capture_output=True)
    assert check.returncode != 0, "the bare python3 must lack ruamel for this test to mean anything"
    return bin_dir


def run_unactivated(args: list[str], tmp_path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`.venv/bin/fnrun ...` by absolute path, no VIRTUAL_ENV, PATH starting with the bare python3."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(bare_python_dir(tmp_path)), "/usr/bin", "/bin"])
    return subprocess.run([str(FNRUN), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.mark.skipif(not IN_VENV or not FNRUN.exists(), reason="needs fnrun installed in a virtualenv")
def test_catalog_module_runs_as_exec_from_an_unactivated_virtualenv(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    shutil.copytree(REPO / "samples" / "set-labels", package)
    config = package / "fn-config.yaml"
    result = run_unactivated(
        ["run", str(package), "--exec", "functions/set_labels.py", "--enable-exec", "--fn-config", str(config)],
        tmp_path,
        REPO,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "ModuleNotFoundError" not in result.stderr


@pytest.mark.skipif(not IN_VENV or not FNRUN.exists(), reason="needs fnrun installed in a virtualenv")
def test_exec_script_sees_fnruns_interpreter_and_other_commands_stay_reachable(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
    fn = tmp_path / "where.py"
    fn.write_text(textwrap.dedent("""\
        #!/usr/bin/env python3
        import os, shutil, sys
        import ruamel.yaml  # only in fnrun's virtualenv
        print(f"interpreter={sys.prefix} venv={os.environ.get('VIRTUAL_ENV')} sh={shutil.which('sh')}", file=sys.stderr)
        sys.stdout.write(sys.stdin.read())
    """))
    fn.chmod(0o755)
    result = run_unactivated(["run", str(package), "--exec", str(fn), "--enable-exec", "--verbose"], tmp_path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"interpreter={sys.prefix} venv={sys.prefix}" in result.stderr
    assert "sh=/usr/bin/sh" in result.stderr or "sh=/bin/sh" in result.stderr


def test_environment_puts_the_virtualenv_first_once_and_keeps_the_rest() -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = fnrun_environment({"PATH": f"/usr/bin:{bin_dir}:/bin", "HOME": "/h", "PYTHONHOME": "/x"})
    if IN_VENV:
        assert env["PATH"] == f"{bin_dir}:/usr/bin:/bin"
        assert env["VIRTUAL_ENV"] == sys.prefix
        assert "PYTHONHOME" not in env
    else:
        assert env["PATH"] == f"/usr/bin:{bin_dir}:/bin"
    assert env["HOME"] == "/h"
