"""Experiments: the points of a scenario's `[experiment]` (a grid or a list of values over dotted
paths, with replications), each a complete scenario with its own seed."""
