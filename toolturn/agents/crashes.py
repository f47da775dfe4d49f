"""Session crashes for an agent (`[session.faults] crash`): the draws the simulator makes
(`toolturn.engine.session_faults` rule 1), played on a user's runtime as a real crash is.

1. Each turn draws, when its first streamed answer is admitted, from the streams the simulator
   keys by session and turn (`session_crash`), whether the process dies during it and where: a
   point uniform from that admission to the stream's end plus the longest of its calls' planned
   runs. Nothing happens if the turn is over by then, or the prompt already had
   `MAX_RESUMES_PER_PROMPT` crashes.
2. The crash cancels the agent's task (all its work dies with it), and after `restart_delay`
   (keyed `session_restart`) `agent(session)` is called again for the rest of the session: its
   prompts begin with `CONTINUE_TEXT`, as `--continue` does, and a new process knows only what
   it persisted (`toolturn.agents.arm` plays this).
3. Rewinds and compaction are not played: they are the runtime's own choices (a user's `/rewind`
   goes through its UI, its compaction is its code), so a foreign runtime decides them itself
   and the tables count what it did as the mock saw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolturn.engine.session_faults import CONTINUE_TEXT, CRASH, planned_ns
from toolturn.randomness import stream
from toolturn.scenario.schema import Scenario
from toolturn.tools.plans import call_plan

__all__ = ["CONTINUE_TEXT", "CrashDraws"]


@dataclass(frozen=True, slots=True)
class CrashDraws:
    """The crash draws of one session (rule 1) and its restart delays (rule 2)."""

    scenario: Scenario
    session_id: int

    @property
    def on(self) -> bool:
        return self.scenario.session.faults.crash > 0

    def crash_at(self, turn: int, events: list[dict[str, Any]], end_ns: int, now_ns: int
                 ) -> int | None:
        """When turn `turn` (from 1), whose first stream (`events`, ending `end_ns` after
        admission) was admitted at `now_ns`, crashes; None if it does not."""
        scenario, seed = self.scenario, self.scenario.seed
        specs = {spec.name: spec for spec in scenario.tool_specs}
        longest = max((
            planned_ns(call_plan(specs[block["name"]], seed, self.session_id, block["id"]))
            for block in (event["content_block"] for event in events
                          if event["type"] == "content_block_start")
            if block.get("type") == "tool_use" and block.get("name") in specs
        ), default=0)
        rng = stream(seed, f"session_{CRASH}", self.session_id, turn)
        fires, point = rng.random() < scenario.session.faults.crash, rng.random()
        return now_ns + int(point * (max(end_ns, 0) + longest)) if fires else None

    def restart_delay_ns(self, turn: int) -> int:
        rng = stream(self.scenario.seed, "session_restart", self.session_id, turn)
        return self.scenario.session.faults.restart_delay.sample_ns(rng)
