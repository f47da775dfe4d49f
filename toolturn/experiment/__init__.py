"""Experiments: the points of a scenario's `[experiment]` (a grid or a list of values over dotted
paths, with replications), each a complete scenario with its own seed."""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = ["points"]
