"""The runtime under test, built from a scenario: one `ToolTurnLoop` per session.

Everything the loop is told comes from the scenario: the tools' definitions, the executor policy,
the recovery profile, the model and its fallback, retries (the jitter drawn per session, turn and
retry from a keyed stream, so runs are reproducible), the turn limit and strict mode. Permission is
the tool's own rule: `allow` and `deny` are answered at once, `ask` goes to the simulated user.

Retries: the `default` profile takes the scenario's `[runtime.retries]`; a profile with retry
settings of its own (`claude-code`) takes those, its jitter the same keyed draw scaled to the
profile's `retry_jitter` (so both profiles wait on common random numbers).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from toolturn.limits import REQUEST_MAX_TOKENS
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.runtime.permission import PermissionDecision
from toolturn.runtime.recovery import profile_of
from toolturn.runtime.retry import RetrySettings
from toolturn.runtime.tooldef import ToolDefinition
from toolturn.runtime.validation import InputValidation
from toolturn.scenario.schema import Scenario

# Speed, marked: the input validation (`toolturn.runtime.validation`) of each set of tools, owned
# here for the whole process, so that its simulations (levels, policies, profiles, experiment
# points, a benchmark's repetitions) compile each schema once and share their verdicts. A validation
# holds nothing else: no result depends on who shares it. Bounded, in case a process simulates
# many different tool sets.
_VALIDATIONS: dict[str, InputValidation] = {}
_VALIDATIONS_KEPT = 64


def validation_for(tools: Sequence[ToolDefinition]) -> InputValidation:
    """The process's `InputValidation` of these tools (by name and schema)."""
    key = json.dumps([[tool.name, tool.input_schema] for tool in tools], sort_keys=True)
    validation = _VALIDATIONS.get(key)
    if validation is None:
        if len(_VALIDATIONS) >= _VALIDATIONS_KEPT:
            _VALIDATIONS.clear()
        validation = _VALIDATIONS[key] = InputValidation(tools)
    return validation


class LoopFactory:
    """Builds the loops of one simulation (one scenario, one policy, one profile, one model).

    `loop_class` is the class built: a subclass may observe the loop's inputs (the simulator
    benchmark records them to replay the same inputs into a bare runtime).
    """

    loop_class: type[ToolTurnLoop] = ToolTurnLoop

    def __init__(
        self, scenario: Scenario, policy: str, model_name: str, fallback_name: str | None,
        *, profile: str = "default",
    ) -> None:
        self._scenario = scenario
        self._policy = policy
        self._profile = profile_of(profile)
        self._model = model_name
        runtime = scenario.runtime
        self._fallback = fallback_name if runtime.fallback_after_overloads is not None else None
        self._fallback_after = runtime.fallback_after_overloads or 1
        self._tools = scenario.tool_definitions()
        self._validation = validation_for(self._tools)
        self._decisions = {
            spec.name: PermissionDecision(spec.permission.mode) for spec in scenario.tool_specs
        }

    def _permission(
        self, tool: ToolDefinition, tool_input: Mapping[str, Any]
    ) -> PermissionDecision:
        return self._decisions[tool.name]

    def new_loop(
        self, jitter: Callable[[int], float], unit_jitter: Callable[[int], float] | None = None
    ) -> ToolTurnLoop:
        """A fresh loop; `jitter(retry)` is the fraction of that retry's backoff to take off
        under the scenario's retries, `unit_jitter(retry)` the same draw in [0, 1) (for a
        profile with retry settings of its own)."""
        own = self._profile.retry
        if own is not None and unit_jitter is not None:
            scale = self._profile.retry_jitter
            settings = replace(own, jitter=lambda retry: unit_jitter(retry) * scale)
        else:
            retries = self._scenario.runtime.retries
            settings = RetrySettings(
                max_retries=retries.max_retries,
                initial_delay_ns=retries.initial_backoff_ns,
                max_delay_ns=retries.max_backoff_ns,
                jitter=jitter,
            )
        return self.loop_class(
            self._tools,
            model=self._model,
            policy=self._policy,
            fallback_model=self._fallback,
            fallback_after=self._fallback_after,
            max_turns=self._scenario.runtime.max_turns_per_prompt,
            max_tokens=REQUEST_MAX_TOKENS,
            retry=settings,
            strict=self._scenario.runtime.strict,
            permission=self._permission,
            validation=self._validation,
            profile=self._profile,
        )
