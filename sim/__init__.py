"""Offline simulator and benchmark harness for the streaming tool turn of LLM agents."""

__version__ = "0.1.0"
