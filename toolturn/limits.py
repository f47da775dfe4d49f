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
# The endpoint's latency_growth: at full utilisation every latency is at most 101 times its idle
# value. A growth of 1e7 made a response last months (and a keep-alive ping every 10 s of it),
# one of 1e300 an infinite latency.
MAX_LATENCY_GROWTH = 100.0
# Keep-alive pings of one stream: past this many the connection stays silent until its next event.
# A 1 ms ping interval through a first token of `MAX_DURATION_MS` would be a billion events.
MAX_PINGS_PER_STREAM = 10_000
# The max_tokens of every request the simulated runtime sends (the loop's default): the model
# stops a response there, which bounds how long one can last.
REQUEST_MAX_TOKENS = 4096
# The longest a session of a scenario could last, every draw at its largest: about 158 years,
# within int64 nanoseconds (292 years) with room for arrivals and queueing.
# The longest response is held to `MAX_SPAN_MS` (its times are summed in int64 arrays).
MAX_SESSION_MS = 5e12
# Retries of one request: the SDK's default is 2; a budget of 1e18 at no backoff never ends.
MAX_RETRIES = 100
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
