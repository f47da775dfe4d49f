"""The scenario reference: every key of a scenario file by its dotted path, from the pydantic
models of `toolturn.scenario.schema` (and the models it composes), with its type, default, unit,
bounds and description.

A distribution (of durations, or of counts) is one key here, of its kind's type; the keys of each
kind are listed once, at the end, rather than under every key that takes one. A table of free
names (a tool's name, a dotted path of an experiment) is written `<tool>`, `<path>`, ...; an array
of tables `[]` (`tools.define[].name`).
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from toolturn.counts import EmpiricalCount, FixedCount, LogNormalCount, UniformCount
from toolturn.distributions import Empirical, Fixed, LogNormal, Uniform
from toolturn.reference.markdown import GENERATED, code, table
from toolturn.scenario.schema import Scenario
from toolturn.tools.spec import ToolSpec

DURATION_KINDS: tuple[type[BaseModel], ...] = (Fixed, Uniform, LogNormal, Empirical)
COUNT_KINDS: tuple[type[BaseModel], ...] = (
    FixedCount, UniformCount, LogNormalCount, EmpiricalCount
)
DURATION = "duration distribution"
COUNT = "count"
# Where a table's keys are free names, what the reference calls them (else `<key>`).
FREE_NAMES = {"tool_mix": "tool", "override": "tool", "model_names": "pattern", "grid": "path",
              "points": "path"}
# `[tools.override.NAME]` is typed `dict[str, dict[str, Any]]` in the schema, since it is merged
# into the catalogue's tool before it is validated (toolturn.tools.override); its keys are a
# tool's, each one optional.
PARTIAL_TOOLS = ("tools", "override")

Cover = Literal["exact", "duration", "count", "any"]


@dataclass(frozen=True)
class Key:
    """One key of a scenario file. `cover` says which keys below it a file may write: none
    (`exact`), a distribution's (`duration`, `count`), or anything (`any`: JSON, paths)."""

    path: tuple[str, ...]
    type: str
    default: str
    unit: str
    bounds: str
    description: str
    cover: Cover = "exact"

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class Table:
    """A table of the file (`[session.interrupts]`) and what its model's docstring says of it."""

    path: tuple[str, ...]
    summary: str
    kind: str = ""  # one kind of a table of several (`kind = "generated"`), or ""


def _members(annotation: Any) -> tuple[Any, ...]:
    """The types an annotation admits, Annotated and None taken off."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(m for arg in typing.get_args(annotation) for m in _members(arg))
    return () if annotation is type(None) else (annotation,)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


# pydantic keeps a field's constraints as annotated_types objects (Ge(ge=1), MinLen(...)), each
# with one attribute named for it; read by name, as annotated_types is pydantic's to import.
BOUND_WORDS = (("ge", ">= {}"), ("gt", "> {}"), ("le", "<= {}"), ("lt", "< {}"),
               ("min_length", "at least {} long"), ("max_length", "at most {} long"),
               ("pattern", "matches {}"))


def _bounds(metadata: Sequence[Any]) -> str:
    """The constraints pydantic keeps on a field (or on an array's elements), as text."""
    words = []
    for item in metadata:
        for attribute, word in BOUND_WORDS:
            value = getattr(item, attribute, None)
            if value is not None:
                shown = value if isinstance(value, str) else number(value)
                words.append(word.format(shown))
    return ", ".join(words)


def _element_bounds(annotation: Any) -> str:
    """Bounds written on an array's elements (`list[Annotated[float, Field(ge=0)]]`)."""
    for member in _members(annotation):
        args = typing.get_args(member)
        if typing.get_origin(member) is list and typing.get_origin(args[0]) is typing.Annotated:
            inner = [m for info in typing.get_args(args[0])[1:] for m in _metadata_of(info)]
            if _bounds(inner):
                return "each " + _bounds(inner)
    return ""


def _metadata_of(info: Any) -> list[Any]:
    return list(info.metadata) if isinstance(info, FieldInfo) else [info]


def number(value: float) -> str:
    """A number as a person writes it: whole values without a point or an exponent (a seed's
    bound is 9223372036854775807, not 9.22337e+18), others in their shortest form."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value) if isinstance(value, int) else f"{value:g}"


def toml(value: Any) -> str:
    """A default as a scenario file would write it."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", exclude_none=True)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{key} = {toml(item)}" for key, item in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return toml(info.default_factory())  # type: ignore[call-arg]
    return toml(info.default)


def _type_name(annotation: Any) -> str:
    members = _members(annotation)
    if set(members) == set(DURATION_KINDS):
        return DURATION
    if set(members) == set(COUNT_KINDS):
        return f"{COUNT} (an integer, or a count distribution)"
    names = [_one_type(member) for member in members]
    return " or ".join(dict.fromkeys(names))


