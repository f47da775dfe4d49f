"""The references of docs/reference/, generated from the code: the scenario keys from the
pydantic schema (`scenario_keys`), the run tables' columns from their specs (`tables`), the
commands from argparse (`commands`). `python -m toolturn.reference` (or `make docs`) writes them;
`--check` says which committed page is stale."""

# Nothing of it is imported by the rest of toolturn: `python -m toolturn.reference` runs it.
__all__: list[str] = []
