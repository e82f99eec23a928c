"""Score fnrun against a kpt-format suite: kpt's fn-render and fn-eval e2e suites, the function catalog's tests.

    .venv/bin/python bench/conformance_render.py /path/to/kpt-checkout --builtin-catalog [-k NAME]
    .venv/bin/python bench/conformance_render.py /path/to/kpt-checkout --suite fn-eval --builtin-catalog --allow-exec
    .venv/bin/python bench/conformance_render.py /path/to/krm-functions-catalog --builtin-catalog

The case set is exactly the suites' own: every directory, at any depth, that holds `.expected/`
(kpt's fn-render: 101 and fn-eval: 65 at kpt 23c57d7; the catalog: its `tests/` and `examples/`).
Each case is a package plus `.expected/` (config.yaml: exitCode, allowExec, stdOut, testType...;
diff.patch: what the run changes; sometimes exec.sh). The case is copied twice: one copy gets `git
apply diff.patch` (the expectation), the other the run: `fnrun render --image-pull-policy never`,
for `testType: eval` the `fnrun run` line kpt's runner would build (bench/conformance_eval.py), or
the case's exec.sh with a `kpt` on PATH that hands `kpt fn render/eval/source/sink` to fnrun
(bench/conformance_shim.py). --allow-exec is fnrun's one deliberate difference: kpt fn eval runs
--exec without it, so the fn-eval suite is scored with it (the shim adds it to eval only). A case
passes when the exit code agrees (zero or not), every resource file agrees as data (Kptfile
`status` aside: it holds the functions' messages) and, where the case gives `stdOut`, the output
agrees as data too (layout notes aside: kpt's seqindent, fnrun's fnrun-* annotations).

With --builtin-catalog, fnrun's in-process versions stand in for kpt's catalog images it has, and
the summary is per function. A case cannot run here when it needs what this machine lacks: a
registry (setup.sh pulls), WASM, an image that is neither a builtin nor in the local engine, or an
exec.sh command other than kpt fn eval/render. A case that expects a failure and needs a missing
image runs only when the failure it expects is that image's absence (its expected stderr says
so); otherwise it cannot run, rather than "pass" because the image is missing. Nothing from the
checkouts is copied into this repository."""

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
from orchestrator.runtimes.container.inspect import inspect_image  # noqa: E402
from orchestrator.runtimes.host.kpt_catalog import catalog_name  # noqa: E402
from orchestrator.casetest.datacompare import compare_files as _compare, compare_stdout as _compare_stdout  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance_eval import eval_command  # noqa: E402
from conformance_known import KNOWN  # noqa: E402


CANNOT = "cannot-run"
# what an expected stderr says when the failure a case is about is a missing image
_IMAGE_ABSENT = re.compile(r"No such image|image not known|denied|initializing source|not found|pull access", re.I)
# exec.sh lines the kpt stand-in cannot serve: other tools, other kpt commands
_OTHER_COMMAND = re.compile(r"(^|[|;&(]\s*)((docker|podman|kustomize|helm)\b|\$\{?KRM_FN_RUNTIME\b)|\bkpt\s+(?!fn\s+(eval|render|source|sink)\b)\S+")