def _one_type(member: Any) -> str:
    origin = typing.get_origin(member)
    if origin is Literal:
        return " | ".join(toml(choice) for choice in typing.get_args(member))
    if origin is list:
        return f"array of {_type_name(typing.get_args(member)[0])}"
    if origin is dict or member is dict:
        return "table"
    if member is typing.Any:
        return "any JSON value"
    simple = {int: "integer", float: "number", bool: "boolean", str: "string"}
    if member in simple:
        return simple[member]
    if _is_model(member):
        return "table"
    raise TypeError(f"no reference type for {member!r}")


def _unit(name: str, type_name: str) -> str:
    """The unit a key is written in: the house spells it in the name (`_ms`, `_s`, `_per_s`),
    and a duration distribution is written in ms."""
    if name == "tokens_per_s":
        return "tokens/s"
    if name.endswith("_per_s"):
        return "1/s"
    if name == "ms" or name.endswith("_ms") or type_name == DURATION:
        return "ms"
    if name.endswith("_s"):
        return "s"
    if name.endswith("_tokens"):
        return "tokens"
    return ""


def walk(model: type[BaseModel], path: tuple[str, ...]) -> Iterator[Key | Table]:
    """Every table and key under `model`, in the schema's order, tables before their keys."""
    yield Table(path, _summary(model))
    for name, info in model.model_fields.items():
        yield from _field((*path, name), info)


def _field(path: tuple[str, ...], info: FieldInfo) -> Iterator[Key | Table]:
    annotation = info.annotation
    members = _members(annotation)
    name = path[-1]
    models = [m for m in members if _is_model(m)]
    description = info.description or ""
    if path == PARTIAL_TOOLS:
        yield from _partial_tools(path, description)
        return
    type_name = _type_name(annotation)
    if models and not (set(members) <= set(DURATION_KINDS) | set(COUNT_KINDS)):
        yield from _tables(path, models, info)
        return
    elements = [
        _members(typing.get_args(m)[0]) for m in members if typing.get_origin(m) is list
    ]
    if elements and elements[0] and all(_is_model(m) for m in elements[0]):
        yield _key(path, info, "array of tables", description)
        yield from _kinds((*path[:-1], name + "[]"), list(elements[0]))
        return
    cover: Cover = "exact"
    if type_name == DURATION:
        cover = "duration"
    elif type_name.startswith(COUNT):
        cover = "count"
    elif "table" in type_name or "any JSON value" in type_name:
        cover = "any"
    free = _free_table(path, members)
    if free is not None:
        yield _key(path, info, type_name, description)
        yield free
        return
    bounds = ", ".join(filter(None, (_bounds(info.metadata), _element_bounds(annotation))))
    yield Key(path, type_name, _default(info), _unit(name, type_name), bounds, description, cover)


def _key(path: tuple[str, ...], info: FieldInfo, type_name: str, description: str) -> Key:
    return Key(path, type_name, _default(info), "", _bounds(info.metadata), description)


def _tables(
    path: tuple[str, ...], models: list[type[BaseModel]], info: FieldInfo
) -> Iterator[Key | Table]:
    """A sub-table (of one kind, or of several: a discriminated union, `[model.script]`), with a
    key of its own when it is optional."""
    if info.default is None:  # an optional table: absent by default
        yield _key(path, info, "table", info.description or "")
    yield from _kinds(path, models)


def _kinds(path: tuple[str, ...], models: list[type[BaseModel]]) -> Iterator[Key | Table]:
    """The keys of a table of one model, or of one of several (a discriminated union), each
    kind's in turn under a heading of its own."""
    if len(models) == 1:
        yield from walk(models[0], path)
        return
    for model in models:
        key, value = _discriminator(model)
        for item in walk(model, path):
            if isinstance(item, Table) and item.path == path:
                item = Table(item.path, item.summary, f"{key} = {value}")
            yield item


def _discriminator(model: type[BaseModel]) -> tuple[str, str]:
    """The key and value that select `model` among its union's kinds (`kind = "generated"`)."""
    for name, info in model.model_fields.items():
        if typing.get_origin(info.annotation) is Literal and name in ("kind", "type"):
            return name, toml(typing.get_args(info.annotation)[0])
    raise TypeError(f"{model.__name__}: no kind or type key")


def _free_table(path: tuple[str, ...], members: Sequence[Any]) -> Key | None:
    """The key below a table of free names (`tool_mix.<tool>`), from its value's type."""
    for member in members:
        if typing.get_origin(member) is dict:
            value = typing.get_args(member)[1]
            if value is typing.Any:  # a JSON object (a schema, an input): the key covers it
                return None
            type_name = _type_name(value)
            inner = [m for arg in typing.get_args(value)[1:] for m in _metadata_of(arg)]
            cover: Cover = "any" if "JSON" in type_name else "exact"
            names = FREE_NAMES.get(path[-1].removesuffix("[]"), "key")
            free = (*path, f"<{names}>")
            return Key(free, type_name, "", _unit(free[-1], type_name), _bounds(inner), "", cover)
        if typing.get_origin(member) is list:
            element = typing.get_args(member)[0]
            if typing.get_origin(_members(element)[0]) is dict:
                return _free_table((*path[:-1], path[-1] + "[]"), _members(element))
    return None


