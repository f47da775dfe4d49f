"""Agent session logs in: readers, stats, calibrated scenarios, replays through the simulator.

`toolturn.traces.sources.read_logs` reads Claude Code session logs and Messages API request logs
into `toolturn.traces.logged.LoggedSession`s; `stats`, `calibrate` and `replay` work on those.
"""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = ["calibrate", "replay", "sources", "stats", "tables"]