@dataclass
class Verdict:
    case: str
    outcome: str  # pass | fail | cannot-run
    why: str = ""
    functions: frozenset[str] = frozenset()  # the catalog functions the case runs (--builtin-catalog)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kpt", type=Path, help="a kpt checkout (its e2e/testdata/SUITE is read), a krm-functions-catalog checkout, or any directory of kpt-format cases")
    parser.add_argument("--suite", default="fn-render", help="with a kpt checkout: fn-render (default) or fn-eval")
    parser.add_argument("--allow-exec", action="store_true", help="add fnrun's --allow-exec to every kpt fn eval (kpt needs none)")
    parser.add_argument("--fnrun", default=str(ROOT / ".venv/bin/fnrun"))
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    parser.add_argument("--builtin-catalog", action="store_true", help="run kpt's catalog functions by fnrun's builtins")
    args = parser.parse_args()
    cases_dir = args.kpt / "e2e/testdata" / args.suite
    if cases_dir.is_dir():
        cases, workdir = [(c, c.relative_to(cases_dir).as_posix()) for c in expected_cases(cases_dir)], args.kpt / "e2e"
    elif (args.kpt / "tests").is_dir() and (args.kpt / "examples").is_dir():
        cases, workdir = catalog_cases(args.kpt), args.kpt
    elif args.kpt.is_dir() and expected_cases(args.kpt):
        cases, workdir = [(c, c.relative_to(args.kpt).as_posix()) for c in expected_cases(args.kpt)], args.kpt
    else:
        parser.error(f"{args.kpt}: neither a kpt checkout (e2e/testdata/{args.suite}), a krm-functions-catalog checkout, nor a directory of cases")
    verdicts = []
    for case, name in cases:
        if args.only and args.only not in name:
            continue
        verdict = run_case(case, name, args.fnrun, workdir, args.builtin_catalog, args.allow_exec)
        verdicts.append(verdict)
        known = f"  [known difference: {KNOWN[name]}]" if verdict.outcome == "fail" and name in KNOWN else ""
        print(f"{verdict.outcome:10}  {verdict.case}  {verdict.why}{known}", flush=True)
    ran = [v for v in verdicts if v.outcome != CANNOT]
    passed = sum(v.outcome == "pass" for v in ran)
    unexplained = [v.case for v in ran if v.outcome == "fail" and v.case not in KNOWN]
    if args.builtin_catalog:
        print_per_function(verdicts)
    print(f"\n{len(verdicts)} cases: {passed} pass, {len(ran) - passed} fail ({len(ran) - passed - len(unexplained)} known differences), "
          f"{len(verdicts) - len(ran)} cannot run here")
    if unexplained:
        print(f"failing without a named difference: {', '.join(unexplained)}")
    return 1 if unexplained else 0


def expected_cases(root: Path) -> list[Path]:
    """Every directory below root that holds `.expected/`, at any depth, in path order (what the
    suites' own runners take as a case)."""
    found = []
    for entry in sorted(p for p in root.iterdir() if p.is_dir() and p.name != ".expected"):
        if (entry / ".expected").is_dir():
            found.append(entry)
        found += expected_cases(entry)
    return found


def catalog_cases(catalog: Path) -> list[tuple[Path, str]]:
    """The catalog's cases: `.expected/` folders at any depth of `tests/` and `examples/`."""
    return [(case, case.relative_to(catalog).as_posix()) for top in ("tests", "examples") for case in expected_cases(catalog / top)]


def print_per_function(verdicts: list[Verdict]) -> None:
    """pass/runnable per builtin function (a case counts for every function it runs)."""
    table: dict[str, list[int]] = {}
    for verdict in verdicts:
        for function in sorted(verdict.functions):
            row = table.setdefault(function, [0, 0, 0, 0])
            row[0] += verdict.outcome == "pass"
            row[1] += verdict.outcome != CANNOT
            row[2] += verdict.outcome == CANNOT
            row[3] += verdict.outcome == "fail" and verdict.case in KNOWN
    print("\nper builtin function (pass/runnable, known differences, cannot run):")
    for function, (passed, ran, skipped, known) in sorted(table.items()):
        print(f"  {function:18} {passed}/{ran}" + (f"  ({known} known)" if known else "") + (f"  ({skipped} cannot run)" if skipped else ""))


def run_case(case: Path, name: str, fnrun: str, workdir: Path, builtin_catalog: bool = False, allow_exec: bool = False) -> Verdict:
    functions = frozenset(filter(None, map(catalog_name, _functions_of(case)))) if builtin_catalog else frozenset()
    verdict = _run_case(case, name, fnrun, workdir, builtin_catalog, allow_exec)
    verdict.functions = functions
    return verdict


