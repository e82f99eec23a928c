"""Does any line move between files? Real repositories, each one package, through `fnrun source |
fnrun sink` and three functions that treat text the way users' functions do, counting per file
the lines lost, gained and moved between files beyond what the function itself changes.

    python bench/corpus_check.py REPO_DIR...      # checkouts you cloned; nothing is downloaded

Each repository's YAML files (hidden directories left out, as fnrun's reader does) are copied
into a scratch package, run, and compared line by line with the copy as it was. A file fnrun's
reader refuses on its own (a Helm template), or one holding a resource it cannot read faithfully
(a duplicate key: a run that would hand it to a function refuses), is another matter: it is left
out of the package and counted as `left out`; with `--keep-odd` it stays in (and refuses its package).

- `source | sink`: `fnrun source PKG | fnrun sink PKG`: every file must keep every byte;
- `round trip`: fnrun-test/label (ruamel.yaml loads and dumps the whole ResourceList, adds a label);
- `reorder`: fnrun-test/reorder (ruamel round trip, items in reverse order): no file may change;
- `drop comments`: fnrun-test/dropcomments (PyYAML loads and dumps it: every comment, quote and
  key order gone; adds a label).

What a labelling function itself changes is the label it adds: lines `labels:` and the label's
`KEY: VALUE` (and a `labels: {}` or flow-style labels line it replaces). Every other line a file
gains or loses is counted: `moved` when it was a line of another file of the package, `gained`
when it was nowhere, `lost` when the file no longer has it. A run that fails counts its package
as refused. Exit 0 when every count is zero and nothing was refused, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LABEL_KEY, LABEL_VALUE = "fnrun-corpus", "checked"
FUNCTIONS = (
    ("round trip", "fnrun-test/label:v1", True),
    ("reorder", "fnrun-test/reorder:v1", False),
    ("drop comments", "fnrun-test/dropcomments:v1", True),
)


@dataclass
class Counts:
    files: int = 0
    changed: int = 0
    lost: int = 0
    gained: int = 0
    moved: int = 0
    left_out: int = 0
    refused: list[str] = field(default_factory=list)
    worst: list[str] = field(default_factory=list)  # a few examples, for the report

    def add(self, other: "Counts") -> None:
        for name in ("files", "changed", "lost", "gained", "moved", "left_out"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.refused += other.refused
        self.worst += other.worst[: max(0, 8 - len(self.worst))]


def yaml_files(root: Path) -> list[Path]:
    """The repository's YAML files, relative, hidden directories left out."""
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")) and os.path.isfile(os.path.join(directory, name)):
                found.append(Path(directory, name).relative_to(root))
    return found


def readable(repo: Path, files: list[Path]) -> tuple[list[Path], list[str]]:
    """The files fnrun's reader takes on their own, and one line for each it refuses."""
    from orchestrator.errors import FnrunError
    from orchestrator.read.package import read_file

    kept, refused = [], []
    for rel in files:
        try:
            source, _ = read_file(rel.as_posix(), (repo / rel).read_bytes())
        except FnrunError as err:
            refused.append(str(err))
            continue
        unfaithful = next((n for n in source.notes if n.resource and n.problem), None)
        if unfaithful is None:
            kept.append(rel)
        else:
            refused.append(f"{rel}:{unfaithful.line}: {unfaithful.problem} in a resource")
    return kept, refused


def copy_package(repo: Path, files: list[Path], target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / rel, target / rel)


def fnrun(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], input=stdin, capture_output=True, env=env, timeout=1800)


def run_mode(mode: str, image: str | None, package: Path) -> str | None:
    """Run one mode over the package in place; the first error line when it failed."""
    if image is None:
        source = fnrun("source", str(package))
        if source.returncode != 0:
            return _first_error(source)
        result = fnrun("sink", str(package), stdin=source.stdout)
    else:
        # `run --image` refuses YAML that is not KRM, as kpt fn eval does: the user's remedy, a
        # .krmignore naming those files, keeps them in the package (and in the comparison)
        ignore = package / ".krmignore"
        ignore.write_text("".join(f"/{rel}\n" for rel in not_krm(package)))
        try:
            result = fnrun("run", str(package), "--image", image, "--image-pull-policy", "never", "--", f"{LABEL_KEY}={LABEL_VALUE}")
        finally:
            ignore.unlink()
    return None if result.returncode == 0 else _first_error(result)


