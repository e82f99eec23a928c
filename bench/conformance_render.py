"""Score `fnrun render` against kpt's own conformance cases (e2e/testdata/fn-render).

    .venv/bin/python bench/conformance_render.py /path/to/kpt-checkout [--fnrun .venv/bin/fnrun] [-k NAME]
    .venv/bin/python bench/conformance_render.py /path/to/krm-functions-catalog --builtin-catalog

A krm-functions-catalog checkout is scored on its `tests/<fn>/` and `examples/<fn>-*/` cases (the
same format; `testType: eval` cases run `fnrun run --image IMG -- k=v`). With --builtin-catalog,
exec.sh cases run with a `kpt` on PATH that turns `kpt fn eval`/`fn render` into fnrun
(bench/conformance_shim.py); those needing other commands cannot run. With --builtin-catalog,
fnrun's in-process versions stand in for kpt's set-namespace, set-labels, set-annotations,
set-image, apply-setters, search-replace and starlark images, and the summary is per function.

Each case is a package plus `.expected/` (config.yaml: exitCode, allowExec, allowNetwork,
imagePullPolicy...; diff.patch: what the render changes; sometimes exec.sh). The case is copied
twice: one copy gets `git apply diff.patch` (the expectation), the other `fnrun render
--image-pull-policy never`. A case passes when the exit code agrees (zero or not) and every
resource file agrees as data, Kptfile `status` left aside (it holds the functions' messages).
Cases that cannot run here say why: an exec.sh drives its own command line, or an image is not
in the local engine (there is no registry on this machine; catalog images are not stand-ins for
one another). Nothing from the kpt checkout is copied into this repository."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.render.images import DEFAULT_PREFIX, resolve  # noqa: E402
from orchestrator.runtimes.inspect import inspect_image  # noqa: E402
from orchestrator.runtimes.kpt_catalog import catalog_name  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance_known import KNOWN  # noqa: E402
from conformance_shim import UNSUPPORTED  # noqa: E402


@dataclass
class Verdict:
    case: str
    outcome: str  # pass | fail | skip
    why: str = ""
    functions: frozenset[str] = frozenset()  # the catalog functions the case runs (--builtin-catalog)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kpt", type=Path, help="a kpt checkout (its e2e/testdata/fn-render is read) or a krm-functions-catalog checkout")
    parser.add_argument("--fnrun", default=str(ROOT / ".venv/bin/fnrun"))
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    parser.add_argument("--builtin-catalog", action="store_true", help="run kpt's catalog functions by fnrun's builtins")
    args = parser.parse_args()
    cases_dir = args.kpt / "e2e/testdata/fn-render"
    if cases_dir.is_dir():
        cases, workdir = [(c, c.relative_to(cases_dir).as_posix()) for c in _cases(cases_dir)], args.kpt / "e2e"
    elif (args.kpt / "tests").is_dir() and (args.kpt / "examples").is_dir():
        cases, workdir = catalog_cases(args.kpt), args.kpt
    else:
        parser.error(f"{args.kpt}: neither a kpt checkout (e2e/testdata/fn-render) nor a krm-functions-catalog checkout")
    verdicts = []
    for case, name in cases:
        if args.only and args.only not in name:
            continue
        verdict = run_case(case, name, args.fnrun, workdir, args.builtin_catalog)
        verdicts.append(verdict)
        known = f"  [known difference: {KNOWN[name]}]" if verdict.outcome == "fail" and name in KNOWN else ""
        print(f"{verdict.outcome:4}  {verdict.case}  {verdict.why}{known}", flush=True)
    ran = [v for v in verdicts if v.outcome != "skip"]
    passed = sum(v.outcome == "pass" for v in ran)
    unexplained = [v.case for v in ran if v.outcome == "fail" and v.case not in KNOWN]
    if args.builtin_catalog:
        print_per_function(verdicts)
    print(f"\n{passed}/{len(ran)} runnable cases pass ({len(ran) - passed - len(unexplained)} known differences); {len(verdicts) - len(ran)} of {len(verdicts)} cannot run here")
    if unexplained:
        print(f"failing without a named difference: {', '.join(unexplained)}")
    return 1 if unexplained else 0


def catalog_cases(catalog: Path) -> list[tuple[Path, str]]:
    """The catalog's `tests/<fn>/<case>/` and `examples/<case>/` (cases of the builtin functions
    only: the others need their images)."""
    found = [(case, case.relative_to(catalog).as_posix()) for case in sorted((catalog / "tests").glob("*/*")) if case.is_dir()]
    found += [(case, case.relative_to(catalog).as_posix()) for case in sorted((catalog / "examples").iterdir()) if case.is_dir() and not case.name.startswith("_")]
    return [(case, name) for case, name in found if _functions_of(case) and all(map(catalog_name, _functions_of(case)))]


def print_per_function(verdicts: list[Verdict]) -> None:
    """pass/total per builtin function (a case counts for every function it runs)."""
    table: dict[str, list[int]] = {}
    for verdict in verdicts:
        for function in sorted(verdict.functions):
            row = table.setdefault(function, [0, 0, 0, 0])
            row[0] += verdict.outcome == "pass"
            row[1] += verdict.outcome != "skip"
            row[2] += verdict.outcome == "skip"
            row[3] += verdict.outcome == "fail" and verdict.case in KNOWN
    print("\nper function (pass/runnable, known differences, cannot run):")
    for function, (passed, ran, skipped, known) in sorted(table.items()):
        print(f"  {function:16} {passed}/{ran}" + (f"  ({known} known)" if known else "") + (f"  ({skipped} cannot run)" if skipped else ""))


def _cases(cases_dir: Path) -> list[Path]:
    """Each directory holding a Kptfile or .expected/ is a case (no .expected/: exit 0, no change);
    a directory holding neither groups cases (selectors/)."""
    found = []
    for entry in sorted(p for p in cases_dir.iterdir() if p.is_dir()):
        if (entry / "Kptfile").exists() or (entry / ".expected").is_dir():
            found.append(entry)
        else:
            found += _cases(entry)
    return found


def run_case(case: Path, name: str, fnrun: str, e2e: Path, builtin_catalog: bool = False) -> Verdict:
    functions = frozenset(filter(None, map(catalog_name, _functions_of(case)))) if builtin_catalog else frozenset()
    verdict = _run_case(case, name, fnrun, e2e, builtin_catalog)
    verdict.functions = functions
    return verdict


def _functions_of(case: Path) -> list[str]:
    """The images a case runs: its Kptfiles' steps, or the `testType: eval` image."""
    config = _load(case / ".expected/config.yaml") or {}
    images = [config["image"]] if isinstance(config.get("image"), str) else []
    if (case / ".expected/exec.sh").exists():
        images += re.findall(r"(?:--image|\s-i)[= ](\S+)", (case / ".expected/exec.sh").read_text())
    for kptfile in case.rglob("Kptfile"):
        pipeline = (_load(kptfile) or {}).get("pipeline") or {}
        for section in ("mutators", "validators"):
            images += [step["image"] for step in pipeline.get(section) or [] if isinstance(step, dict) and isinstance(step.get("image"), str)]
    return images


