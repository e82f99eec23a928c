"""Does any line move between files? Real repositories, each one package, through `fnrun source |
fnrun sink` and four functions that treat text the way users' functions do, counting per file
the lines lost, gained and moved between files beyond what the function itself changes.

    python bench/corpus_check.py REPO_DIR...      # checkouts you cloned; nothing is downloaded
    python bench/corpus_check.py --only "ts sdk" REPO_DIR...   # one mode

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
- `ts sdk`: tests/functions_ts/label.js, written with kpt's TypeScript SDK (npm `kpt-functions`,
  js-yaml: YAML 1.2, so `0400` comes back as `256` and the key `404` as `'404'`), run with
  `--exec node`; adds a label. The SDK keeps one resource per apiVersion, kind, namespace and name
  (the last) and leaves the others out of its output, which the run deletes: those resources'
  lines are its change, and a file all of whose resources it left out is counted as deleted.

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
TS_LABEL = REPO / "tests" / "functions_ts" / "label.js"


def _image(name: str) -> tuple[str, ...]:
    return ("--image", name, "--image-pull-policy", "never")


# Each function: its name, how `fnrun run` is told to run it, and whether it adds the label.
FUNCTIONS = (
    ("round trip", _image("fnrun-test/label:v1"), True),
    ("reorder", _image("fnrun-test/reorder:v1"), False),
    ("drop comments", _image("fnrun-test/dropcomments:v1"), True),
    ("ts sdk", ("--exec", f"node {TS_LABEL}", "--enable-exec"), True),
)


@dataclass
class Counts:
    files: int = 0
    changed: int = 0
    lost: int = 0
    gained: int = 0
    moved: int = 0
    left_out: int = 0
    deleted: int = 0  # files whose every resource the function left out of its output
    refused: list[str] = field(default_factory=list)
    worst: list[str] = field(default_factory=list)  # a few examples, for the report

    def add(self, other: Counts) -> None:
        for name in ("files", "changed", "lost", "gained", "moved", "left_out", "deleted"):
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


Dropped = dict[str, tuple[list[str], bool]]  # file: the left-out resources' texts, and whether all were


def run_mode(mode: str, function: tuple[str, ...] | None, package: Path) -> tuple[str | None, Dropped]:
    """Run one mode over the package in place: the first error line when it failed, and the
    resources the function left out of its output (which the run deletes, as the spec says)."""
    dropped: Dropped = {}
    if function is None:
        source = fnrun("source", str(package))
        if source.returncode != 0:
            return _first_error(source), dropped
        result = fnrun("sink", str(package), stdin=source.stdout)
    else:
        # `run --image` refuses YAML that is not KRM, as kpt fn eval does: the user's remedy, a
        # .krmignore naming those files, keeps them in the package (and in the comparison)
        ignore = package / ".krmignore"
        ignore.write_text("".join(f"/{rel}\n" for rel in not_krm(package)))
        try:
            args = (str(package), *function, "--", f"{LABEL_KEY}={LABEL_VALUE}")
            dropped = left_out_by(fnrun("run", "-o", "stdout", *args), package)
            result = fnrun("run", *args)
        finally:
            ignore.unlink()
    return (None if result.returncode == 0 else _first_error(result)), dropped


def left_out_by(output: subprocess.CompletedProcess[bytes], package: Path) -> Dropped:
    """The package's resources missing from a function's output (`run -o stdout`), by file."""
    from ruamel.yaml import YAML

    from orchestrator.annotations import INDEX, PATH
    from orchestrator.read.package import read_package

    if output.returncode != 0:
        return {}
    items = YAML(typ="safe", pure=True).load(output.stdout.decode()).get("items") or []
    notes = [(item.get("metadata") or {}).get("annotations") or {} for item in items]
    kept = {(note.get(PATH), str(note.get(INDEX, "0"))) for note in notes}
    by_file: dict[str, list[tuple[bool, str]]] = {}
    for resource in read_package(package).resources:
        gone = (resource.path, str(resource.index)) not in kept
        by_file.setdefault(str(resource.path), []).append((gone, resource.body or ""))
    return {path: ([body for gone, body in entries if gone], all(gone for gone, _ in entries))
            for path, entries in by_file.items() if any(gone for gone, _ in entries)}


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


def compare(before: dict[Path, bytes], after_root: Path, labels: bool, repo: str, dropped: Dropped | None = None) -> Counts:
    """Per file: lines lost, gained from nowhere, gained from another file. The lines of resources
    the function left out (`dropped`) are its change; a file all of whose resources it left out
    is deleted, and counted as such."""
    counts = Counts(files=len(before))
    everywhere: Counter[str] = Counter()
    for data in before.values():
        everywhere.update(line.strip() for line in _lines(data))
    for rel, old in before.items():
        path = after_root / rel
        new = path.read_bytes() if path.exists() else b""
        if new == old:
            continue
        gone, all_gone = (dropped or {}).get(rel.as_posix(), ([], False))
        if all_gone and not path.exists():
            counts.deleted += 1
            continue
        counts.changed += 1
        old_lines, new_lines = Counter(_lines(old)), Counter(_lines(new))
        removed = Counter(line.strip() for body in gone for line in body.splitlines()) + Counter({"---": len(gone)})
        lost = []
        for line in (old_lines - new_lines).elements():
            if labels and _labelling(line):
                continue
            if removed[line.strip()] > 0:
                removed[line.strip()] -= 1
                continue
            lost.append(line)
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


def check(repos: list[Path], scratch: Path, keep_odd: bool, only: list[str] | None = None) -> dict[str, Counts]:
    modes = [m for m in (("source | sink", None, False), *FUNCTIONS) if not only or m[0] in only]
    totals = {mode: Counts() for mode, _, _ in modes}
    for repo in repos:
        files = yaml_files(repo)
        left_out: list[str] = []
        if not keep_odd:
            files, left_out = readable(repo, files)
        before = {rel: (repo / rel).read_bytes() for rel in files}
        for mode, function, labels in modes:
            package = scratch / repo.name
            copy_package(repo, files, package)
            error, dropped = run_mode(mode, function, package)
            counts = compare(before, package, labels, repo.name, dropped) if error is None else Counts(files=len(files), refused=[f"{repo.name}: {error}"])
            counts.left_out = len(left_out)
            totals[mode].add(counts)
            print(f"{repo.name:28} {mode:14} files {counts.files:5}  changed {counts.changed:5}  lost {counts.lost:4}  "
                  f"gained {counts.gained:4}  moved {counts.moved:4}  left out {counts.left_out:3}  deleted {counts.deleted:3}" + ("  REFUSED: " + counts.refused[0] if counts.refused else ""),
                  flush=True)
    return totals


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts of public repositories (each one package)")
    parser.add_argument("--keep-odd", action="store_true", help="keep the files fnrun's reader refuses in their packages")
    parser.add_argument("--only", action="append", choices=["source | sink", *(name for name, _, _ in FUNCTIONS)],
                        help="run only this mode (repeatable); every mode by default")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory(prefix="fnrun-corpus-") as scratch:
        totals = check(args.repos, Path(scratch), args.keep_odd, args.only)
    print()
    print("| mode | files | files changed | files deleted | lines lost | lines gained | lines moved between files | repositories refused | files left out |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode, counts in totals.items():
        cell = mode.replace("|", "\\|")
        print(f"| `{cell}` | {counts.files} | {counts.changed} | {counts.deleted} | {counts.lost} | {counts.gained} | {counts.moved} | {len(counts.refused)} | {counts.left_out} |")
    for mode, counts in totals.items():
        for line in counts.refused + counts.worst:
            print(f"{mode}: {line}")
    clean = all(not (c.lost or c.gained or c.moved or c.refused) for c in totals.values())
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
