"""Reading a scenario file: TOML syntax, then the schema, with errors a person can act on.

Every failure is one `UserError` whose message starts with the file's path. A schema error names
the field as the file spells it (`tools.define[2].duration.median_ms`) and says why in plain words;
several errors give a summary line, then one line each:

    scenarios/x.toml: 2 errors
      load.concurency: unknown key (did you mean 'concurrency'?)
      runtime.policies[1]: must be one of 'streaming', 'at_message_stop', 'serial' (got 'fast')
"""

from __future__ import annotations

import difflib
import re
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from toolturn.errors import UserError, quoted
from toolturn.scenario.schema import Scenario
from toolturn.tools.spec import ToolSpec

# TOML keys that need no quotes; others are shown quoted, as the file must spell them.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# Long inputs are cut in messages: the point is to recognise the value, not to print it again.
_MAX_INPUT_CHARS = 60


def load_scenario(path: str | Path) -> Scenario:
    """The scenario in the TOML file at `path`; raises UserError, naming the file, if it is bad."""
    path = Path(path)
    try:
        file_bytes = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, not a scenario file") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error.strerror}") from None
    try:
        # A byte order mark, which some editors write first, is no TOML statement.
        data = tomllib.loads(file_bytes.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        # tomllib's message ends with "(at line L, column C)".
        raise UserError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        # tomllib recurses into nested arrays and inline tables.
        raise UserError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    try:
        return Scenario.from_file_bytes(data, file_bytes)
    except ValidationError as error:
        raise validation_error(path, error, data) from None


def with_overrides(
    scenario: Scenario,
    *,
    seed: int | None = None,
    sessions: int | None = None,
    policies: Sequence[str] | None = None,
    profiles: Sequence[str] | None = None,
) -> Scenario:
    """`scenario` with command-line overrides applied (None: keep the file's value), validated
    again, so an override the file could not hold (more sessions than a trace has arrivals, an
    unknown policy) is refused the same way; raises UserError naming the flag's field.

    The content hash stays the file's: whoever records it should record the overrides beside it.
    """
    data = scenario.model_dump(mode="python", exclude_unset=True)
    if seed is not None:
        data["seed"] = seed
    if sessions is not None:
        data["load"]["sessions"] = sessions
    if policies is not None:
        data.setdefault("runtime", {})["policies"] = list(policies)
    if profiles is not None:
        data.setdefault("runtime", {})["profiles"] = list(profiles)
    try:
        overridden = Scenario.model_validate(data)
    except ValidationError as error:
        raise validation_error(f"{scenario.name} (overridden)", error, data) from None
    overridden._content_hash = scenario.content_hash
    return overridden


def unmodelled_live(scenario: Scenario) -> list[str]:
    """The scenario's sections that only the simulator carries out, when set: session faults
    (crash, rewind) and compaction. A live run's sessions are real processes of the client's."""
    session = scenario.session
    return [name for name, used in (("[session.faults]", session.resumes),
                                    ("[session.compaction]",
                                     session.compaction.trigger_tokens is not None)) if used]


def without_session_faults(scenario: Scenario) -> Scenario:
    """`scenario` without its session faults and compaction (`[session.faults]`,
    `[session.compaction]`): what a live run cannot do to a real process, so that a simulated
    twin of a live run is run the same way. The content hash stays the file's."""
    data = scenario.model_dump(mode="python", exclude_unset=True)
    session = data.get("session", {})
    session.pop("faults", None)
    session.pop("compaction", None)
    stripped = Scenario.model_validate(data)
    stripped._content_hash = scenario.content_hash
    return stripped


def validation_error(
    path: str | Path, error: ValidationError, data: Mapping[str, Any]
) -> UserError:
    """The errors of validating `data` (parsed from `path`) as the message described above."""
    lines = sorted(
        {
            f"{_toml_path(d['loc'], data)}: {_reason(d, data)}"
            for d in error.errors(include_url=False)
        }
    )
    if len(lines) == 1:
        return UserError(f"{path}: {lines[0]}")
    return UserError(f"{path}: {len(lines)} errors", details=lines)


def _toml_path(loc: Sequence[str | int], data: Any) -> str:
    """`loc` spelled as in the file: keys joined by dots, list items as [i].

    Pydantic puts the tag of a discriminated union (a distribution's kind) and the names of union
    members into locations; they are not keys of the file. Walking the parsed file alongside the
    location tells them apart: an element that is not in the data there is dropped, unless it is
    the last one (which may name a missing key) or is followed by a list index (a tag is followed
    by a field name; this is a list the file leaves out, such as a catalogue tool's examples seen
    through an override).
    """
    parts: list[str] = []
    current = data
    for position, element in enumerate(loc):
        child = _step(current, element)  # None means absent: TOML has no null
        following = loc[position + 1] if position < len(loc) - 1 else None
        if child is not None:
            current = child
        elif (following is not None and not isinstance(following, int)) or _is_tag(
            current, element
        ):
            continue
        if isinstance(element, int):
            parts.append(f"[{element}]")
        else:
            key = element if _BARE_KEY.fullmatch(element) else quoted(element)
            parts.append(("." if parts else "") + key)
    return "".join(parts) or "(top level)"


def _is_tag(data: Any, element: str | int) -> bool:
    return isinstance(data, Mapping) and element in (data.get("kind"), data.get("type"))


def _reason(detail: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    kind = detail["type"]
    message: str = detail["msg"]
    if kind == "extra_forbidden":
        return "unknown key" + _suggestion(detail["loc"], data)
    if kind == "missing":
        return "required, but missing"
    if kind == "union_tag_invalid":
        ctx = detail.get("ctx", {})
        return f"unknown kind {ctx.get('tag')!r} (expected one of {ctx.get('expected_tags')})"
    if kind == "union_tag_not_found":
        return f"needs a {detail.get('ctx', {}).get('discriminator', 'kind')} key"
    if kind == "literal_error":
        expected = detail.get("ctx", {}).get("expected", "")
        return f"must be one of {expected}{_got(detail)}"
    message = message.removeprefix("Value error, ")
    # Pydantic's own checks say "Input should be ..."; say what was given instead.
    if message.startswith("Input should be "):
        return "should be " + message.removeprefix("Input should be ") + _got(detail)
    return message


def _got(detail: Mapping[str, Any]) -> str:
    if "input" not in detail or isinstance(detail["input"], (dict, list)):
        return ""
    shown = repr(detail["input"])
    if len(shown) > _MAX_INPUT_CHARS:
        shown = shown[: _MAX_INPUT_CHARS - 3] + "..."
    return f" (got {shown})"


def _suggestion(loc: Sequence[str | int], data: Mapping[str, Any]) -> str:
    """ " (did you mean 'x'?)" when the unknown key is close to a key the model there accepts."""
    allowed = _allowed_keys(loc[:-1], data)
    matches = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
    if matches:
        return f" (did you mean {matches[0]!r}?)"
    if allowed:
        return f" (allowed: {', '.join(allowed)})"
    return ""


def _allowed_keys(loc: Sequence[str | int], data: Any) -> list[str]:
    """The field names of the model at `loc`, found by walking the schema beside the data."""
    annotation: Any = Scenario
    current = data
    if tuple(loc[:2]) == ("tools", "override") and len(loc) >= 3:
        # An override is plain data until it is merged into a ToolSpec: walk it as one.
        annotation, current = ToolSpec, _step(_step(_step(data, "tools"), "override"), loc[2])
        loc = loc[3:]
    for element in loc:
        model = _model_for(annotation, current)
        if model is not None:
            if element not in model.model_fields:
                continue  # a union tag or member name in the location
            annotation = model.model_fields[element].annotation
        else:
            annotation = _item_type(annotation)
        current = _step(current, element)
    model = _model_for(annotation, current)
    return sorted(model.model_fields) if model is not None else []


def _step(data: Any, element: str | int) -> Any:
    if isinstance(data, Mapping):
        return data.get(element)
    if isinstance(data, list) and isinstance(element, int) and 0 <= element < len(data):
        return data[element]
    return None


def _model_for(annotation: Any, data: Any) -> type[BaseModel] | None:
    """The model class `annotation` means for `data`: itself, or the union member whose `kind`
    (or `type`) literal matches the data's."""
    annotation = _strip_annotated(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    members = [
        m for m in _union_members(annotation) if isinstance(m, type) and issubclass(m, BaseModel)
    ]
    if len(members) == 1:
        return members[0]
    for member in members:
        for tag in ("kind", "type"):
            field = member.model_fields.get(tag)
            if (
                field is not None
                and isinstance(data, Mapping)
                and data.get(tag) in typing.get_args(field.annotation)
            ):
                return member
    return None


def _item_type(annotation: Any) -> Any:
    """The element type of list[X] or the value type of dict[str, X] (looking through Optional)."""
    for candidate in [_strip_annotated(annotation), *_union_members(annotation)]:
        origin = typing.get_origin(candidate)
        if origin is list:
            return typing.get_args(candidate)[0]
        if origin is dict:
            return typing.get_args(candidate)[1]
    return None


def _strip_annotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _union_members(annotation: Any) -> list[Any]:
    annotation = _strip_annotated(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [_strip_annotated(member) for member in typing.get_args(annotation)]
    return []
