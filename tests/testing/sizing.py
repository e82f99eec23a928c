"""How many rounds a test that repeats itself over generated or randomly timed input runs: all of
them in the whole suite and in CI (CI=true), a tenth in the fast subset (`pytest -m "not engine"`
outside CI), so the subset gives feedback in minutes and asserts the same things over fewer draws.

tests/conftest.py decides which run this is (`decide`, in pytest_configure) before any test module
is imported, so a module's `@settings(max_examples=examples(N))` reads the answer as it is
decorated. Undecided (a module run without the suite's conftest) is the whole count."""

from __future__ import annotations

#: The fast subset runs one round in this many (at least one).
FAST_SHARE = 10

_fast = False


def decide(fast: bool) -> None:
    global _fast
    _fast = fast


def fast() -> bool:
    """Whether this run is the fast subset outside CI."""
    return _fast


def examples(full: int) -> int:
    """`full` in the whole suite and CI; a tenth of it, at least one, in the fast subset."""
    return max(1, full // FAST_SHARE) if _fast else full