def _functions_of(case: Path) -> list[str]:
    """The images a case runs: its Kptfiles' steps, the `testType: eval` image, exec.sh's --image."""
    config = _load(case / ".expected/config.yaml")
    images = _command_line_images(case, config if isinstance(config, dict) else {})
    for kptfile in case.rglob("Kptfile"):
        data = _load(kptfile) if ".expected" not in kptfile.parts else None
        pipeline = data.get("pipeline") if isinstance(data, dict) else None
        for section in ("mutators", "validators"):
            steps = pipeline.get(section) if isinstance(pipeline, dict) else None
            images += [step["image"] for step in steps or [] if isinstance(step, dict) and isinstance(step.get("image"), str)]
    return images


def _cannot_run(case: Path, config: dict, builtin_catalog: bool) -> str | None:
    """Why the case cannot run on this machine, or None."""
    expected_dir = case / ".expected"
    if config.get("skip"):
        return "the case marks itself skip"
    if config.get("allowWasm"):
        return "a WASM function (fnrun runs containers, exec and builtins)"
    setup = expected_dir / "setup.sh"
    if setup.exists() and re.search(r"\b(pull|push)\b", setup.read_text()):
        return "setup.sh pulls images from a registry (none can be reached here)"
    script = expected_dir / "exec.sh"
    if script.exists():
        for line in script.read_text().splitlines():
            code = line.split("#", 1)[0]
            if _OTHER_COMMAND.search(code):
                return f"exec.sh runs more than kpt fn eval/render: {code.strip()[:80]}"
    missing = sorted(image for image in _missing_images(case, config) if not (builtin_catalog and catalog_name(image)))
    if not missing:
        return None
    if int(config.get("exitCode", 0)) and _about_absence(config, missing):
        return None  # the case expects the failure a missing image causes: it runs
    what = ", ".join(missing)
    if int(config.get("exitCode", 0)):
        return f"expects a failure of {what}, which is neither a builtin nor in the local engine (a missing image would fail it for the wrong reason)"
    return f"needs {what}: neither a builtin nor in the local engine"


def _about_absence(config: dict, missing: list[str]) -> bool:
    """Whether the failure a case expects is that an image cannot be had."""
    said = " ".join(str(config.get(key) or "") for key in ("stdErr", "stdErrRegEx", "StdErrRegEx"))
    return bool(_IMAGE_ABSENT.search(said))


def _run_case(case: Path, name: str, fnrun: str, workdir: Path, builtin_catalog: bool, allow_exec: bool) -> Verdict:
    expected_dir = case / ".expected"
    config = _load(expected_dir / "config.yaml") or {}
    config = config if isinstance(config, dict) else {}
    reason = _cannot_run(case, config, builtin_catalog)
    if reason is not None:
        return Verdict(name, CANNOT, reason)
    with tempfile.TemporaryDirectory(prefix="fnrun-conformance-") as tmp:
        actual, expected = Path(tmp) / "actual" / case.name, Path(tmp) / "expected" / case.name
        for target in (actual, expected):
            shutil.copytree(case, target, symlinks=True, ignore=shutil.ignore_patterns(".expected"))
        patch = expected_dir / "diff.patch"
        if patch.exists() and patch.stat().st_size:
            applied = subprocess.run(["git", "apply", "--unsafe-paths", f"--directory={expected}", str(patch)], cwd=tmp, capture_output=True, text=True)
            if applied.returncode:
                return Verdict(name, CANNOT, f"diff.patch does not apply: {applied.stderr.strip().splitlines()[0]}")
        extra = ["--builtin-catalog"] if builtin_catalog else []
        if (expected_dir / "exec.sh").exists():
            done = _run_exec_sh(case, actual, fnrun, extra, allow_exec)
        else:
            if config.get("testType") == "eval":
                command = eval_command(case, actual, config, fnrun, extra + (["--allow-exec"] if allow_exec else []))
            else:
                command = [fnrun, "render", str(actual), "--image-pull-policy", "never", "--quiet", *extra]
                command += ["--allow-exec"] if config.get("allowExec") else []
                command += ["--allow-network"] if config.get("allowNetwork") else []
            # kpt's suite runs from e2e/: its exec steps name paths relative to that directory
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=workdir)
        return _judge(name, done, config, actual, expected)


