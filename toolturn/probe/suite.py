"""A probe suite: a folder with `suite.toml` naming its cases, each a small scenario file (with a
header saying what it checks) and the one fault the case puts into it.

    # suite.toml
    timeout_s = 90          # per case: the command is killed after this long
    speed = 10              # the server's speed for every case
    give_up_s = 20          # a fault with no further request within this long: gave_up

    [[case]]
    name = "cut_after_tool_use"
    scenario = "cut_after_tool_use.toml"
    fault = { kind = "cut_after_block", block = 1 }
    ending = "late_cut"     # how a cut ends on the wire (`toolturn.probe.endings`; default fin)
    late_cut_ms = 200       # late_cut only: the silence between the last event and the drop

Each case is checked when the suite is read: its scenario loads, its model answers the faulted
turn with a stream, and the fault finds the point it strikes (a block that exists, JSON to cut);
an ending other than `fin` needs a cut. The shipped suite is the package's own
(`PACKAGED_SUITE`, inside an installed wheel too).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

import toolturn
from toolturn.errors import UserError
from toolturn.model.model import MockModel
from toolturn.model.response import StreamResponse, Turn
from toolturn.model.tool_inputs import tool_inputs
from toolturn.probe.endings import CUT_KINDS, DEFAULT_LATE_CUT_MS, Ending
from toolturn.probe.faults import FaultPlan
from toolturn.scenario.loader import load_scenario
from toolturn.scenario.schema import Scenario

SUITE_FILE = "suite.toml"
# Found beside the code, not from the working directory: an installed wheel carries it too.
PACKAGED_SUITE = Path(toolturn.__file__).resolve().parent / "scenarios" / "probes"


class _CaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    scenario: str
    fault: dict[str, Any] = Field(default_factory=dict)
    ending: Ending = "fin"
    late_cut_ms: float | None = Field(default=None, ge=0, le=60_000)


class _SuiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    timeout_s: float = Field(default=90.0, gt=0, le=3600)
    speed: float = Field(default=10.0, gt=0, le=1e6)
    give_up_s: float = Field(default=20.0, gt=0, le=3600)
    case: list[_CaseConfig] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class ProbeCase:
    name: str
    scenario: Scenario
    scenario_file: Path
    checks: str  # the scenario's description: what the case checks
    fault: FaultPlan
    ending: Ending = "fin"
    late_cut_ms: float = DEFAULT_LATE_CUT_MS  # late_cut only


@dataclass(frozen=True, slots=True)
class Suite:
    folder: Path
    timeout_s: float
    speed: float
    give_up_s: float
    cases: tuple[ProbeCase, ...]


_PLAN = TypeAdapter(FaultPlan)


def load_suite(folder: Path) -> Suite:
    """The suite in `folder`; a UserError names the file and field of anything wrong."""
    path = Path(folder) / SUITE_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        config = _SuiteConfig.model_validate(data)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file (a probe suite is a folder with {SUITE_FILE})")\
            from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise UserError(f"{path}: {error}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UserError(f"{path}: {where}: {first['msg']}") from None
    names = [case.name for case in config.case]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: case names must be distinct")
    cases = tuple(_case(path, index, case) for index, case in enumerate(config.case))
    return Suite(Path(folder), config.timeout_s, config.speed, config.give_up_s, cases)


def _case(path: Path, index: int, case: _CaseConfig) -> ProbeCase:
    where = f"{path}: case[{index}] ({case.name})"
    try:
        plan = _PLAN.validate_python(case.fault)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UserError(f"{where}: fault.{field}: {first['msg']}") from None
    if case.ending != "fin" and plan.kind not in CUT_KINDS:
        raise UserError(f"{where}: ending {case.ending!r} needs a cut fault "
                        f"({', '.join(sorted(CUT_KINDS))}), not {plan.kind}")
    if case.late_cut_ms is not None and case.ending != "late_cut":
        raise UserError(f"{where}: late_cut_ms is for ending = \"late_cut\" only")
    scenario_file = path.parent / case.scenario
    scenario = load_scenario(scenario_file)
    _check_plan(where, scenario, plan)
    late = DEFAULT_LATE_CUT_MS if case.late_cut_ms is None else case.late_cut_ms
    return ProbeCase(case.name, scenario, scenario_file, scenario.description, plan,
                     case.ending, late)


def case_model(scenario: Scenario) -> MockModel:
    """The case's model, without the scenario's random faults (the plan is the fault)."""
    clean = scenario.model.model_copy(update={"faults": type(scenario.model.faults)()})
    return MockModel(clean, scenario.seed, tool_inputs(scenario.tool_specs))


def _check_plan(where: str, scenario: Scenario, plan: FaultPlan) -> None:
    model = case_model(scenario)
    turn = Turn(1, plan.turn, 1)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "probe"}]
    for _ in range(plan.turn):
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]
    body = {"model": model.name, "max_tokens": 32000, "messages": messages}
    response = model.respond(body, turn)
    if not isinstance(response, StreamResponse):
        raise UserError(f"{where}: the model does not stream an answer to turn {plan.turn}")
    try:
        plan(turn, response)
    except ValueError as error:
        raise UserError(f"{where}: fault {plan.kind}: {error}") from None
