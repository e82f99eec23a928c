"""The write-back's differential fuzzer, long profile: thousands of generated packages and edits
(tests/testing/yaml_fuzz.py), each applied by an exec function in ruamel round trip, ruamel safe
or PyYAML, and checked by the oracle (every file parses, every resource is what the function
returned, files the function did not change keep their bytes, no comment moves to another file,
every comment as often as the edits leave it).
The test suite runs a small fixed-seed profile of the same (tests/write/test_fuzz_writeback.py).

    python bench/fuzz_writeback.py --cases 2000            # a fixed seed: the same cases each run
    python bench/fuzz_writeback.py --cases 500 --seed 7    # another draw
    python bench/fuzz_writeback.py --findings out.json     # every finding's files, edits and output
    python bench/fuzz_writeback.py --tails                 # file tails too, and source | sink of each package

Exit status: 0 nothing found, 1 findings.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--findings", type=Path, help="write every finding here (JSON)")
    parser.add_argument("--tails", action="store_true", help="generate file tails and check source | sink (yaml_fuzz.TAILS)")
    args = parser.parse_args(argv)

    from hypothesis import HealthCheck, given, seed, settings, strategies as st

    from testing import yaml_fuzz

    findings: list[yaml_fuzz.Finding] = []
    styles: collections.Counter[str] = collections.Counter()
    work = Path(tempfile.mkdtemp(prefix="fnrun-fuzz-"))

    @seed(args.seed)
    @settings(max_examples=args.cases, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def case(data: st.DataObject) -> None:
        package = data.draw(yaml_fuzz.packages(tails=args.tails or None))
        ops = data.draw(yaml_fuzz.edits(package))
        style = data.draw(st.sampled_from(yaml_fuzz.STYLES))
        wide = data.draw(st.booleans())
        styles[style] += 1
        if sum(styles.values()) % 250 == 0:
            print(f"{sum(styles.values())} cases, {len(findings)} findings", file=sys.stderr, flush=True)
        finding = yaml_fuzz.check(package, ops, style, wide, work)
        if finding is not None:
            findings.append(finding)
            _save(args.findings, findings)
            error = f": {finding.error}" if finding.error else ""
            print(f"finding {len(findings)}: {finding.problem}{error} ({style}, edits {ops})", file=sys.stderr, flush=True)

    started = time.monotonic()
    _save(args.findings, findings)
    try:
        case()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - started
    total = sum(styles.values())
    print(f"{total} cases ({', '.join(f'{n} {s}' for s, n in sorted(styles.items()))}) in {elapsed:.0f} s, seed {args.seed}: {len(findings)} findings")
    for problem, count in collections.Counter(f.problem.split(":", 1)[-1].strip() for f in findings).most_common():
        print(f"  {count:5d}  {problem}")
    return 1 if findings else 0


def _save(path: Path | None, findings: list) -> None:
    """Every finding so far, written again at each one: a long run stopped midway keeps them."""
    if path is None:
        return
    rows = [
        {"problem": f.problem, "style": f.style, "edits": f.ops, "wide": f.wide, "error": f.error,
         "files": {k: v.decode("utf-8", "replace") for k, v in f.files.items()},
         "written": {k: v.decode("utf-8", "replace") for k, v in f.written.items()}}
        for f in findings
    ]
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
