"""How often write-back needs the round-trip editor: every sample package run through its own
pipeline and through the label function, in this process, counting the changed resources fnrun
wrote back as text edits and those it left to the round trip.

    python bench/fallback_rate.py            # samples/*
    python bench/fallback_rate.py DIR...     # other packages (each is copied first)
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LABEL = ("fnrun-test/label:v1", ("team=platform",))
CHOICE = "_text_edit"  # orchestrator.write.body's function: a text edit, or None for the round trip


@contextlib.contextmanager
def tallied() -> Iterator[Counter[str]]:
    """How the write-backs run meanwhile in this process write each changed resource: `text`
    edits or the `roundtrip`. The bench wraps the write-back's own choice from outside (nothing on
    fnrun's path counts), and keeps the write-back in this process (`FNRUN_WORKERS=1`: the same
    bytes and choices as on every core) so that it sees every one."""
    from orchestrator.write import body

    counts: Counter[str] = Counter()
    chosen = _choice(body)

    def counting(*args: Any) -> str | None:
        edited = chosen(*args)
        counts["text" if edited is not None else "roundtrip"] += 1
        return edited

    workers = os.environ.get("FNRUN_WORKERS")
    os.environ["FNRUN_WORKERS"] = "1"
    setattr(body, CHOICE, counting)
    try:
        yield counts
    finally:
        setattr(body, CHOICE, chosen)
        if workers is None:
            del os.environ["FNRUN_WORKERS"]
        else:
            os.environ["FNRUN_WORKERS"] = workers


def _choice(body: ModuleType) -> Callable[..., str | None]:
    """The write-back's choice, checked to be what the wrapper counts: a function of that name,
    looked up by name in the module where the write-back calls it. A renamed or no longer called
    function stops the bench with its name, where patching it would count zero and say nothing."""
    chosen = getattr(body, CHOICE, None)
    if not inspect.isfunction(chosen):
        raise SystemExit(f"fallback_rate: orchestrator.write.body has no function {CHOICE} to count"
                         " (renamed?): point CHOICE at the function that returns a text edit or None")
    callers = [f for f in vars(body).values() if inspect.isfunction(f) and f.__module__ == body.__name__]
    if not any(CHOICE in f.__code__.co_names for f in callers):
        raise SystemExit(f"fallback_rate: nothing in orchestrator.write.body calls {CHOICE} by name any more,"
                         " so counting its calls would count none: point CHOICE at the write-back's choice")
    return chosen


def counted(package: Path, image: str | None = None, arguments: tuple[str, ...] = ()) -> dict[str, int]:
    from orchestrator import api

    request = api.RunRequest(
        directory=str(package), functions=api.Functions(image=image, arguments=arguments),
        sandbox=api.SandboxSettings(image_pull_policy="never"), output=api.Output(quiet=True),
    )
    with open(os.devnull, "w") as devnull, tallied() as counts:
        api.run(request, stdout=devnull)
    return dict(counts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", type=Path, metavar="DIR", help="packages to run (each is copied first); samples/* when none")
    sys.path.insert(0, str(REPO))
    packages = parser.parse_args(argv).packages or sorted(p for p in (REPO / "samples").iterdir() if any(p.glob("*.yaml")) and p.name != "ci")
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