def _run_case(case: Path, name: str, fnrun: str, e2e: Path, builtin_catalog: bool) -> Verdict:
    expected_dir = case / ".expected"
    config = _load(expected_dir / "config.yaml") or {}
    if config.get("skip"):
        return Verdict(name, "skip", "the case marks itself skip")
    if (expected_dir / "exec.sh").exists() and not builtin_catalog:
        return Verdict(name, "skip", "exec.sh drives its own command line")
    if config.get("allowWasm"):
        return Verdict(name, "skip", "WASM functions are not supported")
    missing = {m for m in _missing_images(case) if not (builtin_catalog and catalog_name(m))}
    if missing:
        starlark = any("starlark" in m for m in missing)
        return Verdict(name, "skip", ("needs Starlark: " if starlark else "needs ") + ", ".join(sorted(missing)) + " (not in the local engine)")
    with tempfile.TemporaryDirectory(prefix="fnrun-conformance-") as tmp:
        actual, expected = Path(tmp) / "actual" / case.name, Path(tmp) / "expected" / case.name
        for target in (actual, expected):
            shutil.copytree(case, target, symlinks=True, ignore=shutil.ignore_patterns(".expected"))
        patch = expected_dir / "diff.patch"
        if patch.exists() and patch.stat().st_size:
            applied = subprocess.run(["git", "apply", "--unsafe-paths", f"--directory={expected}", str(patch)], cwd=tmp, capture_output=True, text=True)
            if applied.returncode:
                return Verdict(name, "skip", f"diff.patch does not apply: {applied.stderr.strip().splitlines()[0]}")
        if (expected_dir / "exec.sh").exists():
            return _run_exec_sh(case, name, actual, expected, fnrun, config)
        if config.get("testType") == "eval":
            command = [fnrun, "run", str(actual), "--image", str(config.get("image")), "--image-pull-policy", "never", "--quiet"]
            command += ["--fn-config", str(actual / config["fnConfig"])] if config.get("fnConfig") else []
            command += ["--", *(f"{k}={v}" for k, v in (config.get("args") or {}).items())]
        else:
            command = [fnrun, "render", str(actual), "--image-pull-policy", "never", "--quiet"]
            command += ["--allow-exec"] if config.get("allowExec") else []
            command += ["--allow-network"] if config.get("allowNetwork") else []
        command[2:2] = ["--builtin-catalog"] if builtin_catalog else []
        # kpt's suite runs from e2e/: its exec steps name paths relative to that directory
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=e2e)
        want_failure = int(config.get("exitCode", 0)) != 0
        if (done.returncode != 0) != want_failure:
            return Verdict(name, "fail", f"exit {done.returncode}, kpt expects {config.get('exitCode', 0)}: {done.stderr.strip()[-300:]}")
        difference = _compare(actual, expected)
        if difference:
            return Verdict(name, "fail", difference)
        return Verdict(name, "pass")


