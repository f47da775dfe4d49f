"""The largest durations and counts a scenario may give, and a draw may take.

Simulated time is integer nanoseconds in int64 columns (292 years). A typo's `ms = 1e300`, an
arrival rate of 1e-30 per second or an uncapped lognormal with a large sigma would otherwise
reach past it: numpy turns such floats into garbage integers without a word, Python's `round`
raises on an infinite one, and a count of 1e250 tokens is generated until memory runs out. So
the scenario schema refuses values beyond these bounds (naming the field), and an unbounded
distribution's draws are capped at them: a cap no real latency, pause or size comes near.
"""

from __future__ import annotations

# One duration (a latency, a tool call, a think time, a backoff): about 11.6 days. Thousands of
# them end to end still fit in int64 nanoseconds.
MAX_DURATION_MS = 1e9
# A point or span of a run's whole simulated time (a trace's arrivals, a horizon): about
# 3.2 years.
MAX_SPAN_MS = 1e11
# The slowest rate per second a scenario may give: one event per `MAX_DURATION_MS` on average.
MIN_RATE_PER_S = 1000 / MAX_DURATION_MS
# The shortest keep-alive ping interval: a ping a nanosecond through a long stall would be
# billions of events.
MIN_PING_INTERVAL_MS = 1.0
# Attachments per second of tool time, of one kind: every millisecond. Each is a message the
# runtime appends; a rate of 1e300 would make one per nanosecond until the tools end.
MAX_ATTACHMENT_RATE_PER_S = 1000.0
# Attachments of one turn: past this many the user sends no more until the turn ends. At the
# largest rate through a tool call of `MAX_DURATION_MS` they would be a billion messages.
MAX_ATTACHMENTS_PER_TURN = 10_000
# One count (tokens of a block, tool calls of a response, prompts of a session, result
# characters, the values and characters of an input generated from a tool's schema).
MAX_COUNT = 1_000_000
# Progress events of one tool call. A call of `MAX_DURATION_MS` reporting every millisecond
# would be a billion events; past this many a call runs on without reporting.
MAX_PROGRESS_PER_CALL = 10_000
# The shortest horizon: simulated time is integer nanoseconds, and a shorter one rounds to 0,
# a run that ends before it starts.
MIN_HORIZON_S = 1e-9
# The largest seed: results record it in an int64 column.
MAX_SEED = 2**63 - 1
# Nesting of a JSON value of a scenario (a tool's input schema, an example, a scripted input),
# counting tables and arrays: the schema checks recurse through it several Python frames a level.
MAX_JSON_DEPTH = 64
