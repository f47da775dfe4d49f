"""The scripted mock model: timed Messages API streams with configurable latency and faults."""
