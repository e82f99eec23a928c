"""The one exception family carries what the user reads as typed fields: what it is about
(`context`, said first) and what to do (`fix`, said last); a caller that knows more adds them to
the same error, which keeps its type (and so its exit code) for whoever decides by type above."""

from __future__ import annotations

from hypothesis import given, strategies as st

from orchestrator.errors import EnvironmentProblem, FnrunError, ImageUnavailable, InputError

text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@given(message=text, context=st.none() | text, fix=st.none() | text)
def test_the_line_is_context_message_fix(message: str, context: str | None, fix: str | None) -> None:
    err = InputError(message, context=context, fix=fix)
    said = f"{context}: {message}" if context else message
    assert (err.what, str(err)) == (said, f"{said}; {fix}" if fix else said)


@given(message=text, first=text, second=text, fix=text)
def test_seen_from_keeps_the_deepest_context_the_type_and_the_exit_code(message: str, first: str, second: str, fix: str) -> None:
    err = ImageUnavailable(message)
    same = err.seen_from(first).seen_from(second, fix)
    assert same is err and type(same) is ImageUnavailable and isinstance(same, EnvironmentProblem)
    assert str(same) == f"{first}: {message}; {fix}"
    assert same.exit_code == 4
    assert FnrunError(message, fix=fix).seen_from(None, "another").fix == fix
