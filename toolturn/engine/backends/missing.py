"""A backend whose extra is not installed: one line saying what to install."""

from __future__ import annotations

from toolturn.errors import UserError

__all__ = ["BackendMissing", "missing"]


class BackendMissing(UserError):
    """A backend whose extra is not installed."""


def missing(backend: str, module: str) -> BackendMissing:
    return BackendMissing(
        f"--backend {backend}: {module} is not installed "
        f"(install it with: pip install 'toolturn-sim[{backend}]')"
    )
