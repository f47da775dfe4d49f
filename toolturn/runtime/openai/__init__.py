"""Sans-I/O stream accumulators for the OpenAI protocols: `responses` (the Responses API) and
`chat` (Chat Completions), beside `toolturn.runtime.accumulator` for the Messages API. Each takes
the JSON of every SSE ``data:`` line as a dict and says when a tool call becomes known complete,
so an executor can start it early; `object_watch` finds when streamed arguments first parse."""

# The modules the rest may import; `shared` is these modules' own helpers.
__all__ = [
    "chat",
    "chat_pairing",
    "chat_repair",
    "merge",
    "object_watch",
    "responses",
    "responses_pairing",
    "responses_repair",
]
