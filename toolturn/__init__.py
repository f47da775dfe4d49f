"""Offline simulator and benchmark harness for the streaming tool turn of LLM agents.

Dependency order. Each line below names packages and modules of `toolturn`; each may import what the
lines above it name, and what comes before it on its own line, never what comes after
(tests/house/test_layers.py holds every import of `toolturn` to it):

    runtime                         the sans-I/O core: imports nothing else of toolturn
    limits errors randomness        shared vocabulary: bounds, user errors, keyed draws,
      distributions counts          durations and counts, errors located at a field, the
      field_problems fields         probability fields the sections share, input files,
      input_files termination       Ctrl-C handling, the C allocator's mmap threshold
      malloc
    metrics report                  the tables, their run folders, summaries; the page
    tools                           simulated tools, described by data
    model                           the scripted mock model (its tool calls from the tools' specs)
    scenario experiment             the scenario file, which composes the model's and the tools'
                                    configuration; the points of an experiment
    user                            the simulated user (prompts, think time, interrupts, ...)
    wire live                       the HTTP mock server; the runtime live over the SDK (never
                                    the engine)
    engine progress                 the simpy engine; its progress display
    capacity                        capacity search against objectives (runs the engine)
    probe fidelity traces           real agents under toolturn serve; live runs beside their
                                    simulated twins; agent session logs in
    agents                          a user's asyncio agent run in virtual time (--agent)
    options commands cli __main__   options' values; the subcommands, one module each; the
                                    command line
    reference                       the references of docs/reference/, made from the schema,
                                    the column specs and the commands' parsers

So data flows one way, scenario -> model and tools -> engine -> runtime -> metrics, and the
runtime stays at the bottom: the vocabulary a scenario is written in (counts, field problems)
lives below the tools and the model that use it, not in `scenario`, which sits above them.
"""

__version__ = "0.1.0"

# The packages and modules above are imported by their own names (toolturn.cli, ...).
__all__ = ["__version__"]
