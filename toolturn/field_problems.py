"""Errors that name the field they are about, raised from cross-field checks.

A plain `ValueError` raised in a model validator is reported at the model's own location, which
for a rule like "this tool name is not defined" points at the wrong place. Pydantic keeps the
locations of a `ValidationError` raised inside a validator, so these helpers raise one located at
the field (relative to the model being validated) and re-raise a nested model's errors under a
prefix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NoReturn, TypeVar

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

Location = tuple[str | int, ...]
_T = TypeVar("_T", str, float)


class FieldProblem:
    """One problem at a location: what `raise_problems` turns into one line error."""

    __slots__ = ("input", "kind", "loc", "message")

    def __init__(
        self, loc: Sequence[str | int], message: str, input: Any = None, kind: str = "value_error"
    ) -> None:
        self.loc: Location = tuple(loc)
        self.message = message
        self.input = input
        self.kind = kind


def _details(problem: FieldProblem) -> InitErrorDetails:
    # A custom error keeps the message as written (no "Value error, " prefix) and the kind given.
    return InitErrorDetails(
        type=PydanticCustomError(problem.kind, problem.message),
        loc=problem.loc,
        input=problem.input,
    )


def raise_problems(title: str, problems: Iterable[FieldProblem]) -> None:
    """Raise one ValidationError holding every problem (or return if there are none)."""
    details = [_details(problem) for problem in problems]
    if details:
        raise ValidationError.from_exception_data(title, details)


def raise_at(title: str, loc: Sequence[str | int], message: str, input: Any = None) -> NoReturn:
    """Raise a ValidationError with one error at `loc`."""
    raise ValidationError.from_exception_data(title, [_details(FieldProblem(loc, message, input))])


def problems_under(prefix: Sequence[str | int], error: ValidationError) -> list[FieldProblem]:
    """The errors of `error` located under `prefix`, keeping their kinds and messages."""
    return [
        FieldProblem((*prefix, *detail["loc"]), detail["msg"], detail.get("input"), detail["type"])
        for detail in error.errors(include_url=False)
    ]


def repeated(values: Sequence[_T]) -> list[_T]:
    """The values that stand more than once in `values`, each once, sorted: what a "listed more
    than once" error names (policies, profiles, protocols, load levels, grid values)."""
    seen: set[_T] = set()
    twice: set[_T] = set()
    for value in values:
        (twice if value in seen else seen).add(value)
    return sorted(twice)
