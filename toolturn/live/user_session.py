"""One session of a scenario run live: the simulated user's prompts, each run to its end by the
live driver (`toolturn.live.session.run_session`) on one loop, with the user's think time between.

    record = await run_user_session(client, loop, user, tools, origin_ns=unit_origin, speed=10)

The session's times are on the loop's clock (from `origin_ns`, times `speed`), the run's common
origin, so a closed or open load's sessions line up as the simulator's do. The result has what
`toolturn.engine.recorder` reads of a finished simulated session (its id, arrival, start and end,
loop and request logs), so a live session becomes the same rows as its simulated twin.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import anthropic

from toolturn.live.session import PermissionAnswers, run_session
from toolturn.live.tools import LiveTool
from toolturn.metrics.request_log import RequestLog
from toolturn.runtime.loop import ToolTurnLoop
from toolturn.user import SimulatedUser
from toolturn.wire.identity import SESSION_HEADER

NS_PER_S = 1_000_000_000


@dataclass(slots=True)
class LiveSession:
    """A live session, finished or stopped: the fields the recorder reads."""

    session_id: int
    arrival_ns: int
    loop: ToolTurnLoop
    start_ns: int | None = None
    end_ns: int | None = None
    requests: list[RequestLog] = field(default_factory=list)


async def run_user_session(
    client: anthropic.AsyncAnthropic,
    session: LiveSession,
    user: SimulatedUser,
    tools: Mapping[str, LiveTool],
    *,
    origin_ns: int,
    speed: float,
    permission_answers: PermissionAnswers,
    sent_at_header: bool = False,
) -> LiveSession:
    """Run `session` (its loop fresh) for `user` until its last prompt is answered; its fields are
    filled in as it goes, so a session cancelled midway keeps what it had done. `sent_at_header`:
    see `run_session` (for a server on this host)."""
    headers = {SESSION_HEADER: str(session.session_id)}
    session.start_ns = _now(origin_ns, speed)
    for prompt in range(user.prompt_count()):
        if prompt:
            await asyncio.sleep(user.think_time_ns() / speed / NS_PER_S)
        await run_session(
            client, session.loop, user.prompt_text(prompt), tools, headers=headers,
            origin_ns=origin_ns, speed=speed, user=user, permission_answers=permission_answers,
            turn_header=True, requests=session.requests, sent_at_header=sent_at_header,
        )
    session.end_ns = _now(origin_ns, speed)
    return session


def _now(origin_ns: int, speed: float) -> int:
    return round((time.monotonic_ns() - origin_ns) * speed)
