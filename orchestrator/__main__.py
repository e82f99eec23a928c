"""The `fnrun` command (its console script) and `python -m orchestrator`: a stop is noted from the
first instruction fnrun runs, then the launcher takes over.

Why here and not in the launcher: loading the launcher takes tens of milliseconds (its sandbox
modules), and a Ctrl-C in that time would meet Python's own handler, whose exception an import's
module-lock callback may drop (orchestrator.stops). Until the launcher takes over, a stop is
only noted and held, never raised mid-import; the launcher raises it as soon as it has taken over."""

from __future__ import annotations

from orchestrator import methodcode, stops


def main() -> None:
    found = stops.start_command()
    kept = methodcode.install()  # before the launcher's modules define their dataclasses
    from orchestrator.launch import main as launch

    launch(handlers=found, kept=kept)


if __name__ == "__main__":
    main()
