"""The `fnrun` command (its console script) and `python -m orchestrator`: a stop is noted from the
first instruction fnrun runs, then the launcher takes over.

Why here and not in the launcher: loading the launcher's modules takes tens of milliseconds, and a
Ctrl-C in that time would meet Python's own handler, whose exception an import's module-lock
callback may drop (orchestrator.stops). Until the launcher takes over, a stop is only noted and
held, never raised mid-import; the launcher raises it as soon as it has taken over. The launcher
module itself is light (its modules load as a command needs them), so `fnrun --version`, which it
answers at once, does not even read the dataclasses' kept code."""

from __future__ import annotations

import sys

from orchestrator import methodcode, stops


def main() -> None:
    found = stops.start_command()
    from orchestrator import launch

    kept = None if launch.answers_at_once(sys.argv[1:]) else methodcode.install()  # before the launcher's modules define their dataclasses
    launch.main(handlers=found, kept=kept)


if __name__ == "__main__":
    main()