def _run_exec_sh(case: Path, name: str, actual: Path, expected: Path, fnrun: str, config: dict) -> Verdict:
    """An exec.sh case with `kpt` on PATH standing for fnrun (bench/conformance_shim.py): only
    `kpt fn eval` and `kpt fn render` are translated; a case that needs more cannot run here."""
    shim = Path(tempfile.mkdtemp(prefix="fnrun-kpt-shim-"))
    try:
        (shim / "kpt").write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve().parent / 'conformance_shim.py'} \"$@\"\n")
        (shim / "kpt").chmod(0o755)
        env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "FNRUN": f"{fnrun} --builtin-catalog"}
        done = subprocess.run(["bash", str(case / ".expected/exec.sh")], cwd=actual, env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    if UNSUPPORTED in done.stderr or "docker: " in done.stderr:
        line = next((l for l in done.stderr.splitlines() if UNSUPPORTED in l or "docker" in l), "")
        return Verdict(name, "skip", f"exec.sh needs more than kpt fn eval/render ({line.strip()[:120]})")
    want_failure = int(config.get("exitCode", 0)) != 0
    if (done.returncode != 0) != want_failure:
        return Verdict(name, "fail", f"exec.sh exit {done.returncode}, kpt expects {config.get('exitCode', 0)}: {done.stderr.strip()[-300:]}")
    difference = _compare(actual, expected)
    return Verdict(name, "fail", difference) if difference else Verdict(name, "pass")


def _missing_images(case: Path) -> set[str]:
    images = set()
    for kptfile in case.rglob("Kptfile"):
        data = _load(kptfile) or {}
        pipeline = data.get("pipeline") if isinstance(data, dict) else None
        for section in ("mutators", "validators"):
            for step in (pipeline or {}).get(section) or []:
                if isinstance(step, dict) and isinstance(step.get("image"), str):
                    try:
                        images.add(resolve(step["image"], step.get("tag"), DEFAULT_PREFIX, str(kptfile)))
                    except Exception:  # a tag constraint no local tag satisfies: missing too
                        images.add(f"{step['image']}@{step.get('tag')}")
    return {image for image in images if inspect_image(image) is None}


def _compare(actual: Path, expected: Path) -> str:
    """'' when every resource file holds the same data (Kptfile status aside)."""
    files = {p.relative_to(actual).as_posix() for p in _resource_files(actual)} | {p.relative_to(expected).as_posix() for p in _resource_files(expected)}
    for rel in sorted(files):
        a, e = _documents(actual / rel), _documents(expected / rel)
        if a != e:
            if a is None or e is None:
                return f"{rel}: {'missing' if a is None else 'unexpected'}"
            return f"{rel}: differs"
    return ""


def _resource_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and (p.suffix in (".yaml", ".yml") or p.name == "Kptfile") and ".expected" not in p.parts and "results" not in p.parts]


def _documents(path: Path) -> list | None:
    if not path.exists():
        return None
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError:
        return [path.read_text()]
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "Kptfile":
            doc.pop("status", None)
    return docs


def _load(path: Path):
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None


if __name__ == "__main__":
    sys.exit(main())
