"""Sans-I/O stream accumulators for the OpenAI protocols: `responses` (the Responses API) and
`chat` (Chat Completions), beside `toolturn.runtime.accumulator` for the Messages API. Each takes
the JSON of every SSE ``data:`` line as a dict and says when a tool call becomes known complete,
so an executor can start it early; `object_watch` finds when streamed arguments first parse."""
