"""The command a case runs, fnrun standing in for kpt: `fnrun render` for a render case, the
`fnrun run` line kpt's runner builds for `kpt fn eval` for an eval case (with the flags that give
kpt fn eval's behaviour where `fnrun run` differs on purpose), or the case's exec.sh with a `kpt`
on PATH that is fnrun (orchestrator.casetest.kptshim)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import orchestrator

from .config import EVAL, CaseConfig

#: kpt fn eval names a new resource's file kind_name.yaml; fnrun run's default is name_kind
EVAL_FLAGS = ("--file-names", "kind_name")
SHIM_FLAGS = "FNRUN_CASETEST_FLAGS"  # fnrun's own flags the kpt shim adds to render and eval
SHIM_EVAL_FLAGS = "FNRUN_CASETEST_EVAL_FLAGS"  # and to eval alone


@dataclass(frozen=True)
class RunOptions:
    """fnrun's options that pass through to every case."""

    builtin_catalog: bool = False
    allow_exec: bool = False  # kpt fn eval runs --exec without it; fnrun asks for it
    image_pull_policy: str | None = None  # overrides the cases' own
    extra: tuple[str, ...] = ()  # any other fnrun flags, as given
    builtin: bool = True  # fnrun's own catalog images served in-process (FNRUN_BUILTIN, read at the edge)
    engine: str = "docker"  # the engine kpt's KRM_FN_RUNTIME names, read at the edge: a case may ask for another

    def flags(self) -> list[str]:
        return (["--builtin-catalog"] if self.builtin_catalog else []) + list(self.extra)


def fnrun_command() -> list[str]:
    """This fnrun: the interpreter running it, with orchestrator importable."""
    return [sys.executable, "-m", "orchestrator"]


def render_command(package: Path, config: CaseConfig, options: RunOptions, results: Path | None, out: Path | None) -> list[str]:
    command = [*fnrun_command(), "render", str(package)]
    command += ["--results-dir", str(results)] if results else []
    command += ["-o", str(out)] if out else []
    command += _pull_policy(config, options)
    command += ["--allow-exec"] if config.allow_exec or options.allow_exec else []
    command += ["--allow-network"] if config.allow_network else []
    return command + options.flags()


def eval_command(case: Path, package: Path, config: CaseConfig, options: RunOptions, results: Path | None, out: Path | None) -> list[str]:
    """kpt's runner's `kpt fn eval PKG ...` line, fnrun's spelling; execPath and fnConfig are
    read relative to the case's `.expected/` (or, where a suite names them relative to the
    package, from the copy)."""
    command = [*fnrun_command(), "run", str(package)]
    command += ["--results-dir", str(results)] if results else []
    command += ["-o", str(out)] if out else []
    command += _pull_policy(config, options)
    command += ["--network"] if config.network else []
    if config.image:
        command += ["--image", config.image]
    elif config.exec_path:
        command += ["--exec", str(_from_expected(case, package, config.exec_path)), "--allow-exec"]
    command += ["--tag", config.tag] if config.tag else []
    command += ["--fn-config", str(_from_expected(case, package, config.fn_config))] if config.fn_config else []
    command += ["--include-meta-resources"] if config.include_meta_resources else []
    command += [*EVAL_FLAGS, *(["--allow-exec"] if options.allow_exec and not config.exec_path else []), *options.flags()]
    return command + (["--", *(f"{k}={v}" for k, v in config.args)] if config.args else [])


def _pull_policy(config: CaseConfig, options: RunOptions) -> list[str]:
    policy = options.image_pull_policy or config.image_pull_policy
    return ["--image-pull-policy", policy] if policy else []


def _from_expected(case: Path, package: Path, path: str) -> Path:
    from_expected = (case / ".expected" / path).resolve()
    return from_expected if from_expected.exists() else package / path


def shim_environment(bin_dir: Path, config: CaseConfig, options: RunOptions, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a case's scripts and commands run in: `kpt` and `fnrun` first on PATH,
    both this fnrun; the case's `env`; fnrun's pass-through flags for the shim."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    for name, module in (("kpt", "orchestrator.casetest.kptshim"), ("fnrun", "orchestrator")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec "{python}" -m {module} "$@"\n')
        script.chmod(0o755)
    env = dict(os.environ if base is None else base)
    importable = str(Path(orchestrator.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [importable, env.get("PYTHONPATH", "")]))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[SHIM_FLAGS] = " ".join(options.flags() + (_pull_policy(config, options) if options.image_pull_policy else []))
    env[SHIM_EVAL_FLAGS] = "--allow-exec" if options.allow_exec else ""
    env.update(dict(config.env))
    return env


def is_eval(config: CaseConfig) -> bool:
    return config.test_type == EVAL
