"""A session's tool calls: the loop's `StartTool` / `CancelTool` start a tool run
(`toolturn.engine.tool_run`) / cancel it, and its `AskPermission` is answered by the simulated user
after the plan's decision delay (`toolturn.user.permission_answer`).

A call's plan is the model's script's when it scripts the run (a replay), else drawn; a plan drawn
for a permission ask is kept for the call's start.
"""

from __future__ import annotations

from typing import Any

from toolturn.distributions import ms_to_ns
from toolturn.engine.session_state import SessionState, acts_strictly, strict_stops
from toolturn.engine.tool_run import ToolRun
from toolturn.runtime.commands import AskPermission, StartTool
from toolturn.runtime.outcomes import ToolOutcome
from toolturn.tools.execution import CallPlan, scripted_plan
from toolturn.user import permission_answer


class ToolCalls(SessionState):
    """The tool calls of a session (a part of `toolturn.engine.session.Session`)."""

    # The runs under way, and the plans drawn for a permission ask, by tool_use id.
    _tools: dict[str, ToolRun]
    _plans: dict[str, CallPlan]

    def _cancel_tool(self, tool_use_id: str) -> None:
        run = self._tools.pop(tool_use_id, None)
        if run is not None:
            run.cancel()

    def _plan(self, tool_use_id: str, name: str) -> CallPlan:
        plan = self._plans.pop(tool_use_id, None)
        return plan if plan is not None else self.call_plan(name, tool_use_id)

    def call_plan(self, name: str, tool_use_id: str) -> CallPlan:
        """The call's plan: scripted by the model's script when it scripts the run (a replay),
        else drawn."""
        scripted = self.context.model.scripted_call(self.session_id, tool_use_id)
        if scripted is not None and scripted.duration_ms is not None:
            return scripted_plan(ms_to_ns(scripted.duration_ms), scripted.result, scripted.is_error)
        return self.draws.tool_plan(name, tool_use_id)

    def _start_tool(self, command: StartTool) -> None:
        turn = self.loop.turn
        if self._tools_turn != turn:
            self._tools_turn = turn
            self._tools_phase_started(turn)
        plan = self._plan(command.tool_use_id, command.name)
        self._tools[command.tool_use_id] = ToolRun(
            self.env, command.tool_use_id, command.name, plan, self._progress, self._finished
        )

    @strict_stops
    def _progress(self, tool_use_id: str, progress: Any) -> None:
        self._dispatch(self.loop.tool_progress(tool_use_id, progress, self.env.now))

    @acts_strictly
    def _finished(self, tool_use_id: str, outcome: ToolOutcome, text: str) -> None:
        self._tools.pop(tool_use_id, None)
        self._dispatch(self.loop.tool_finished(tool_use_id, outcome, text, self.env.now))

    def _ask(self, command: AskPermission) -> None:
        plan = self.call_plan(command.name, command.tool_use_id)
        self._plans[command.tool_use_id] = plan
        answer = permission_answer(plan)
        self.env.call_at(
            self.env.now + answer.delay_ns, self._decided, command.tool_use_id, answer.allowed
        )

    @acts_strictly
    def _decided(self, tool_use_id: str, allowed: bool) -> None:
        self._dispatch(self.loop.permission_decided(tool_use_id, allowed, self.env.now))
