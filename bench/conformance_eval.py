"""How kpt's runner (pkg/test/runner) turns a `testType: eval` case into a `kpt fn eval` command
line, with fnrun standing in for kpt (bench/conformance_render.py runs it).

kpt's runner: `kpt fn eval PKG [--results-dir DIR] [-o PKG/out] [--image-pull-policy P]
[--network] (--image IMG | --exec PATH) [--tag T] [--fn-config PATH] [--include-meta-resources]
-- k=v...`, the working directory the suite's e2e/, and execPath/fnConfig relative to the case's
`.expected/` (the original case, not the copy). fnrun gets the flags that give kpt fn eval's
behaviour where `fnrun run` differs on purpose (the same the exec.sh shim adds)."""

from __future__ import annotations

from pathlib import Path

EVAL_FLAGS = ["--file-names", "kind_name"]  # kpt at 23c57d7 keeps an in-package --fn-config out of the items, as fnrun does


def eval_command(case: Path, actual: Path, config: dict, fnrun: str, extra: list[str]) -> list[str]:
    """The command kpt's runner would start for this case, fnrun's spelling."""
    command = [fnrun, "run", str(actual)]
    if (case / ".expected/results.yaml").exists():
        command += ["--results-dir", str(actual.parent / "results")]
    if (case / "out").is_dir():
        command += ["-o", str(actual / "out")]
    if config.get("imagePullPolicy"):
        command += ["--image-pull-policy", str(config["imagePullPolicy"])]
    else:
        command += ["--image-pull-policy", "never"]  # no registry here: what is not local cannot run
    if config.get("network"):
        command += ["--network"]
    if config.get("image"):
        command += ["--image", str(config["image"])]
    elif config.get("execPath"):
        command += ["--exec", str(_from_expected(case, actual, str(config["execPath"])))]
    if config.get("tag"):
        command += ["--tag", str(config["tag"])]
    if config.get("fnConfig"):
        command += ["--fn-config", str(_from_expected(case, actual, str(config["fnConfig"])))]
    if config.get("includeMetaResources"):
        command += ["--include-meta-resources"]
    command += [*EVAL_FLAGS, *extra, "--quiet"]
    args = config.get("args") or {}
    return command + (["--", *(f"{k}={v}" for k, v in args.items())] if args else [])


def _from_expected(case: Path, actual: Path, path: str) -> Path:
    """kpt's runner reads execPath and fnConfig relative to the case's `.expected/`; a suite that
    names them relative to the package (the catalog's) is read from the copy."""
    from_expected = (case / ".expected" / path).resolve()
    return from_expected if from_expected.exists() else actual / path
