"""How often write-back needs the round-trip editor: every sample package run through its own
pipeline and through the label function, in this process, counting the changed resources fnrun
wrote back as text edits and those it left to the round trip.

    python bench/fallback_rate.py            # samples/*
    python bench/fallback_rate.py DIR...     # other packages (each is copied first)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LABEL = ("fnrun-test/label:v1", ("team=platform",))


def counted(package: Path, image: str | None = None, arguments: tuple[str, ...] = ()) -> dict[str, int]:
    from orchestrator import api
    from orchestrator.yamlio import textedit

    textedit.counts.clear()
    request = api.RunRequest(
        directory=str(package), functions=api.Functions(image=image, arguments=arguments),
        sandbox=api.SandboxSettings(image_pull_policy="never"), output=api.Output(quiet=True),
    )
    with open(os.devnull, "w") as devnull:
        api.run(request, stdout=devnull)
    return dict(textedit.counts)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    packages = [Path(a) for a in argv] or sorted(p for p in (REPO / "samples").iterdir() if any(p.glob("*.yaml")) and p.name != "ci")
    total = {"text": 0, "roundtrip": 0}
    with tempfile.TemporaryDirectory(prefix="fnrun-rate-") as tmp:
        for package in packages:
            for label, image, arguments in (("own pipeline", None, ()), ("label", *LABEL)):
                copy = Path(tmp) / package.name
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(package, copy)
                counts = counted(copy, image, arguments)
                for key in total:
                    total[key] += counts.get(key, 0)
                print(f"{package.name:<28} {label:<13} text {counts.get('text', 0):4d}  round trip {counts.get('roundtrip', 0):4d}")
    changed = sum(total.values()) or 1
    print(f"all: text {total['text']}, round trip {total['roundtrip']} (fallback rate {total['roundtrip'] / changed * 100:.1f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