def _partial_tools(path: tuple[str, ...], description: str) -> Iterator[Key | Table]:
    """A catalogue tool's override: the keys of a tool but its name (toolturn.tools.override
    refuses a rename), each optional."""
    tool = (*path, "<tool>")
    yield Table(tool, description + " Any key of [[tools.define]] but `name`, each optional: "
                "only the keys given change. A sub-table merges key by key (`duration = { "
                "median_ms = 200 }` keeps the distribution's kind and sigma); one that gives its "
                "own `kind` replaces the distribution, and `input_schema` is replaced whole.")
    for item in walk(ToolSpec, tool):
        if isinstance(item, Key) and item.path != (*tool, "name"):
            yield Key(item.path, item.type, "the tool's", item.unit, item.bounds,
                      item.description, item.cover)
        elif isinstance(item, Table) and item.path != tool:
            yield item


def _summary(model: type[BaseModel]) -> str:
    """The first paragraph of a model's docstring, on one line."""
    doc = model.__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def scenario_keys() -> list[Key]:
    """Every key of a scenario file."""
    return [item for item in walk(Scenario, ()) if isinstance(item, Key)]


def distribution_keys() -> list[tuple[str, Key]]:
    """The keys of every kind of distribution, as (the kind's name, key)."""
    rows = []
    for family, kinds in ((DURATION, DURATION_KINDS), (COUNT, COUNT_KINDS)):
        for kind in kinds:
            kind_name = toml(typing.get_args(kind.model_fields["kind"].annotation)[0])
            for item in walk(kind, ()):
                if isinstance(item, Key) and item.path != ("kind",):
                    rows.append((f"{family}, kind = {kind_name}", item))
    return rows


HEADER = ("key", "type", "default", "unit", "bounds", "meaning")


def render() -> str:
    """The scenario reference page."""
    lines = [
        GENERATED, "", "# Scenario reference", "",
        "Every key of a scenario file, by its dotted path as the file nests it "
        "(`session.interrupts.probability` is `probability` under `[session.interrupts]`); "
        "`[]` is an array of tables (`[[tools.define]]`), `<tool>` and the like a name of "
        "your own. An experiment names any of these paths "
        "([experiments-and-capacity.md](../experiments-and-capacity.md)). "
        "Unknown keys are errors, and values have the type they are written with (an integer "
        "is accepted where a number is expected).",
        "",
        "A duration distribution or a count is one key here; its keys, once per kind, are under "
        "[Distributions](#distributions). Bounds not shown here (cross-key rules: a fallback "
        "model needs `runtime.fallback_after_overloads`, one session must fit in simulated "
        "time, ...) are checked when the file is read and named in the error.",
    ]
    for heading, rows in _grouped(walk(Scenario, ())):
        # In code: a free name's `<tool>` would be read as an HTML tag in a heading.
        title = code("[" + ".".join(heading.path) + "]") if heading.path else "The top level"
        title += f" ({code(heading.kind)})" if heading.kind else ""
        lines += ["", f"## {title}", ""]
        if heading.summary:
            lines += [heading.summary, ""]
        lines += table(HEADER, rows)
    lines += ["", "## Distributions", "",
              "A duration is written in ms and drawn to integer nanoseconds; a count is a "
              "whole number (a bare integer is a fixed count). `kind` picks the distribution.",
              ""]
    kind_rows = [[code(kind), *_row(key)] for kind, key in distribution_keys()]
    lines += table(("distribution", *HEADER), kind_rows)
    return "\n".join(lines) + "\n"


def _row(key: Key) -> list[str]:
    default = key.default if key.default in ("", "required", "the tool's") else code(key.default)
    return [code(key.dotted), key.type, default, key.unit, key.bounds, key.description]


def _grouped(items: Iterator[Key | Table]) -> list[tuple[Table, list[list[str]]]]:
    """Each table with the rows of its own keys, in the order the tables first appear: a key
    written after a sub-table in the schema (`runtime.fallback_after_overloads`, after
    `[runtime.retries]`) still belongs to its own table. The tables of one union (a heading
    per kind) stay apart; a key belongs to the last heading of its table seen before it, and a
    free name's key to the table of the key it is under."""
    groups: list[tuple[Table, list[list[str]]]] = []
    latest: dict[tuple[str, ...], list[list[str]]] = {}
    for item in items:
        if isinstance(item, Table):
            rows: list[list[str]] = []
            groups.append((item, rows))
            latest[item.path] = rows
        else:
            # A free name's key (`model.script.tool_mix.<tool>`) goes with the key it is under.
            table_path = item.path[:-1]
            while table_path not in latest:
                table_path = table_path[:-1]
            latest[table_path].append(_row(item))
    return [(heading, rows) for heading, rows in groups if rows]
