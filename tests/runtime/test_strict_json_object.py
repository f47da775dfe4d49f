"""`parse_json_object`: strict JSON that must hold an object, any other value named by type."""

from __future__ import annotations

import pytest

from toolturn.runtime.strict_json import NotAnObject, parse_json_object


def test_an_object_is_returned_as_a_dict() -> None:
    assert parse_json_object('{"a": [1, 2.5]}') == {"a": [1, 2.5]}


@pytest.mark.parametrize(
    ("text", "kind"), [("[1]", "list"), ('"x"', "str"), ("3", "int"), ("null", "NoneType")]
)
def test_another_value_is_not_an_object_named_by_its_type(text: str, kind: str) -> None:
    with pytest.raises(NotAnObject) as caught:
        parse_json_object(text)
    assert caught.value.kind == kind
    assert str(caught.value) == f"JSON {kind}, not an object"


@pytest.mark.parametrize("text", ["{", "NaN", '{"a": 1e999}', "[" * 100_000])
def test_text_that_is_not_strict_json_is_a_plain_value_error(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_json_object(text)
    assert not isinstance(caught.value, NotAnObject)
