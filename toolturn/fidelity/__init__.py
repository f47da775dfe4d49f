"""Is the simulator true? A scenario run live (the same loops, user and draws over the official
SDK against `toolturn serve`, in real time), its turns paired with their simulated twins, and the
error per metric and per hop."""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = ["live_run", "overhead", "pairing", "report", "saturation", "settings"]
