"""`python -m orchestrator` goes through the launcher, as the `fnrun` script does."""

from __future__ import annotations

if __name__ == "__main__":
    from .launch import main

    main()
