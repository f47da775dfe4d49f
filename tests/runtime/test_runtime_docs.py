"""Every public name of `toolturn.runtime` says what it is (issue 15, section 5): each public class
and function of its modules, and each public method and property of those classes, has a docstring
of its own (a dataclass's generated signature is not one)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

import toolturn.runtime


def _own_doc(obj: Any, name: str) -> str | None:
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    if doc is None or doc.startswith(f"{name}("):  # dataclasses write their signature
        return None
    return str(doc)


def public_names() -> Iterator[tuple[str, Any]]:
    """(dotted name, object) of every public class, function, method and property defined in a
    module of `toolturn.runtime`."""
    # walk_packages: the modules of subpackages too (runtime/openai/).
    for module_info in pkgutil.walk_packages(toolturn.runtime.__path__, "toolturn.runtime."):
        module = importlib.import_module(module_info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            yield f"{module.__name__}.{name}", obj
            if not inspect.isclass(obj):
                continue
            for member_name, member in vars(obj).items():
                function = member.fget if isinstance(member, property) else member
                if isinstance(function, (staticmethod, classmethod)):
                    function = function.__func__
                if member_name.startswith("_") or not inspect.isfunction(function):
                    continue
                yield f"{module.__name__}.{name}.{member_name}", function


def test_every_public_name_of_the_runtime_has_a_docstring() -> None:
    names = dict(public_names())
    assert "toolturn.runtime.loop.ToolTurnLoop.on_events" in names  # the walk finds methods
    assert "toolturn.runtime.openai.chat.ChatAccumulator.feed" in names  # and subpackages
    undocumented = [
        name for name, obj in names.items() if _own_doc(obj, name.rsplit(".", 1)[1]) is None
    ]
    assert undocumented == []


def test_every_name_the_package_exports_is_one_of_them_or_a_value() -> None:
    walked = {id(obj) for _, obj in public_names()}
    for name in toolturn.runtime.__all__:
        obj = getattr(toolturn.runtime, name)
        assert id(obj) in walked or not (inspect.isclass(obj) or inspect.isfunction(obj)), name
