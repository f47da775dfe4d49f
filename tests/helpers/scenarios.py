"""Scenario texts shared by tests of several commands."""

from __future__ import annotations

TINY = """
name = "tiny"
seed = 9
[load]
mode = "closed"
sessions = 3
concurrency = 2
[session]
think_time = { kind = "fixed", ms = 100 }
[runtime]
policies = ["streaming", "serial"]
[model.script]
kind = "generated"
end_probability = 0.0
max_turns = 3  # two turns of tool calls, then the answer: whatever the draws
tool_mix = { Read = 1, Grep = 1 }
"""
MINIMAL = """
name = "t"
seed = 1
[load]
mode = "closed"
sessions = 4
concurrency = 2
"""
