"""Capacity search: the highest load at which every objective holds (`search`), the objectives
(`slo`), and the page that draws the answer (`page`). Above the engine, which it runs."""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = ["page", "search", "slo"]
