"""The scenario's simulated tools, seen by the mock model as sources of inputs to call them with."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolturn.tools.inputs import sample_input, sample_invalid_input
from toolturn.tools.spec import ToolSpec


@dataclass(frozen=True, slots=True)
class SpecInputs:
    """Valid and schema-breaking inputs of one `ToolSpec` (satisfies `script.ToolInputs`)."""

    spec: ToolSpec

    def sample_input(self, rng: np.random.Generator) -> dict[str, Any]:
        return sample_input(self.spec, rng)

    def sample_invalid_input(self, rng: np.random.Generator) -> dict[str, Any] | None:
        return sample_invalid_input(self.spec, rng)


def tool_inputs(specs: Iterable[ToolSpec]) -> dict[str, SpecInputs]:
    """The catalogue by name, as `MockModel(tools=...)` takes it."""
    return {spec.name: SpecInputs(spec) for spec in specs}
