"""Subcommands of the `toolturn` console script, one module each.

Every module here defines ``add_parser(subparsers)``, which registers its subcommand and sets
``func`` (taking the parsed ``argparse.Namespace`` and returning an exit status) as a default.
The CLI discovers the modules itself so that adding a command never edits a shared file.
"""

# No module of it is imported by name: the CLI finds them (`toolturn.cli`), each by its
# `add_parser`.
__all__: list[str] = []
