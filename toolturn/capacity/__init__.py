"""Capacity search: the highest load at which every objective holds (`search`), the objectives
(`slo`), and the page that draws the answer (`page`). Above the engine, which it runs."""
