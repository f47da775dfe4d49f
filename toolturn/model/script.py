"""What one response says: its blocks, from an explicit script or drawn from distributions.

A plan is content only (text tokens, thinking tokens, tool names and inputs); ids, chunking,
timing and faults come later. Generated text is planned as a number of tokens; its words are
drawn when it is chunked (`toolturn.model.chunking.generated_chunks`).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from toolturn.model.chunking import split_tokens
from toolturn.model.config import (
    ExplicitScript,
    GeneratedScript,
    ScriptedResponse,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)


class ToolInputs(Protocol):
    """The model's view of one tool of the catalogue: inputs to call it with."""

    def sample_input(self, rng: np.random.Generator) -> dict[str, Any]:
        """An input that satisfies the tool's schema."""
        ...

    def sample_invalid_input(self, rng: np.random.Generator) -> dict[str, Any] | None:
        """An input that fails the tool's schema; None if the schema accepts every object."""
        ...


@dataclass(slots=True)
class PlannedBlock:
    type: str  # "text" | "thinking" | "tool_use"
    tokens: list[str] = field(default_factory=list)  # text or thinking, joined is the content
    generated: int = 0  # or: this many tokens of generated words
    signature: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)


class ExplicitPlanner:
    """Turn `i` answers with response `i` of the script (the last once they run out)."""

    def __init__(self, script: ExplicitScript) -> None:
        self._script = script
        # Whether any call's run is scripted (a replay): only then are calls remembered.
        self.scripts_runs = any(
            isinstance(block, ToolUseBlock) and block.duration_ms is not None
            for response in script.responses
            for block in response.blocks
        )
        # Tokenised once: the same response is replayed by every session.
        self._responses = [self._template(response) for response in script.responses]

    @staticmethod
    def _template(response: ScriptedResponse) -> list[PlannedBlock]:
        blocks = []
        for block in response.blocks:
            if isinstance(block, TextBlock):
                blocks.append(PlannedBlock("text", tokens=split_tokens(block.text)))
            elif isinstance(block, ThinkingBlock):
                blocks.append(
                    PlannedBlock(
                        "thinking", tokens=split_tokens(block.thinking), signature=block.signature
                    )
                )
            elif isinstance(block, ToolUseBlock):
                blocks.append(PlannedBlock("tool_use", name=block.name, input=block.input))
        return blocks

    def scripted_calls(self, turn_index: int) -> list[ToolUseBlock]:
        """The tool_use blocks turn `turn_index` answers with, in order (the planned calls')."""
        response = self._script.responses[min(turn_index, len(self._script.responses) - 1)]
        return [block for block in response.blocks if isinstance(block, ToolUseBlock)]

    def scripted_cut(self, turn_index: int, attempt: int) -> tuple[str, float] | None:
        """(cut fault, silence ms) when the script cuts this attempt of turn `turn_index`: the
        first attempt of a response that names a cut, never a repeat of the last response once
        the script runs out (a cut repeated every turn would never let a chain end). Attempts
        count from 1 (`SendRequest.attempt`); a caller that does not count them passes 0."""
        if attempt > 1 or turn_index >= len(self._script.responses):
            return None
        response = self._script.responses[turn_index]
        return None if response.cut is None else (response.cut, response.cut_silence_ms)

    def plan(self, turn_index: int, rng: np.random.Generator) -> list[PlannedBlock]:
        template = self._responses[min(turn_index, len(self._responses) - 1)]
        # Copies: faults rewrite blocks, the template must stay as scripted.
        return [
            PlannedBlock(b.type, b.tokens, 0, b.signature, b.name, dict(b.input)) for b in template
        ]


class GeneratedPlanner:
    """Draws, in this order: whether the turn ends the task, thinking length, text length, the
    number of tool calls, each call's tool, each call's input."""

    def __init__(self, script: GeneratedScript, tools: Mapping[str, ToolInputs]) -> None:
        self._script = script
        self._tools = tools
        mix = script.tool_mix or {name: 1.0 for name in sorted(tools)}
        unknown = sorted(set(mix) - set(tools))
        if unknown:
            raise ValueError(f"script.tool_mix names tools not in the catalogue: {unknown}")
        if not mix and script.end_probability < 1:
            raise ValueError("the generated script calls tools but the catalogue has none")
        self._names = sorted(mix)
        # Cumulative weights: a uniform draw scaled to the total picks a tool by bisection,
        # several times faster than Generator.choice with probabilities.
        self._cumulative = list(itertools.accumulate(float(mix[name]) for name in self._names))

    def plan(self, turn_index: int, rng: np.random.Generator) -> list[PlannedBlock]:
        script = self._script
        ends = rng.random() < script.end_probability or turn_index >= script.max_turns - 1
        thinking = script.thinking_tokens.sample(rng)
        blocks = []
        if thinking > 0:
            blocks.append(PlannedBlock("thinking", generated=thinking))
        if ends:
            final = script.final_text_tokens.sample(rng)
            blocks.append(PlannedBlock("text", generated=final))
            return blocks
        text = script.text_tokens.sample(rng)
        if text > 0:
            blocks.append(PlannedBlock("text", generated=text))
        calls = script.tool_calls.sample(rng)
        total, last = self._cumulative[-1], len(self._names) - 1
        for draw in rng.random(calls).tolist():
            name = self._names[min(bisect.bisect_right(self._cumulative, draw * total), last)]
            blocks.append(
                PlannedBlock("tool_use", name=name, input=self._tools[name].sample_input(rng))
            )
        return blocks