def not_krm(package: Path) -> list[str]:
    """The package's files holding YAML that is not a KRM resource (what `run --image` refuses)."""
    from orchestrator.read.package import read_package

    return sorted({note.path for note in read_package(package).notes if not note.resource})


def _first_error(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode(errors="replace").splitlines()
    return next((line for line in lines if "error" in line), lines[-1] if lines else f"exit {result.returncode}")


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines()


def _labelling(line: str, gained: bool = False) -> bool:
    """A line the labelling function itself writes or rewrites (and `metadata:`, which it adds to
    a resource that had none)."""
    stripped = line.strip()
    if gained and stripped == "metadata:":
        return True
    return stripped.startswith("labels:") or stripped.replace('"', "").replace("'", "") == f"{LABEL_KEY}: {LABEL_VALUE}"


def compare(before: dict[Path, bytes], after_root: Path, labels: bool, repo: str) -> Counts:
    """Per file: lines lost, gained from nowhere, gained from another file."""
    counts = Counts(files=len(before))
    everywhere: Counter[str] = Counter()
    for data in before.values():
        everywhere.update(line.strip() for line in _lines(data))
    for rel, old in before.items():
        path = after_root / rel
        new = path.read_bytes() if path.exists() else b""
        if new == old:
            continue
        counts.changed += 1
        old_lines, new_lines = Counter(_lines(old)), Counter(_lines(new))
        lost = [line for line in (old_lines - new_lines).elements() if not (labels and _labelling(line))]
        gained = [line for line in (new_lines - old_lines).elements() if not (labels and _labelling(line, gained=True))]
        own = Counter(line.strip() for line in _lines(old))
        moved = [line for line in gained if everywhere[line.strip()] > own[line.strip()]]
        counts.lost += len(lost)
        counts.moved += len(moved)
        counts.gained += len(gained) - len(moved)
        for kind, found in (("lost", lost), ("moved in", moved)):
            if found and len(counts.worst) < 8:
                counts.worst.append(f"{repo}/{rel}: {kind} {found[0].strip()[:70]!r}" + (f" (+{len(found) - 1})" if len(found) > 1 else ""))
    return counts


def check(repos: list[Path], scratch: Path, keep_odd: bool) -> dict[str, Counts]:
    totals = {mode: Counts() for mode in ("source | sink", *(name for name, _, _ in FUNCTIONS))}
    for repo in repos:
        files = yaml_files(repo)
        left_out: list[str] = []
        if not keep_odd:
            files, left_out = readable(repo, files)
        before = {rel: (repo / rel).read_bytes() for rel in files}
        for mode, image, labels in (("source | sink", None, False), *FUNCTIONS):
            package = scratch / repo.name
            copy_package(repo, files, package)
            error = run_mode(mode, image, package)
            counts = compare(before, package, labels, repo.name) if error is None else Counts(files=len(files), refused=[f"{repo.name}: {error}"])
            counts.left_out = len(left_out)
            totals[mode].add(counts)
            print(f"{repo.name:28} {mode:14} files {counts.files:5}  changed {counts.changed:5}  lost {counts.lost:4}  "
                  f"gained {counts.gained:4}  moved {counts.moved:4}  left out {counts.left_out:3}" + ("  REFUSED: " + counts.refused[0] if counts.refused else ""),
                  flush=True)
    return totals


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts of public repositories (each one package)")
    parser.add_argument("--keep-odd", action="store_true", help="keep the files fnrun's reader refuses in their packages")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory(prefix="fnrun-corpus-") as scratch:
        totals = check(args.repos, Path(scratch), args.keep_odd)
    print()
    print("| mode | files | files changed | lines lost | lines gained | lines moved between files | repositories refused | files left out |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode, counts in totals.items():
        print(f"| `{mode}` | {counts.files} | {counts.changed} | {counts.lost} | {counts.gained} | {counts.moved} | {len(counts.refused)} | {counts.left_out} |")
    for mode, counts in totals.items():
        for line in counts.refused + counts.worst:
            print(f"{mode}: {line}")
    clean = all(not (c.lost or c.gained or c.moved or c.refused) for c in totals.values())
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
