"""Regular expressions a package's config supplies, read as kpt's Go functions read them.

Python's `re` backtracks: a pattern such as `(a+)+$` in a search-replace config or a Starlark
script takes time exponential in the value it is tried on, and a builtin runs inside fnrun. RE2
(google-re2, which cel-python already brings) matches in time linear in the text, and it is the
syntax of Go's `regexp` that kpt's functions use: `[[:alpha:]]` classes work, backreferences and
lookaround are refused, as they are by kpt."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would also print each bad pattern on stderr through absl


@lru_cache(maxsize=256)
def compile(pattern: str) -> Any:
    """The pattern compiled, once (as `re` caches its own): search-replace's glob is matched per
    item, a Starlark `re.sub` per call. ValueError names it and what is wrong with it."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        reason = err.args[0].decode("utf-8", "replace") if err.args and isinstance(err.args[0], bytes) else str(err)
        raise ValueError(f"invalid regular expression {str(pattern)!r}: {reason}") from None


def escape(text: str) -> str:
    """`text` as a pattern that matches only itself."""
    return re2.escape(text)
