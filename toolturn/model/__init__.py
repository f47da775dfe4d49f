"""The scripted mock model: timed Messages API streams with configurable latency and faults."""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = [
    "api_errors", "config", "endpoint", "faults", "input_tokens", "latency", "model", "response",
    "tool_inputs",
]
