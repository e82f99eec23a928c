"""`--compare data`: the looser verdict bench's conformance scoring gives, for running a suite
written for kpt whose stderr and results files say what kpt prints (fnrun prints its own). A run
agrees when its exit code agrees (zero or not), every resource file of the package holds the same
data as the case's package with diff.patch applied (Kptfile `status` aside: it holds the
functions' messages) and, where the case gives stdOut and expects success, the output holds the
same data (layout annotations aside: kpt's seqindent, fnrun's fnrun-*)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from .config import EXPECTED, CaseConfig, CaseError
from .expect import Mismatch, Outcome, exit_mismatch

_LAYOUT_NOTES = ("internal.config.kubernetes.io/seqindent", "internal.config.kubernetes.io/fnrun-")


def expected_package(case: Path, into: Path) -> Path:
    """A copy of the case's package with its diff.patch applied: what the run should leave."""
    target = into / case.resolve().name
    shutil.copytree(case, target, symlinks=True, ignore=shutil.ignore_patterns(EXPECTED, ".git"))
    patch = case / EXPECTED / "diff.patch"
    if patch.exists() and patch.stat().st_size:
        applied = subprocess.run(["git", "apply", "--unsafe-paths", f"--directory={target}", str(patch.resolve())], cwd=into,
                                 capture_output=True, text=True, timeout=120)
        if applied.returncode:
            raise CaseError(f"{patch}: does not apply to the case's package: {(applied.stderr.strip().splitlines() or ['?'])[0]}")
    return target


def compare_data(config: CaseConfig, outcome: Outcome, actual: Path, expected: Path) -> Mismatch | None:
    if (outcome.exit_code != 0) != (config.exit_code != 0):
        return exit_mismatch(outcome, config.exit_code)
    difference = compare_files(actual, expected)
    if not difference and config.exit_code == 0 and config.std_out:
        difference = compare_stdout(outcome.stdout, config.std_out)
    return Mismatch(difference) if difference else None


def compare_files(actual: Path, expected: Path) -> str:
    """'' when every resource file holds the same data (Kptfile status aside)."""
    files = {p.relative_to(actual).as_posix() for p in _resource_files(actual)} | {p.relative_to(expected).as_posix() for p in _resource_files(expected)}
    for rel in sorted(files):
        got, want = _documents(actual / rel), _documents(expected / rel)
        if got != want:
            if got is None or want is None:
                return f"{rel}: {'missing' if got is None else 'unexpected'}"
            return f"{rel}: holds other data than diff.patch gives"
    return ""


def compare_stdout(actual: str, expected: str) -> str:
    got: Any
    want: Any
    try:
        got, want = (_normalised(list(yaml.safe_load_all(text))) for text in (actual, expected))
    except yaml.YAMLError as err:
        return f"stdout is not YAML: {str(err).splitlines()[0]}"
    return "" if got == want else f"stdout holds other data than stdOut ({len(got)} vs {len(want)} documents)"


def _normalised(value: object) -> object:
    """Without the annotations that only note a file's layout."""
    if isinstance(value, list):
        return [_normalised(v) for v in value if v is not None]
    if not isinstance(value, dict):
        return value
    out = {k: _normalised(v) for k, v in value.items()}
    meta = out.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        kept = {k: v for k, v in meta["annotations"].items() if not str(k).startswith(_LAYOUT_NOTES)}
        out["metadata"] = {**meta, "annotations": kept} if kept else {k: v for k, v in meta.items() if k != "annotations"}
    return out


def _resource_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and (p.suffix in (".yaml", ".yml") or p.name == "Kptfile")
            and not {EXPECTED, ".git", "results"} & set(p.relative_to(root).parts)]


def _documents(path: Path) -> list | None:
    if not path.exists():
        return None
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text(errors="replace")) if d is not None]
    except yaml.YAMLError:
        return [path.read_text(errors="replace")]
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "Kptfile":
            doc.pop("status", None)
    return docs
