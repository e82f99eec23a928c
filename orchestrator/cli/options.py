"""The typer declarations of the schema's options (orchestrator.option_schema): a command names the
schema's options it takes, and its parameters are made from them, with their spellings, types,
defaults, environment variables, help and panels. `run` and `render` share the options and so
spell, default and explain them alike; the command receives them as keyword arguments, which
orchestrator.requests.command_line turns into the request, as the launcher does without typer."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Optional, TypeVar

import typer

from ..option_schema import Option, option

F = TypeVar("F", bound=Callable[..., Any])


def named(*names: str) -> tuple[Option, ...]:
    """The schema's options of these names, for a command that takes a few of run's."""
    return tuple(option(name) for name in names)


def declaration(option: Option) -> Any:
    """The option's typer declaration (its parameter's default)."""
    return typer.Option(
        option.default, *option.spellings, help=option.help_text, metavar=option.metavar, envvar=option.envvar,
        show_envvar=option.envvar is not None and option.envvar not in option.help_text, show_default=option.show_default,
        rich_help_panel=option.panel, hidden=option.hidden, min=option.minimum,
    )


def annotation(option: Option) -> Any:
    """The parameter's type as typer reads it."""
    if not option.takes_value:
        return bool
    kind = list[option.kind] if option.many else option.kind  # type: ignore[name-defined]
    return Optional[kind] if option.default is None else kind  # noqa: UP045 - a type built at run time, for typer to read


def takes(options: Iterable[Option]) -> Callable[[F], F]:
    """Give a command `def f(<own parameters>, **values)` the options as keyword parameters after its
    own (typer reads the signature), so `values` holds every option's value by its name."""

    def declare(function: F) -> F:
        own = [p for p in inspect.signature(function, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
        made = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=declaration(o), annotation=annotation(o)) for o in options]
        function.__signature__ = inspect.Signature([*own, *made])  # type: ignore[attr-defined]
        return function

    return declare
