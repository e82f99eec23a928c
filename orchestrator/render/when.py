"""A step's `when:` condition: a CEL expression over `resources` (the items the step would see).

cel-python (module celpy) is imported only when a Kptfile has a `when`, so renders without one
do not pay for its import."""

from __future__ import annotations

from ..errors import InputError
from ..resource import Resource


def holds(expression: str, items: list[Resource], where: str) -> bool:
    """Evaluate `expression`; anything but a boolean result is the Kptfile's mistake."""
    import celpy  # lazy: ~0.2 s of imports (lark grammar)
    from celpy import celtypes

    from functions.kpt_catalog import regex

    bad_patterns: list[str] = []

    def matches(text: str, pattern: str) -> celtypes.BoolType | celpy.CELEvalError:
        """CEL's `matches()` on RE2 as celpy's; a bad pattern is said as such (celpy's own
        prints RE2's log lines, and `exists()` turns its error into "no such overload")."""
        try:
            return celtypes.BoolType(regex.compile(pattern).search(text) is not None)
        except ValueError as err:
            bad_patterns.append(str(err))
            return celpy.CELEvalError(str(err), ValueError, ())

    value: object
    try:
        env = celpy.Environment()
        program = env.program(env.compile(expression), functions={"matches": matches})
        value = program.evaluate({"resources": celpy.json_to_cel([r.value for r in items])})
    except celpy.CELParseError as err:
        raise InputError(f"{where}: when {expression!r} is not valid CEL: {str(err).splitlines()[0]}") from None
    except celpy.CELEvalError as err:
        value = err  # raised or returned, celpy's evaluation error says the same
    if bad_patterns:
        raise InputError(f"{where}: when {expression!r} failed: {bad_patterns[0]}")
    if isinstance(value, celpy.CELEvalError):
        raise InputError(f"{where}: when {expression!r} failed: {_short(value)}")
    if not isinstance(value, celtypes.BoolType):
        raise InputError(f"{where}: when {expression!r} must be true or false, not {type(value).__name__} {value!s}")
    return bool(value)


def _short(err: Exception) -> str:
    """celpy's message without the dump of its whole activation."""
    text = str(err.args[0] if err.args else err).split(" (in activation")[0]
    return text.splitlines()[0][:200] if text else type(err).__name__
