"""What tests share: scripted streams, scenarios, models, servers, transcripts, tables.

Tests import their shared helpers from here and never from one another; shared fixtures live in
tests/conftest.py.
"""
