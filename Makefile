# Every target makes or refreshes the local virtual environment from pyproject.toml first,
# so a fresh clone needs nothing but Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test bench bench-gate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/sim run scenarios/default.toml

test: $(STAMP)
	$(BIN)/python -m pytest

# The benchmarks alone, with the in-run ratios against their references (the SDK, the bare runtime).
bench: $(STAMP)
	$(BIN)/python -m pytest bench --benchmark-only -o python_files='bench_*.py'

# The wall-clock gate: this tree against BASE (default HEAD), both measured now on this machine.
BASE ?= HEAD
bench-gate: $(STAMP)
	$(BIN)/python bench/gate.py --base $(BASE)

clean:
	rm -rf $(VENV) results/run-*
