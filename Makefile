# Two entry points for a fresh machine (see README): `make demo` and `make test`.
# Each creates .venv, installs the project with what it needs, and runs.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall when the project metadata changes.
$(VENV)/.installed-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# torch first, pinned, so that opacus (in the compare extra) and the torch backend (extra torch) find the CPU build
# and do not pull a CUDA one.
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[test,compare,torch]'
	touch $@

demo: $(VENV)/.installed-base
	$(BIN)/dpref claims list
	$(BIN)/dpref check

# The suite runs in TEST_WORKERS processes (pytest-xdist): CI has 2 cores and a 20-minute limit.
TEST_WORKERS ?= 2

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/bench_estimators.py
	$(BIN)/python benchmarks/bench_accounting.py
	$(BIN)/python benchmarks/bench_dpzero.py

docs: $(VENV)/.installed-base
	$(BIN)/python -m proofs_checks.catalogue

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