def _judge(name: str, done: subprocess.CompletedProcess, config: dict, actual: Path, expected: Path) -> Verdict:
    want = int(config.get("exitCode", 0))
    if (done.returncode != 0) != (want != 0):
        return Verdict(name, "fail", f"exit {done.returncode}, kpt expects {want}: {done.stderr.strip()[-300:]}")
    difference = _compare(actual, expected)
    if not difference and want == 0 and isinstance(config.get("stdOut"), str):
        difference = _compare_stdout(done.stdout, config["stdOut"])
    return Verdict(name, "fail", difference) if difference else Verdict(name, "pass")


def _run_exec_sh(case: Path, actual: Path, fnrun: str, extra: list[str], allow_exec: bool = False) -> subprocess.CompletedProcess:
    """The case's exec.sh with `kpt` on PATH standing for fnrun (bench/conformance_shim.py)."""
    shim = Path(tempfile.mkdtemp(prefix="fnrun-kpt-shim-"))
    try:
        (shim / "kpt").write_text(f"#!/bin/sh\nexec {sys.executable} {Path(__file__).resolve().parent / 'conformance_shim.py'} \"$@\"\n")
        (shim / "kpt").chmod(0o755)
        env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "FNRUN": " ".join([fnrun, *extra]), "FNRUN_EVAL": "--allow-exec" if allow_exec else ""}
        return subprocess.run(["bash", str(case / ".expected/exec.sh")], cwd=actual, env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(shim, ignore_errors=True)


def _missing_images(case: Path, config: dict) -> set[str]:
    """The images the case runs that the local engine does not have (tag constraints resolved
    against local tags; one none satisfies is missing too)."""
    images = set()
    for kptfile in case.rglob("Kptfile"):
        data = _load(kptfile) if ".expected" not in kptfile.parts else None
        pipeline = data.get("pipeline") if isinstance(data, dict) else None
        for section in ("mutators", "validators"):
            steps = pipeline.get(section) if isinstance(pipeline, dict) else None
            for step in steps if isinstance(steps, list) else []:
                if isinstance(step, dict) and isinstance(step.get("image"), str):
                    try:
                        images.add(resolve(step["image"], step.get("tag"), DEFAULT_PREFIX, str(kptfile)))
                    except Exception:  # a tag constraint no local tag satisfies: missing too
                        images.add(f"{step['image']}@{step.get('tag')}")
    images |= {_with_tag(image) for image in _command_line_images(case, config)}
    return {image for image in images if inspect_image(image) is None}


def _command_line_images(case: Path, config: dict) -> list[str]:
    images = [config["image"]] if config.get("testType") == "eval" and isinstance(config.get("image"), str) else []
    if (case / ".expected/exec.sh").exists():
        script = (case / ".expected/exec.sh").read_text()
        assigned = dict(re.findall(r"(?m)^\s*(?:export\s+)?(\w+)=[\"']?([^\"'\s]+)", script))  # IMAGE_TAG="ghcr.io/..."
        for image in re.findall(r"(?:--image|\s-i)[= ](\S+)", script):
            name = image.strip("${}\"'")
            images.append(assigned.get(name, image) if image.startswith("$") else image)
    return images


def _with_tag(image: str) -> str:
    return image if "@" in image or ":" in image.rsplit("/", 1)[-1] else image + ":latest"


def _load(path: Path):
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None


if __name__ == "__main__":
    sys.exit(main())
