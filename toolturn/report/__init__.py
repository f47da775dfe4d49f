"""What a run folder shows people: figures and an HTML page (``writer``), and the comparison of
two runs (``compare``). Importing this package loads no plotting library."""

# The modules the rest of toolturn imports (tests/house/test_package_api.py holds every import from
# outside the package to them); the others are its own.
__all__ = ["compare", "compare_page", "html", "interactive", "plots", "probe_page", "recording",
           "series", "writer"]
